"""The probe itself, over any Backend: byte-exact copy checks, then bandwidth and latency.

Results stream out through ``emit`` as they are known, and a "begin" event precedes every
stage, so that when the worker hangs or dies the parent knows which pair was in flight.
"""

from __future__ import annotations

from typing import Any, Callable

from . import patterns
from .backends.base import Backend

Emit = Callable[[dict[str, Any]], None]

DEFAULT_SIZES = (4, 4099, (1 << 20) + 13, 16 << 20, 64 << 20)
SENTINEL = 0x5A  # fills the destination first: untouched bytes must keep it
GUARD = 64  # bytes after (and the offset before) the copy that must stay untouched
MAX_SHIFT = 8
BW_P2P_BYTES = 256 << 20
BW_HOST_BYTES = 64 << 20


def placements(n: int) -> list[tuple[int, int]]:
    """(source offset, destination offset): aligned, then both misaligned differently."""
    return [(0, 0), (5, 3)]


def run(backend: Backend, devices: list[int], sizes: list[int], bandwidth: bool, emit: Emit,
        bw_iters: int = 10) -> None:
    ordered = [(s, d) for s in devices for d in devices if s != d]
    access = {}
    for s, d in ordered:
        _begin(backend, emit, "peer_access", s, d)
        access[s, d] = backend.can_access_peer(s, d)
        if access[s, d]:
            backend.enable_peer(s, d)
    _correctness(backend, devices, ordered, access, sorted(sizes), emit)
    if bandwidth:
        _bandwidth(backend, devices, ordered, access, emit, bw_iters)


def _begin(backend: Backend, emit: Emit, stage: str, src: int | None, dst: int | None) -> None:
    emit({"event": "begin", "stage": stage, "src": src, "dst": dst})
    backend.on_stage(stage, src, dst)


def _correctness(backend: Backend, devices: list[int], ordered: list[tuple[int, int]],
                 access: dict, sizes: list[int], emit: Emit) -> None:
    _begin(backend, emit, "prepare", None, None)  # pattern upload: a hang here has no pair
    top = max(sizes) + MAX_SHIFT
    src_bufs: dict[str, dict[int, Any]] = {}
    for kind in patterns.PATTERNS:
        data = patterns.make(kind, top)
        src_bufs[kind] = {}
        for dev in devices:  # the same bytes on every device: the reference is always local
            src_bufs[kind][dev] = backend.alloc(dev, top)
            backend.upload(src_bufs[kind][dev], data)
    dst_bufs = {dev: backend.alloc(dev, top + GUARD) for dev in devices}

    for s, d in ordered:
        _begin(backend, emit, "correctness", s, d)
        paths = ("p2p", "host") if access[s, d] else ("host",)
        checks, failed, first = 0, 0, None
        for kind in patterns.PATTERNS:
            for n in sizes:
                for soff, doff in placements(n):
                    for path in paths:
                        bad = _check_one(backend, path, dst_bufs[d], src_bufs[kind][s],
                                         src_bufs[kind][d], n, soff, doff)
                        checks += 1
                        if bad is not None:
                            failed += 1
                            if first is None:
                                first = {"path": path, "pattern": kind, "size": n,
                                         "src_offset": soff, "dst_offset": doff, **bad}
        emit({"event": "correctness", "src": s, "dst": d, "can_access_peer": access[s, d],
              "checks": checks, "failed": failed, "first_mismatch": first})


def _check_one(backend: Backend, path: str, dst: Any, src: Any, ref: Any, n: int,
               soff: int, doff: int) -> dict[str, Any] | None:
    backend.memset(dst, 0, doff + n + GUARD, SENTINEL)
    backend.copy(path, dst, doff, src, soff, n)
    off = backend.first_mismatch(dst, doff, ref, soff, n)
    if off is not None:
        return {"offset": off, "kind": "wrong data",
                "expected": backend.download(ref, soff + off, 1).hex(),
                "got": backend.download(dst, doff + off, 1).hex()}
    over = backend.first_not(dst, doff + n, GUARD, SENTINEL)
    if over is not None:
        return {"offset": n + over, "kind": "wrote past the end", "expected": f"{SENTINEL:02x}",
                "got": backend.download(dst, doff + n + over, 1).hex()}
    if doff:
        under = backend.first_not(dst, 0, doff, SENTINEL)
        if under is not None:
            return {"offset": under - doff, "kind": "wrote before the start",
                    "expected": f"{SENTINEL:02x}", "got": backend.download(dst, under, 1).hex()}
    return None


def _gbps(nbytes: int, seconds: float) -> float:
    return round(nbytes / seconds / 1e9, 2) if seconds > 0 else 0.0


def _bandwidth(backend: Backend, devices: list[int], ordered: list[tuple[int, int]],
               access: dict, emit: Emit, iters: int) -> None:
    for s, d in ordered:
        _begin(backend, emit, "bandwidth", s, d)
        res: dict[str, Any] = {"event": "bandwidth", "src": s, "dst": d}
        for path, nbytes, it in (("p2p", BW_P2P_BYTES, iters), ("host", BW_HOST_BYTES, 3)):
            if path == "p2p" and not access[s, d]:
                continue
            backend.bench(path, [(s, d)], nbytes, 1)  # warm-up: first touch, staging buffers
            res[f"{path}_gbps"] = _gbps(nbytes, backend.bench(path, [(s, d)], nbytes, it))
            res[f"latency_{path}_us"] = round(backend.latency(path, s, d, 50) * 1e6, 2)
        emit(res)
    for i, a in enumerate(devices):
        for b in devices[i + 1:]:
            _begin(backend, emit, "bidirectional", a, b)
            res = {"event": "bidirectional", "src": a, "dst": b}
            for path, nbytes, it in (("p2p", BW_P2P_BYTES, iters), ("host", BW_HOST_BYTES, 3)):
                if path == "p2p" and not (access[a, b] and access[b, a]):
                    continue
                secs = backend.bench(path, [(a, b), (b, a)], nbytes, it)
                res[f"{path}_gbps"] = _gbps(2 * nbytes, secs)
            emit(res)

