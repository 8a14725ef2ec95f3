"""Worst cases for one input of at most 10 MB: CLI time (goal < 2 s) and, while the language server
diagnoses that input as an open document, how long a hover on another document takes (goal < 200 ms).

Inputs are built to be hard rather than realistic: 64 KB lines made of every signature trigger of
the library, one 10 MB line, millions of tiny lines, a 100,000-frame traceback, 100,000 ranks'
prefixes, NAME=value dumps, a pasted P2P matrix with long digit rows, a huge torchrun summary, NUL
padding. The CLI is run as a subprocess (`python -m mltriage diagnose FILE --json`, start-up
included); the server over real stdio with raw JSON-RPC, one hover every 20 ms for as long as the
diagnosis runs: the first hover after the didOpen apart (it waits for that message's JSON to be
parsed), then the median and maximum of the others. `--profile` adds the top functions (cProfile,
in-process) for inputs over a goal.

    python bench/lsp/bench_worst_case.py [--only NAME ...] [--profile] [--no-server]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "server"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_lsp import Server  # noqa: E402  (raw JSON-RPC over stdio)

MB = 1_000_000
SIZE = 10 * MB
CLI_GOAL_S, HOVER_GOAL_S = 2.0, 0.200
SMALL_LOG = REPO / "tests" / "lsp" / "data" / "logs" / "torchrun_sigkill.log"


def _fill(unit: str, size: int = SIZE) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def _lines(line: str, size: int = SIZE) -> str:
    return _fill(line + "\n", size)


def triggers() -> list[str]:
    from mltriage.library import load_library

    return sorted(load_library().trigger_index)


def inputs() -> dict[str, str]:
    every_trigger = " ".join(triggers()) + " "
    line_64k = _fill(every_trigger, 65_536)
    frames = "".join(f'  File "/opt/venv/lib/python3.11/site-packages/torch/nn/modules/module.py", line {n}, in _call_impl\n'
                     f"    return forward_call(*args, **kwargs)\n" for n in range(1, 60_000))
    ranks = "".join(f"[rank{r}]: RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error\n"
                    f"[rank{r}]:[E ProcessGroupNCCL.cpp:523] Watchdog caught collective operation timeout\n" for r in range(60_000))
    # the same failure with a different SeqNum on every rank: no two ranks fold into one finding
    # (PyTorch 2.x ProcessGroupNCCL.cpp's watchdog line, as in torch-nccl-watchdog-timeout's samples)
    distinct = "".join(f"[rank{r}]:[E1130 09:41:07.412904512 ProcessGroupNCCL.cpp:688] [Rank {r}] Watchdog caught collective "
                       f"operation timeout: WorkNCCL(SeqNum={1000 + r}, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
                       f"Timeout(ms)=600000) ran for 600044 milliseconds before timing out.\n" for r in range(60_000))
    summary = ("torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n" + "=" * 60 + "\nFailures:\n"
               + "".join(f"[{r}]:\n  time      : 2024-01-01_00:00:00\n  host      : node{r}\n  rank      : {r} (local_rank: {r % 8})\n"
                         f"  exitcode  : -9 (pid: {10_000 + r})\n  error_file: <N/A>\n  traceback : Signal 9 (SIGKILL) received by PID {10_000 + r}\n"
                         for r in range(40_000)))
    return {
        "64KB-lines-of-every-trigger": _lines(line_64k),
        "one-10MB-line-of-every-trigger": _fill(every_trigger),
        "5M-tiny-lines": _lines("x"),
        "2M-short-error-lines": _lines("Error: x"),
        "deep-traceback": ("Traceback (most recent call last):\n" + frames)[: SIZE - 40] + "\nRuntimeError: CUDA error: out of memory\n",
        "100k-ranks-prefixes": ranks[:SIZE],
        "ranks-with-distinct-facts": distinct[:SIZE],
        "64KB-lines-of-NAME=value": _lines(_fill("NCCL_SOCKET_IFNAME=eth0 WANDB_API_KEY=abcdef0123456789 ", 65_536)),
        "64KB-lines-of-frames": _lines(_fill('File "a.py", line 1, in all_reduce ', 65_536)),
        "p2p-matrix-long-rows": "P2P Connectivity Matrix\n" + _lines("     0 " + " ".join("1" * 28 for _ in range(2000))),
        "torchrun-summary-40k-ranks": summary[:SIZE],
        "NUL-padded-tail": _lines("[rank0]: RuntimeError: CUDA error: an illegal memory access was encountered", 2 * MB) + "\0" * (8 * MB),
        "64KB-lines-of-brackets": _lines(_fill("[" * 7 + "rank1]: deepspeed launcher exit code ", 65_536)),
    }


def cli_time(path: Path, env: dict[str, str]) -> tuple[float, int, str]:
    started = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "mltriage", "diagnose", str(path), "--json"], capture_output=True, env=env, timeout=600)
    elapsed = time.perf_counter() - started
    status = ""
    try:
        document = json.loads(run.stdout)
        status = f"{document['status']}, {len(document['findings'])} findings"
    except (ValueError, KeyError):
        status = run.stderr.decode(errors="replace").strip().splitlines()[-1][:100] if run.stderr else "no output"
    return elapsed, run.returncode, status


def server_busy_hovers(text: str, cache_dir: str) -> tuple[float, list[float], int]:
    """(diagnosis time, hover latencies while it ran, findings) for ``text`` opened in the server.

    The first hover waits for the server to parse the didOpen's JSON; a hover during which the
    diagnostics arrived is left out (it measures this client reading them, not the server)."""
    server = Server(cache_dir)
    server.request("initialize", {"processId": os.getpid(), "capabilities": {}, "rootUri": None})
    server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    small_uri = SMALL_LOG.as_uri()
    server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": small_uri, "languageId": "log", "version": 1, "text": SMALL_LOG.read_text()}}})
    small = server.wait_for_diagnostics(small_uri)
    position = small[0]["range"]["start"] if small else {"line": 0, "character": 0}
    big_uri = Path(tempfile.gettempdir(), "mltriage-worst-case.log").as_uri()
    started = time.perf_counter()
    server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": big_uri, "languageId": "log", "version": 1, "text": text}}})
    latencies = []
    while big_uri not in server.published:
        asked = time.perf_counter()
        answer = server.request("textDocument/hover", {"textDocument": {"uri": small_uri}, "position": position})
        if big_uri not in server.published:
            latencies.append(time.perf_counter() - asked)
        assert answer.get("result"), answer
        time.sleep(0.02)
    elapsed = time.perf_counter() - started
    findings = len(server.published[big_uri])
    server.close()
    return elapsed, latencies, findings


def profile(text: str, top: int = 8) -> str:
    from mltriage.engine import diagnose_text

    profiler = cProfile.Profile()
    profiler.enable()
    diagnose_text(text, "worst-case.log")
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    lines = [line for line in out.getvalue().splitlines() if line.strip() and not line.startswith(("   Ordered", "         "))]
    return "\n".join("      " + line for line in lines[-top - 1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="input names (default: all)")
    parser.add_argument("--profile", action="store_true", help="cProfile the engine on inputs over a goal")
    parser.add_argument("--no-server", action="store_true", help="CLI only")
    args = parser.parse_args()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO / "server"), env.get("PYTHONPATH", "")) if p)
    over = []
    print(f"{'input':34} {'MB':>5} {'CLI s':>7} {'exit':>4}  {'server s':>8} {'hovers':>6} {'1st ms':>6} {'then p50/max ms':>16}  result")
    with tempfile.TemporaryDirectory() as scratch:
        env["MLTRIAGE_CACHE_DIR"] = str(Path(scratch, "cache"))
        for name, text in inputs().items():
            if args.only and name not in args.only:
                continue
            path = Path(scratch, f"{name}.log")
            path.write_bytes(text.encode())
            size = path.stat().st_size / MB
            cli_s, code, status = cli_time(path, env)
            row = f"{name:34} {size:5.1f} {cli_s:7.2f} {code:4}"
            slow = cli_s > CLI_GOAL_S
            if not args.no_server:
                server_s, hovers, _ = server_busy_hovers(text, env["MLTRIAGE_CACHE_DIR"])
                first, then = (hovers[0], sorted(hovers[1:])) if hovers else (0.0, [])
                worst = max(hovers, default=0.0)
                p50 = then[len(then) // 2] * 1000 if then else 0
                row += f"  {server_s:8.2f} {len(hovers):6} {first * 1000:6.0f} {p50:7.1f}/{(then[-1] if then else 0) * 1000:<8.1f}"
                slow = slow or worst > HOVER_GOAL_S
            print(f"{row}  {status}", flush=True)
            if slow:
                over.append(name)
                if args.profile:
                    print(profile(text), flush=True)
    print(f"goals: CLI < {CLI_GOAL_S:.0f} s, hover < {HOVER_GOAL_S * 1000:.0f} ms while diagnosing; "
          f"over a goal: {', '.join(over) if over else 'none'}")


if __name__ == "__main__":
    main()
