"""Processes the tests start: each in a session (process group) of its own, and that whole group
killed on every exit path, so nothing a test started outlives it (a torchrun worker, a language
server's engine process). The root conftest makes the test process a child subreaper and fails the
run if any process the tests started is still alive at the end (``left_alive``)."""

from __future__ import annotations

import asyncio
import ctypes
import os
import signal
import subprocess
import time
from pathlib import Path

_PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
_tracked: list[int] = []  # process groups a test started that the per-test finalizer kills


def kill_group(pgid: int) -> None:
    """SIGKILL every process of the group led by ``pgid`` (ours: each was started in a new session)."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the whole group is gone already


def run(args, *, input=None, capture_output: bool = False, timeout: float | None = None, check: bool = False,
        **kwargs) -> subprocess.CompletedProcess:
    """``subprocess.run`` in a new session; the group is killed when the command returns, times out or
    the test is interrupted, so a child that outlives its parent (a worker torchrun left behind) goes too."""
    if capture_output:
        kwargs["stdout"] = kwargs["stderr"] = subprocess.PIPE
    if input is not None:
        kwargs["stdin"] = subprocess.PIPE
    with subprocess.Popen(args, start_new_session=True, **kwargs) as process:
        try:
            stdout, stderr = process.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            kill_group(process.pid)
            exc.stdout, exc.stderr = process.communicate()
            raise
        finally:
            kill_group(process.pid)
    result = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    if check:
        result.check_returncode()
    return result


def popen(args, **kwargs) -> subprocess.Popen:
    """A process that lives while its test runs: killed with its group when the test ends (``tracked``)."""
    process = subprocess.Popen(args, start_new_session=True, **kwargs)
    _tracked.append(process.pid)
    return process


async def start(*command: str, **kwargs) -> asyncio.subprocess.Process:
    """``asyncio.create_subprocess_exec`` in a new session, killed with its group when the test ends."""
    process = await asyncio.create_subprocess_exec(*command, start_new_session=True, **kwargs)
    _tracked.append(process.pid)
    return process


def track(pid: int) -> None:
    """A process started in a new session elsewhere (pytest-lsp's server): killed when the test ends."""
    _tracked.append(pid)


def kill_tracked() -> None:
    while _tracked:
        kill_group(_tracked.pop())


def become_subreaper() -> bool:
    """Orphans of the processes the tests start become this process's children instead of init's,
    so that ``left_alive`` sees them. Linux only; False elsewhere."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _table() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, state) of every process (Linux /proc)."""
    table = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, ppid = stat.read_text().rsplit(")", 1)[1].split()[:2]
        except (OSError, ValueError, IndexError):
            continue
        table[int(stat.parent.name)] = (int(ppid), state)
    return table


def descendants(pid: int) -> list[int]:
    """Live (not zombie) descendants of ``pid``."""
    table = _table()
    children: dict[int, list[int]] = {}
    for child, (parent, _) in table.items():
        children.setdefault(parent, []).append(child)
    found, todo = [], list(children.get(pid, []))
    while todo:
        p = todo.pop()
        todo += children.get(p, [])
        if table[p][1] != "Z":
            found.append(p)
    return sorted(found)


def reap_zombies() -> None:
    """Collect orphans that exited after they were reparented to this process."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def command_of(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()[:300]
    except OSError:
        return "?"


def left_alive(grace_s: float = 2.0) -> list[tuple[int, str]]:
    """The descendants of this process still alive after ``grace_s`` (a killed process takes a moment
    to go), with their command lines; each is then killed with its group."""
    end = time.monotonic() + grace_s
    while True:
        reap_zombies()
        alive = descendants(os.getpid())
        if not alive or time.monotonic() > end:
            break
        time.sleep(0.1)
    found = [(pid, command_of(pid)) for pid in alive]
    for pid, _ in found:
        try:
            group = os.getpgid(pid)
            if group != os.getpgrp():  # (never our own group: that is the test run itself)
                kill_group(group)
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    reap_zombies()
    return found
