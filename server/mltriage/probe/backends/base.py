"""The CUDA boundary: the few device operations the probe needs, per GPU runtime."""

from __future__ import annotations

import time
from typing import Any


class NoRuntime(Exception):
    """This backend's runtime is not installed or cannot see a GPU."""


class Backend:
    name = "base"
    _bench: dict  # set by each backend's __init__: the benchmark buffers

    def info(self) -> dict[str, Any]:
        """Runtime name and versions."""
        raise NotImplementedError

    def device_count(self) -> int:
        raise NotImplementedError

    def device_info(self, dev: int) -> dict[str, Any]:
        """name, pci_bus_id (and uuid where the runtime tells it)."""
        raise NotImplementedError

    def can_access_peer(self, src: int, dst: int) -> bool:
        raise NotImplementedError

    def enable_peer(self, src: int, dst: int) -> None:
        """Let ``src`` and ``dst`` reach each other's memory directly (both directions)."""
        raise NotImplementedError

    def alloc(self, dev: int, nbytes: int) -> Any:
        raise NotImplementedError

    def upload(self, buf: Any, data: bytes) -> None:
        """Host bytes -> start of ``buf``."""
        raise NotImplementedError

    def download(self, buf: Any, off: int, n: int) -> bytes:
        raise NotImplementedError

    def memset(self, buf: Any, off: int, n: int, value: int) -> None:
        raise NotImplementedError

    def copy(self, path: str, dst: Any, doff: int, src: Any, soff: int, n: int) -> None:
        """Synchronous copy between devices; path 'p2p' (direct) or 'host' (staged via pinned RAM)."""
        raise NotImplementedError

    def first_mismatch(self, a: Any, aoff: int, b: Any, boff: int, n: int) -> int | None:
        """First differing offset of two same-device ranges, None when equal."""
        x, y = self.download(a, aoff, n), self.download(b, boff, n)
        return first_difference(x, y)

    def first_not(self, buf: Any, off: int, n: int, value: int) -> int | None:
        """First offset whose byte is not ``value`` (guard checks), None when all are."""
        return first_difference(self.download(buf, off, n), bytes([value]) * n)

    def bench(self, path: str, directions: list[tuple[int, int]], nbytes: int, iters: int) -> float:
        """Seconds per iteration; one iteration copies ``nbytes`` in every direction at once.

        The one timing loop of every backend; each supplies how it queues one copy (``_bench_copy``)."""
        devs = sorted({x for sd in directions for x in sd})
        bufs = self._bench  # (direction, size) -> (source, destination) buffers, kept between calls
        for sd in directions:
            if (sd, nbytes) not in bufs:
                bufs[sd, nbytes] = (self.alloc(sd[0], nbytes), self.alloc(sd[1], nbytes))
        self._bench_prepare(path, directions, nbytes)
        self._sync(*devs)
        t0 = time.perf_counter()
        for _ in range(iters):
            for k, sd in enumerate(directions):
                src, dst = bufs[sd, nbytes]
                self._bench_copy(path, k, sd, src, dst, nbytes)
        self._sync(*devs)
        elapsed = time.perf_counter() - t0
        self._bench_finish(devs)
        return elapsed / iters

    def _bench_prepare(self, path: str, directions: list[tuple[int, int]], nbytes: int) -> None:
        """Before the clock starts (staging buffers, streams)."""

    def _bench_copy(self, path: str, k: int, sd: tuple[int, int], src: Any, dst: Any, nbytes: int) -> None:
        """Queue one asynchronous copy of direction number ``k`` (``path`` 'p2p' or 'host')."""
        raise NotImplementedError

    def _bench_finish(self, devs: list[int]) -> None:
        """After the clock stops (restore default streams)."""

    def _sync(self, *devs: int) -> None:
        raise NotImplementedError

    def latency(self, path: str, src: int, dst: int, iters: int) -> float:
        """Seconds per synchronous 4-byte copy."""
        a, b = self.alloc(src, 4), self.alloc(dst, 4)
        for _ in range(5):
            self._latency_copy(path, a, b, src, dst)
        t0 = time.perf_counter()
        for _ in range(iters):
            self._latency_copy(path, a, b, src, dst)
        return (time.perf_counter() - t0) / iters

    def _latency_copy(self, path: str, a: Any, b: Any, src: int, dst: int) -> None:
        self.copy(path, b, 0, a, 0, 4)

    def on_stage(self, stage: str, src: int | None, dst: int | None) -> None:
        """Called before each stage; the fake backend injects hangs and crashes here."""

    def close(self) -> None:
        pass


def first_difference(x: bytes | memoryview, y: bytes | memoryview) -> int | None:
    """First differing index (memcmp-speed bisection), None when equal."""
    if bytes(x) == bytes(y):  # memcmp; memoryview == compares item by item, 3x slower
        return None
    x, y = memoryview(x), memoryview(y)
    lo, hi = 0, min(len(x), len(y))
    if x[:hi] == y[:hi]:
        return hi  # one is a prefix of the other
    while hi - lo > 1:  # invariant: x[lo:hi] != y[lo:hi]
        mid = (lo + hi) // 2
        if x[lo:mid] != y[lo:mid]:
            hi = mid
        else:
            lo = mid
    return lo
