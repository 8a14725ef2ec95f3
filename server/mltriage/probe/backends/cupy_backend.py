"""CuPy as the GPU runtime: direct cudaMemcpyPeerAsync on raw pointers, comparisons on device."""

from __future__ import annotations

from typing import Any

from .base import Backend, NoRuntime

CHUNK = 8 << 20


class CupyBackend(Backend):
    name = "cupy"

    def __init__(self) -> None:
        try:
            import cupy
        except ImportError as exc:
            raise NoRuntime(f"cupy: not installed ({exc})") from exc
        self.cp = cupy
        self.rt = cupy.cuda.runtime
        try:
            n = self.rt.getDeviceCount()
        except Exception as exc:
            raise NoRuntime(f"cupy {cupy.__version__}: {exc}") from exc
        for dev in range(n):  # create every context now, not mid-probe
            with cupy.cuda.Device(dev):
                cupy.zeros(1, dtype=cupy.uint8)
        self._streams: dict[tuple, Any] = {}
        self._bench: dict[tuple, Any] = {}
        self._pinned: dict[int, Any] = {}
        self._events: dict[tuple, Any] = {}

    def info(self) -> dict[str, Any]:
        v = self.rt.runtimeGetVersion()
        return {"backend": "cupy", "version": self.cp.__version__, "cuda": f"{v // 1000}.{v % 1000 // 10}"}

    def device_count(self) -> int:
        return self.rt.getDeviceCount()

    def device_info(self, dev: int) -> dict[str, Any]:
        p = self.rt.getDeviceProperties(dev)
        name = p["name"].decode() if isinstance(p["name"], bytes) else str(p["name"])
        bus = f"{p['pciDomainID']:04x}:{p['pciBusID']:02x}:{p['pciDeviceID']:02x}.0"
        uuid = p.get("uuid")
        if isinstance(uuid, bytes) and len(uuid) == 16:
            h = uuid.hex()
            uuid = f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
        return {"name": name, "pci_bus_id": bus, "uuid": uuid if isinstance(uuid, str) else "unknown"}

    def can_access_peer(self, src: int, dst: int) -> bool:
        return bool(self.rt.deviceCanAccessPeer(src, dst))

    def enable_peer(self, src: int, dst: int) -> None:
        for a, b in ((src, dst), (dst, src)):
            with self.cp.cuda.Device(a):
                try:
                    self.rt.deviceEnablePeerAccess(b)
                except self.rt.CUDARuntimeError as exc:
                    if "AlreadyEnabled" not in str(exc):
                        raise

    def alloc(self, dev: int, nbytes: int) -> Any:
        with self.cp.cuda.Device(dev):
            return self.cp.empty(nbytes, dtype=self.cp.uint8)

    def upload(self, buf: Any, data: bytes) -> None:
        import numpy as np

        with buf.device:
            buf[:len(data)].set(np.frombuffer(data, dtype=np.uint8))

    def download(self, buf: Any, off: int, n: int) -> bytes:
        with buf.device:
            return buf[off:off + n].get().tobytes()

    def memset(self, buf: Any, off: int, n: int, value: int) -> None:
        with buf.device:
            buf[off:off + n].fill(value)

    def _sync(self, *devs: int) -> None:
        for d in devs:
            with self.cp.cuda.Device(d):
                self.cp.cuda.Device(d).synchronize()

    def _host(self, n: int, slot: int = 0) -> Any:
        have = self._pinned.get(slot)
        if have is None or have[1] < n:
            self._pinned[slot] = (self.cp.cuda.alloc_pinned_memory(n), n)
        return self._pinned[slot][0]

    def copy(self, path: str, dst: Any, doff: int, src: Any, soff: int, n: int) -> None:
        s, d = src.device.id, dst.device.id
        if path == "p2p":
            self.rt.memcpyPeer(dst.data.ptr + doff, d, src.data.ptr + soff, s, n)
        else:
            h = self._host(n).ptr
            with src.device:
                self.rt.memcpy(h, src.data.ptr + soff, n, self.rt.memcpyDeviceToHost)
            with dst.device:
                self.rt.memcpy(dst.data.ptr + doff, h, n, self.rt.memcpyHostToDevice)
        self._sync(s, d)

    def first_mismatch(self, a: Any, aoff: int, b: Any, boff: int, n: int) -> int | None:
        with a.device:
            ne = a[aoff:aoff + n] != b[boff:boff + n]
            if not bool(ne.any()):
                return None
            return int(self.cp.argmax(ne))

    def first_not(self, buf: Any, off: int, n: int, value: int) -> int | None:
        with buf.device:
            ne = buf[off:off + n] != value
            return int(self.cp.argmax(ne)) if bool(ne.any()) else None

    def _stream(self, dev: int, slot: int) -> Any:
        if (dev, slot) not in self._streams:
            with self.cp.cuda.Device(dev):
                self._streams[dev, slot] = self.cp.cuda.Stream(non_blocking=True)
        return self._streams[dev, slot]

    def _event(self, dev: int, key: tuple) -> Any:
        if (dev, key) not in self._events:
            with self.cp.cuda.Device(dev):
                self._events[dev, key] = self.cp.cuda.Event(disable_timing=True)
        return self._events[dev, key]

    def _bench_copy(self, path: str, k: int, sd: tuple[int, int], src: Any, dst: Any, nbytes: int) -> None:
        s, d = sd
        if path == "p2p":
            st = self._stream(s, 1 + k)
            with self.cp.cuda.Device(s):
                self.rt.memcpyPeerAsync(dst.data.ptr, d, src.data.ptr, s, nbytes, st.ptr)
        else:
            self._staged(src, dst, nbytes, k)

    def _staged(self, src: Any, dst: Any, n: int, k: int) -> None:
        s, d = src.device.id, dst.device.id
        a, b = self._stream(s, 4 + k), self._stream(d, 4 + k)
        host = self._host(2 * CHUNK, slot=1 + k).ptr
        for c, lo in enumerate(range(0, n, CHUNK)):
            m, h = min(CHUNK, n - lo), host + (c % 2) * CHUNK
            freed = self._event(d, ("h2d", k, c % 2))
            with self.cp.cuda.Device(s):
                a.wait_event(freed)  # never recorded yet: a no-op
                self.rt.memcpyAsync(h, src.data.ptr + lo, m, self.rt.memcpyDeviceToHost, a.ptr)
                filled = self._event(s, ("d2h", k, c % 2))
                filled.record(a)
            with self.cp.cuda.Device(d):
                b.wait_event(filled)
                self.rt.memcpyAsync(dst.data.ptr + lo, h, m, self.rt.memcpyHostToDevice, b.ptr)
                freed.record(b)

