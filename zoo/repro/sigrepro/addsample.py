"""Append a sample (exact line(s) taken from a real log file) to a signature TOML."""
import sys, json
def esc(s):  # TOML basic string
    return json.dumps(s, ensure_ascii=False)
def add(sig_path, kind, log_path, needle, source, facts=None, nth=0):
    lines = [l.rstrip("\n") for l in open(log_path, encoding="utf-8", errors="replace")]
    hits = [l for l in lines if needle in l]
    text = hits[nth]
    block = f"\n[[samples.{kind}]]\ntext = {esc(text)}\nsource = {esc(source)}\n"
    if facts:
        block += "facts = { " + ", ".join(f"{k} = {esc(v)}" for k, v in facts.items()) + " }\n"
    s = open(sig_path, encoding="utf-8").read()
    if text in s:
        print("already there:", sig_path); return
    open(sig_path, "a", encoding="utf-8").write(block)
    print("added", kind, "to", sig_path, ":", text[:100])
