"""Drive the real language server over stdio (raw JSON-RPC framing) and run the P2P probe
through it: `workspace/executeCommand mltriage.runProbe`. Prints the server's answer as JSON.

    python bench/gpu-checks/lsp_probe_client.py > answer.json
"""

import json
import subprocess
import sys
import time


def send(proc, message):
    body = json.dumps(message).encode()
    proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    proc.stdin.flush()


def receive(proc):
    length = 0
    while True:
        line = proc.stdout.readline()
        if not line:
            raise EOFError("server closed stdout")
        if line in (b"\r\n", b"\n"):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(proc.stdout.read(length))


def request(proc, rid, method, params):
    send(proc, {"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    while True:
        msg = receive(proc)
        if msg.get("id") == rid and "method" not in msg:
            return msg
        if "method" in msg and "id" in msg:  # a server->client request (e.g. progress): answer it
            send(proc, {"jsonrpc": "2.0", "id": msg["id"], "result": None})


def main():
    proc = subprocess.Popen([sys.executable, "-m", "mltriage.server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    request(proc, 1, "initialize", {"processId": None, "rootUri": None, "capabilities": {}})
    send(proc, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
    t = time.perf_counter()
    answer = request(proc, 2, "workspace/executeCommand", {"command": "mltriage.runProbe", "arguments": [{"refresh": True}]})
    wall = time.perf_counter() - t
    request(proc, 3, "shutdown", None)
    send(proc, {"jsonrpc": "2.0", "method": "exit"})
    proc.wait(timeout=30)
    print(json.dumps({"wall_s": round(wall, 2), "answer": answer}, indent=1))


if __name__ == "__main__":
    main()
