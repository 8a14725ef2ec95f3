def load(path):
    return open(path).read()

def main():
    try:
        load("/nonexistent/config.yaml")
    except FileNotFoundError as exc:
        raise RuntimeError("could not load the training config") from exc

main()
