"""The engine worker process (`worker`), seen from the server: one long-lived process fed one job
at a time, restarted when it dies, never outliving the server.

Why a process: the engine's long C calls hold the GIL, and in the server's own process a hover
waited up to half a second behind one (bench/RESULTS.md). Why not `multiprocessing`: its spawn
method re-imports the server's main module in the child (``python -m mltriage.server`` starts a
server at import) and adds a resource-tracker process; this starts the same fresh interpreter by
hand, with the server's ``sys.path``, and speaks `wire` over the child's stdin and stdout.

- Jobs wait in a queue here, not in the worker, so a job abandoned before it starts (a newer
  version of the document, a cancelled request) is simply dropped.
- A running job that is abandoned is left to finish for as long as a restart costs (measured at
  each start), then the worker is killed and restarted: a 20-second diagnosis of a superseded
  version never holds up the new one by more than twice a restart.
- A worker that dies (crash, out of memory, killed) fails its running job with `EngineStopped`;
  the next job gets a new worker. Each worker is reaped by its reader thread (no zombie), killed
  at `shutdown`, at exit, and on Linux by the kernel when the server dies (the worker asks for it).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from mltriage.lsp import wire

log = logging.getLogger(__name__)

_BOOT = "import json, sys; sys.path[:] = json.loads(sys.argv[1]); from mltriage.lsp.worker import main; main(int(sys.argv[2]))"
_FIRST_RESTART_COST_S = 0.6  # until a start has been measured


class EngineStopped(Exception):
    """The worker process ended, or could not start, while this job waited or ran."""


class EngineFailed(Exception):
    """The engine raised on this job (the worker logged the traceback and goes on)."""


def exit_reason(code: int) -> str:
    if code >= 0:
        return f"exited with code {code}"
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = f"signal {-code}"
    return f"was killed by {name}" + (" (out of memory, or stopped by someone)" if -code == signal.SIGKILL else "")


@dataclass(eq=False)
class _Job:
    id: int
    kind: str
    request: dict[str, Any]
    future: asyncio.Future[dict[str, Any]]
    parts: dict[str, list[Any]] = field(default_factory=dict)
    sent: float = 0.0


@dataclass
class _Spawned:
    process: subprocess.Popen[bytes]
    at: float  # time.time(): the worker says when it was ready in the same clock


def _spawn() -> _Spawned:
    """A fresh interpreter with the server's ``sys.path`` (``-I``: nothing else of the environment's
    Python settings), stdin/stdout for `wire`, stderr the server's (its log)."""
    command = [sys.executable, "-I", "-c", _BOOT, json.dumps(sys.path), str(os.getpid())]
    return _Spawned(subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE), time.time())


class _Worker:
    """One worker process and the two threads that write to and read from its pipes."""

    def __init__(self, engine: EngineProcess, loop: asyncio.AbstractEventLoop, spawned: _Spawned) -> None:
        self.process, self.spawned = spawned.process, spawned.at
        self.pid = self.process.pid
        self.ready = False
        self.stopping = False  # killed by us: its end is expected, and it takes no new job
        self._outbox: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        # daemon threads: a write blocked on a stuck worker never holds up the server's exit
        threading.Thread(target=self._send_all, name=f"mltriage-engine-send-{self.pid}", daemon=True).start()
        threading.Thread(target=self._receive_all, args=(engine, loop), name=f"mltriage-engine-receive-{self.pid}", daemon=True).start()

    def send(self, job: _Job) -> None:
        self._outbox.put(job)  # written by the sender thread

    def _send_all(self) -> None:
        stdin = self.process.stdin
        while (job := self._outbox.get()) is not None:
            request = dict(job.request)
            text = request.pop("text")
            try:
                stdin.write(wire.encode(("job", job.id, job.kind, request)))
                wire.write_text(stdin, text)
                stdin.flush()
            except (OSError, ValueError):  # it died; its reader reports that
                break
        try:
            stdin.close()
        except OSError:
            pass

    def _receive_all(self, engine: EngineProcess, loop: asyncio.AbstractEventLoop) -> None:
        try:
            while (message := wire.read(self.process.stdout)) is not None:
                _post(loop, engine._message, self, message)
        except Exception as exc:  # noqa: BLE001 - a garbled pipe: this worker is of no more use
            log.error("engine process %d sent something unreadable (%s); stopping it", self.pid, exc)
            self.process.kill()
        code = self.process.wait()  # reaped here, whoever ended it
        self.process.stdout.close()
        self._outbox.put(None)  # the sender closes stdin
        _post(loop, engine._exited, self, code)

    def kill(self) -> None:
        self.stopping = True
        if self.process.poll() is None:
            self.process.kill()


def _post(loop: asyncio.AbstractEventLoop, callback: Any, *args: Any) -> None:
    try:
        loop.call_soon_threadsafe(callback, *args)
    except RuntimeError:  # the loop is closed: the server is exiting
        pass


