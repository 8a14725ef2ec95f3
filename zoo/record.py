"""Run the CPU failure zoo (real torchrun + gloo jobs) and record what they print.

    python zoo/record.py                 # record every scenario into zoo/cpu/<name>/
    python zoo/record.py --only sigkill  # one scenario
    python zoo/record.py --out DIR       # record somewhere else
    python zoo/record.py --check         # re-run into a temp dir and verify each failed as designed

Per scenario it writes console.log (torchrun's interleaved output, `--tee 3` gives the
`[defaultN]:` prefixes), logdir/ (torchrun --log-dir: per-rank stdout/stderr and the
@record error.json files) and scenario.json (the ground truth from catalog.py).
The healthy run is recorded into corpus/healthy/torchrun-cpu-gloo/ by default.
"""
import argparse
import contextlib
import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from catalog import BY_NAME, HELD_PORT, NPROC, SCENARIOS, Scenario

REPO = Path(__file__).resolve().parent.parent
SCENARIO_TIMEOUT_S = 60


def default_dir(s: Scenario) -> Path:
    if s.name == "healthy":
        return REPO / "corpus" / "healthy" / "torchrun-cpu-gloo"
    return REPO / "zoo" / "cpu" / s.name


def build_command(s: Scenario, logdir: str) -> str:
    env = "".join(f"{k}={v} " for k, v in s.env.items())
    if s.launch == "held-port":
        launch = f"--master-port {HELD_PORT}"
    else:
        launch = "--standalone"
    return (f"{env}torchrun {launch} --nproc-per-node {NPROC} --tee 3 --log-dir {logdir} "
            f"zoo/scenarios/{s.name}.py")


def hold_port(port: int) -> socket.socket | None:
    """Listen on the port as a leftover job would; None if someone already holds it."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind(("0.0.0.0", port))
        sock.listen(1)
        return sock
    except OSError:
        sock.close()
        return None


def become_subreaper() -> None:
    """Orphaned workers (their torchrun gone) become our children instead of init's, so that
    kill_descendants finds them (Linux; elsewhere only the still-parented ones are found)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def descendants() -> set[int]:
    """Live processes below this one, whatever session they started (Linux /proc)."""
    table = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            state, parent = stat.read_text().rsplit(")", 1)[1].split()[:2]
            table[int(stat.parent.name)] = (int(parent), state)
    mine, grew = {os.getpid()}, True
    while grew:
        below = {pid for pid, (parent, _) in table.items() if parent in mine} - mine
        grew = bool(below)
        mine |= below
    return {pid for pid in mine - {os.getpid()} if table[pid][1] != "Z"}


def kill_descendants(job: subprocess.Popen) -> None:
    """SIGKILL every process below this one until none is left (one that torchrun was starting as
    we looked is found on the next look); the adopted ones are reaped, the job is left to wait()."""
    for _ in range(100):
        alive = descendants()
        if not alive:
            return
        for pid in alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        for pid in alive - {job.pid}:
            with contextlib.suppress(ChildProcessError):  # not ours (yet): its parent reaps it
                os.waitpid(pid, 0)
        time.sleep(0.05)


def run_one(s: Scenario, out: Path, timeout_s: float = SCENARIO_TIMEOUT_S) -> dict:
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    logdir = os.path.relpath(out / "logdir", REPO)
    command = build_command(s, logdir)
    env = dict(os.environ)
    # the torchrun next to this interpreter, so the venv's torch is the one recorded
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.pop("TORCH_DISTRIBUTED_DEBUG", None)
    held = hold_port(HELD_PORT) if s.launch == "held-port" else None
    started = time.monotonic()
    try:
        with open(out / "console.log", "wb") as console:
            proc = subprocess.Popen(["bash", "-c", command], cwd=REPO, env=env, stdout=console,
                                    stderr=subprocess.STDOUT, start_new_session=True)
            try:
                rc = proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                rc = None
            finally:
                # always, not only on a timeout: torchrun starts each worker in a session of its own,
                # so a worker it did not stop (the hanging rank of rank_hang, or all of them when
                # torchrun itself is killed) is in no group of ours and would outlive the job
                kill_descendants(proc)
                if rc is None:
                    rc = proc.wait()
    finally:
        if held:
            held.close()
    wall = round(time.monotonic() - started, 1)
    truth = {
        "command": command,
        "torch": torch.__version__.split("+")[0],
        "initiating_rank": s.initiating_rank,
        "collateral_ranks": s.collateral_ranks,
        "healthy_ranks": s.healthy_ranks,
        "kind": s.kind,
        "domain": s.domain,
        "what": s.what,
        "nproc": NPROC,
        "backend": "gloo",
        "exit_code": rc,
        "wall_s": wall,
    }
    if s.launch == "held-port":
        truth["setup"] = f"zoo/record.py listens on port {HELD_PORT} before starting torchrun"
    (out / "scenario.json").write_text(json.dumps(truth, indent=2) + "\n")
    return truth


def rank_output(out: Path, rank: int) -> str:
    # torchrun lays out <log-dir>/<run id>/attempt_0/<local rank>/{stdout,stderr}.log
    texts = [p.read_text(errors="replace")
             for p in sorted((out / "logdir").glob(f"*/attempt_*/{rank}/std*.log"))]
    return "\n".join(texts)


def verify(s: Scenario, out: Path, truth: dict) -> list[str]:
    problems = []
    if s.exit_zero != (truth["exit_code"] == 0):
        problems.append(f"exit code {truth['exit_code']}")
    console = (out / "console.log").read_text(errors="replace")
    for where, needle in s.expect:
        text = console if where == "console" else rank_output(out, where)
        if needle not in text:
            problems.append(f"{where!r} lacks {needle!r}")
    return problems


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", choices=sorted(BY_NAME), help="scenario name (repeatable)")
    ap.add_argument("--out", type=Path, help="record into DIR/<name>/ instead of the repo")
    ap.add_argument("--check", action="store_true", help="re-run into a temp dir and verify")
    ap.add_argument("--timeout", type=float, default=SCENARIO_TIMEOUT_S, help="seconds before a job is killed")
    args = ap.parse_args(argv)
    become_subreaper()
    chosen = [BY_NAME[n] for n in args.only] if args.only else SCENARIOS
    base = Path(tempfile.mkdtemp(prefix="zoo-check-")) if args.check and not args.out else args.out
    failed = 0
    for s in chosen:
        out = (base / s.name) if base else default_dir(s)
        truth = run_one(s, out, args.timeout)
        problems = verify(s, out, truth)
        failed += bool(problems)
        status = "ok" if not problems else "NOT REPRODUCED: " + "; ".join(problems)
        print(f"{s.name:26s} exit={truth['exit_code']:<4} {truth['wall_s']:>5}s  {status}", flush=True)
    if args.check and not args.out:
        shutil.rmtree(base)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
