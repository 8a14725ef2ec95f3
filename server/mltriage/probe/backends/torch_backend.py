"""PyTorch as the GPU runtime (the common case: whatever torch the user trains with)."""

from __future__ import annotations

import ctypes
from typing import Any

from .base import Backend, NoRuntime

CHUNK = 8 << 20  # host-staged copies are pipelined in chunks through two pinned buffers


class _Staging:
    """Per-direction pinned double buffer and events for a pipelined device->host->device copy."""

    def __init__(self, torch: Any, s: int, d: int, chunk: int):
        self.chunk = chunk
        self.host = [torch.empty(chunk, dtype=torch.uint8, pin_memory=True) for _ in range(2)]
        self.s_stream = torch.cuda.Stream(device=s)
        self.d_stream = torch.cuda.Stream(device=d)
        self.filled = [torch.cuda.Event() for _ in range(2)]
        self.freed = [torch.cuda.Event() for _ in range(2)]


class TorchBackend(Backend):
    name = "torch"

    def __init__(self) -> None:
        try:
            import torch
        except ImportError as exc:
            raise NoRuntime(f"torch: not installed ({exc})") from exc
        if not torch.cuda.is_available():
            raise NoRuntime(f"torch {torch.__version__}: no CUDA device (torch.cuda.is_available() "
                            "is False)")
        self.torch = torch
        for dev in range(torch.cuda.device_count()):  # create every context now, not mid-probe
            torch.empty(1, device=f"cuda:{dev}")
        self._pinned = None
        self._bench: dict[tuple, Any] = {}
        self._staging: dict[tuple, _Staging] = {}
        self._streams: dict[tuple, Any] = {}

    def info(self) -> dict[str, Any]:
        return {"backend": "torch", "version": self.torch.__version__,
                "cuda": self.torch.version.cuda}

    def device_count(self) -> int:
        return self.torch.cuda.device_count()

    def device_info(self, dev: int) -> dict[str, Any]:
        p = self.torch.cuda.get_device_properties(dev)
        bus = "unknown"
        if hasattr(p, "pci_bus_id"):
            bus = f"{getattr(p, 'pci_domain_id', 0):04x}:{p.pci_bus_id:02x}:{getattr(p, 'pci_device_id', 0):02x}.0"
        uuid = str(getattr(p, "uuid", "") or "")
        if uuid and not uuid.startswith("GPU-"):
            uuid = "GPU-" + uuid
        return {"name": p.name, "pci_bus_id": bus, "uuid": uuid or "unknown"}

    def can_access_peer(self, src: int, dst: int) -> bool:
        return bool(self.torch.cuda.can_device_access_peer(src, dst))

    def enable_peer(self, src: int, dst: int) -> None:
        pass  # torch enables peer access itself on the first cross-device copy

    def alloc(self, dev: int, nbytes: int) -> Any:
        return self.torch.empty(nbytes, dtype=self.torch.uint8, device=f"cuda:{dev}")

    def upload(self, buf: Any, data: bytes) -> None:
        host = self.torch.frombuffer(bytearray(data), dtype=self.torch.uint8)
        buf[:len(data)].copy_(host)

    def download(self, buf: Any, off: int, n: int) -> bytes:
        host = buf[off:off + n].cpu()
        return ctypes.string_at(host.data_ptr(), n)

    def memset(self, buf: Any, off: int, n: int, value: int) -> None:
        buf[off:off + n].fill_(value)

    def _sync(self, *devs: int) -> None:
        for dev in devs:
            self.torch.cuda.synchronize(dev)

    def _pinned_buf(self, n: int) -> Any:
        if self._pinned is None or self._pinned.numel() < n:
            self._pinned = self.torch.empty(n, dtype=self.torch.uint8, pin_memory=True)
        return self._pinned[:n]

    def copy(self, path: str, dst: Any, doff: int, src: Any, soff: int, n: int) -> None:
        s, d = src.device.index, dst.device.index
        if path == "p2p":
            dst[doff:doff + n].copy_(src[soff:soff + n])
        else:
            h = self._pinned_buf(n)
            h.copy_(src[soff:soff + n])
            dst[doff:doff + n].copy_(h)
        self._sync(s, d)

    def first_mismatch(self, a: Any, aoff: int, b: Any, boff: int, n: int) -> int | None:
        x, y = a[aoff:aoff + n], b[boff:boff + n]
        if self.torch.equal(x, y):
            return None
        return int(self.torch.nonzero(x != y)[0, 0])

    def first_not(self, buf: Any, off: int, n: int, value: int) -> int | None:
        bad = self.torch.nonzero(buf[off:off + n] != value)
        return int(bad[0, 0]) if bad.numel() else None

    # -- speed ------------------------------------------------------------------------------
    def _stream_pair(self, s: int, d: int) -> tuple[Any, Any]:
        # One stream pair per direction: torch orders a cross-device copy after the current
        # streams of both devices, so shared streams would serialise the two directions.
        if (s, d) not in self._streams:
            self._streams[s, d] = (self.torch.cuda.Stream(device=s), self.torch.cuda.Stream(device=d))
        return self._streams[s, d]

    def _bench_prepare(self, path: str, directions: list[tuple[int, int]], nbytes: int) -> None:
        if path == "host":
            for sd in directions:
                if sd not in self._staging:
                    self._staging[sd] = _Staging(self.torch, *sd, min(CHUNK, nbytes))

    def _bench_copy(self, path: str, k: int, sd: tuple[int, int], src: Any, dst: Any, nbytes: int) -> None:
        if path == "p2p":
            a, b = self._stream_pair(*sd)
            self.torch.cuda.set_stream(a)
            self.torch.cuda.set_stream(b)
            dst.copy_(src)
        else:
            self._staged(self._staging[sd], src, dst, nbytes)

    def _bench_finish(self, devs: list[int]) -> None:
        for dev in devs:
            self.torch.cuda.set_stream(self.torch.cuda.default_stream(dev))

    def _staged(self, st: _Staging, src: Any, dst: Any, n: int) -> None:
        torch = self.torch
        for c, lo in enumerate(range(0, n, st.chunk)):
            k, hi = c % 2, min(n, lo + st.chunk)
            h = st.host[k][:hi - lo]
            st.s_stream.wait_event(st.freed[k])  # the previous H2D from this buffer is done
            with torch.cuda.stream(st.s_stream):
                h.copy_(src[lo:hi], non_blocking=True)
            st.filled[k].record(st.s_stream)
            st.d_stream.wait_event(st.filled[k])
            with torch.cuda.stream(st.d_stream):
                dst[lo:hi].copy_(h, non_blocking=True)
            st.freed[k].record(st.d_stream)

    def _latency_copy(self, path: str, a: Any, b: Any, src: int, dst: int) -> None:
        if path == "p2p":
            b.copy_(a)
        else:
            h = self.__dict__.get("_latency_host")
            if h is None:
                h = self.__dict__["_latency_host"] = self.torch.empty(4, dtype=self.torch.uint8, pin_memory=True)
            h.copy_(a)
            b.copy_(h)
        self._sync(dst)
