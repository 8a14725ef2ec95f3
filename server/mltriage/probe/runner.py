"""Run the worker in its own process group with a deadline; turn what it said into a record.

The worker may hang inside the driver (uninterruptible P2P waits are the classic) or die from a
signal; either way we kill its whole group, keep its stderr tail, and name the stage and pair
that was in flight from the last "begin" event.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any

STDERR_TAIL = 4000


def _package_root() -> str:
    # .../server/mltriage/probe/runner.py -> .../server: the worker imports mltriage from here.
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_worker(config: dict[str, Any], timeout_s: float, python: str | None = None) -> dict[str, Any]:
    """Events the worker emitted plus status: ok / error / hang / crash."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [_package_root(), env.get("PYTHONPATH")]))
    env.setdefault("PYTHONUNBUFFERED", "1")
    cmd = [python or sys.executable, "-m", "mltriage.probe.worker", json.dumps(config)]
    t0 = time.perf_counter()
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env, start_new_session=True)
    except OSError as exc:
        return {"status": "error", "events": [], "returncode": None, "error_kind": "spawn",
                "message": f"cannot start the probe worker ({cmd[0]}): {exc}", "stderr_tail": "",
                "wall_s": 0.0, "timeout_s": timeout_s, "in_flight": None, "signal": None}
    events: list[dict[str, Any]] = []
    stderr_chunks: list[bytes] = []

    def read_stdout() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            try:
                events.append(json.loads(line))
            except ValueError:
                events.append({"event": "noise", "text": line.decode(errors="replace")[:500]})

    def read_stderr() -> None:
        assert proc.stderr is not None
        for chunk in iter(lambda: proc.stderr.read(4096), b""):
            stderr_chunks.append(chunk)

    readers = [threading.Thread(target=read_stdout, daemon=True),
               threading.Thread(target=read_stderr, daemon=True)]
    for r in readers:
        r.start()
    timed_out = False
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc)
    for r in readers:
        r.join(timeout=2)
    wall = time.perf_counter() - t0
    stderr = b"".join(stderr_chunks).decode(errors="replace")[-STDERR_TAIL:]
    rc = proc.returncode
    errors = [e for e in events if e.get("event") == "error"]
    if timed_out:
        status = "hang"
    elif errors:
        status = "error"
    elif rc != 0 or not any(e.get("event") == "done" for e in events):
        status = "crash"
    else:
        status = "ok"
    return {
        "status": status,
        "events": events,
        "returncode": rc,
        "signal": signal.Signals(-rc).name if rc is not None and rc < 0 and -rc in
        signal.valid_signals() else None,
        "stderr_tail": stderr,
        "wall_s": round(wall, 3),
        "timeout_s": timeout_s,
        "in_flight": _in_flight(events) if status in ("hang", "crash") else None,
        "message": errors[-1]["message"] if errors else "",
        "error_kind": errors[-1].get("kind") if errors else None,
    }


def _in_flight(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The last stage begun and not finished, from the event stream."""
    finished = {"correctness", "bandwidth", "bidirectional"}
    last = None
    for e in events:
        if e.get("event") == "begin":
            last = e
        elif e.get("event") in finished and last and e.get("event") == last.get("stage") \
                and (e.get("src"), e.get("dst")) == (last.get("src"), last.get("dst")):
            last = None
    if last is None:
        if not any(e.get("event") == "init" for e in events):
            return {"stage": "init", "src": None, "dst": None}
        return None
    return {"stage": last["stage"], "src": last["src"], "dst": last["dst"]}


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass  # stuck in the kernel (D state): leave it, we have our answer