class EngineProcess:
    def __init__(self) -> None:
        self._worker: _Worker | None = None
        self._early: _Spawned | None = None  # started before the event loop (`prestart`)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: deque[_Job] = deque()
        self._running: _Job | None = None
        self._ids = itertools.count(1)
        self.closed = False
        self.restart_cost_s = _FIRST_RESTART_COST_S

    @property
    def pid(self) -> int | None:
        return self._worker.pid if self._worker else None

    def prestart(self) -> None:
        """Start the process before the server has imported its own modules: both load at once.
        Its messages wait in the pipe until `start`."""
        try:
            self._early = _spawn()
        except OSError as exc:
            log.error("could not start the engine process: %s", exc)

    def start(self) -> None:
        """Start the worker now (on the event loop), so that the first document finds it warm."""
        if self._worker is None and not self.closed:
            try:
                self._spawn()
            except OSError as exc:  # said again, to the job, when a document needs it
                log.error("could not start the engine process: %s", exc)

    async def run(self, kind: str, request: dict[str, Any]) -> dict[str, Any]:
        """The worker's payload for one job (`worker.JOBS`; ``request["text"]`` the text to diagnose).
        Cancelling the caller abandons the job."""
        if self.closed:
            raise EngineStopped("the server is shutting down")
        job = _Job(next(self._ids), kind, request, asyncio.get_running_loop().create_future())
        job.future.add_done_callback(lambda _: self._settled(job))
        self._queue.append(job)
        self._pump()
        return await job.future

    def _spawn(self) -> None:
        self._loop = asyncio.get_running_loop()  # the worker's messages are handled on this loop
        spawned, self._early = self._early, None
        self._worker = _Worker(self, self._loop, spawned or _spawn())
        log.info("engine process %d %s", self._worker.pid, "adopted" if spawned else "started")

    def _pump(self) -> None:
        """Send the next job when the worker is free (starting one if there is none)."""
        if self._running is not None or self.closed or (self._worker is not None and self._worker.stopping):
            return
        if not self._queue:
            return
        if self._worker is None:
            try:
                self._spawn()
            except OSError as exc:
                for job in self._queue:
                    job.future.set_exception(EngineStopped(f"the engine process could not start: {exc}"))
                self._queue.clear()
                return
        job = self._queue.popleft()
        job.sent = time.monotonic()
        self._running = job
        self._worker.send(job)

    def _settled(self, job: _Job) -> None:
        if not job.future.cancelled():
            return
        if job in self._queue:
            self._queue.remove(job)
        elif job is self._running and self._loop is not None:
            wait = max(0.0, job.sent + self.restart_cost_s - time.monotonic())
            self._loop.call_later(wait, self._stop_abandoned, job)

    def _stop_abandoned(self, job: _Job) -> None:
        worker = self._worker
        if job is not self._running or worker is None or worker.stopping:
            return
        if not worker.ready:  # still starting: the job has not begun yet
            self._loop.call_later(self.restart_cost_s, self._stop_abandoned, job)
            return
        log.info("engine process %d: its job was abandoned; stopping it rather than waiting", worker.pid)
        worker.kill()

    def _message(self, worker: _Worker, message: tuple) -> None:
        if worker is not self._worker:
            return  # from a worker already replaced
        if message[0] == "ready":  # ("ready", when, seconds it took to load the engine)
            worker.ready = True
            self.restart_cost_s = max(0.0, message[1] - worker.spawned)
            log.info("engine process %d ready in %.2f s (engine loaded in %.2f s)", worker.pid, self.restart_cost_s, message[2])
            return
        job = self._running
        if job is None or message[1] != job.id:
            log.warning("engine process %d answered a job it was not given: %r", worker.pid, message[:2])
            return
        if message[0] == "part":
            if not job.future.done():  # an abandoned job's parts are not kept
                job.parts.setdefault(message[2], []).extend(message[3])
            return
        self._running = None
        if not job.future.done():
            if message[0] == "done":
                payload = message[2]
                payload.update(job.parts)
                job.future.set_result(payload)
            else:
                job.future.set_exception(EngineFailed(message[2]))
        self._pump()

    def _exited(self, worker: _Worker, code: int) -> None:
        if worker is not self._worker:
            return
        self._worker = None
        job, self._running = self._running, None
        if worker.stopping or self.closed:
            log.info("engine process %d stopped", worker.pid)
        else:
            log.warning("engine process %d %s%s", worker.pid, exit_reason(code), " during a job" if job else "")
        if job is not None and not job.future.done():
            job.future.set_exception(EngineStopped(f"the engine process {exit_reason(code)}"))
        if self.closed:
            return
        if self._queue:
            self._pump()
        elif job is not None and worker.ready:  # killed mid-job: the user is working, be warm for the next
            self.start()

    def close(self) -> None:
        """Stop the worker and reap it; no job runs after this. Synchronous: also called at exit,
        when the event loop is gone."""
        self.closed = True
        worker, self._worker = self._worker, None
        if self._early is not None:  # never adopted: the client never initialized
            self._early.process.kill()
            self._early.process.wait()
            self._early = None
        pending = [job for job in (self._running, *self._queue) if job is not None]
        self._running = None
        self._queue.clear()
        if self._loop is not None and not self._loop.is_closed():
            for job in pending:
                job.future.cancel()
        if worker is not None:
            worker.kill()
            try:
                worker.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                log.error("engine process %d did not stop within 5 s", worker.pid)
