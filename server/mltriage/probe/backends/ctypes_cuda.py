"""The CUDA driver API through ctypes: works with nothing but the NVIDIA driver installed.

Comparisons happen on the host (download both ranges, memcmp), so this backend is slower than
torch for large sizes but needs no Python GPU package at all.
"""

from __future__ import annotations

import ctypes
from typing import Any

from .base import Backend, NoRuntime, first_difference

CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33
CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34
CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50
CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704
CHUNK = 8 << 20


class CudaError(RuntimeError):
    pass


class DevBuf:
    def __init__(self, dev: int, ptr: int, nbytes: int):
        self.dev, self.ptr, self.nbytes = dev, ptr, nbytes
        self.host: bytes | None = None  # what was uploaded: the reference, no download needed


class CtypesCudaBackend(Backend):
    name = "ctypes"

    def __init__(self) -> None:
        try:
            self.lib = ctypes.CDLL("libcuda.so.1")
        except OSError as exc:
            raise NoRuntime(f"libcuda: not found ({exc}); is the NVIDIA driver installed?") from exc
        rc = self.lib.cuInit(0)
        if rc != 0:
            raise NoRuntime(f"libcuda: cuInit failed ({self._errname(rc)})")
        n = ctypes.c_int()
        self._ck(self.lib.cuDeviceGetCount(ctypes.byref(n)), "cuDeviceGetCount")
        self.devs, self.ctxs = [], []
        for i in range(n.value):
            dev, ctx = ctypes.c_int(), ctypes.c_void_p()
            self._ck(self.lib.cuDeviceGet(ctypes.byref(dev), i), "cuDeviceGet")
            self._ck(self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
            self.devs.append(dev)
            self.ctxs.append(ctx)
        self._host: dict[int, Any] = {}
        self._streams: dict[int, ctypes.c_void_p] = {}
        self._bench: dict[tuple, tuple[DevBuf, DevBuf]] = {}
        self._bufs: list[DevBuf] = []
        self._events: dict[tuple, ctypes.c_void_p] = {}
        self._ev_h2d: dict[tuple, ctypes.c_void_p] = {}

    # -- plumbing ----------------------------------------------------------------------------
    def _errname(self, rc: int) -> str:
        s = ctypes.c_char_p()
        self.lib.cuGetErrorName(rc, ctypes.byref(s))
        return f"{s.value.decode() if s.value else 'error'} ({rc})"

    def _ck(self, rc: int, what: str) -> None:
        if rc != 0:
            raise CudaError(f"{what}: {self._errname(rc)}")

    def _use(self, dev: int) -> None:
        self._ck(self.lib.cuCtxSetCurrent(self.ctxs[dev]), "cuCtxSetCurrent")

    def _sync(self, *devs: int) -> None:
        for d in devs:
            self._use(d)
            self._ck(self.lib.cuCtxSynchronize(), "cuCtxSynchronize")

    def _stream(self, dev: int, slot: int = 0) -> ctypes.c_void_p:
        key = dev * 16 + slot
        if key not in self._streams:
            self._use(dev)
            s = ctypes.c_void_p()
            self._ck(self.lib.cuStreamCreate(ctypes.byref(s), 1), "cuStreamCreate")  # non-blocking
            self._streams[key] = s
        return self._streams[key]

    def _pinned(self, n: int, slot: int = 0) -> int:
        have = self._host.get(slot)
        if have is None or have[1] < n:
            if have is not None:
                self.lib.cuMemFreeHost(ctypes.c_void_p(have[0]))
            p = ctypes.c_void_p()
            self._use(0)
            # Portable pinned memory (flag 1) is usable from every context.
            self._ck(self.lib.cuMemHostAlloc(ctypes.byref(p), ctypes.c_size_t(n), 1), "cuMemHostAlloc")
            self._host[slot] = (p.value, n)
        return self._host[slot][0]

    # -- Backend -----------------------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        v = ctypes.c_int()
        self.lib.cuDriverGetVersion(ctypes.byref(v))
        return {"backend": "ctypes", "version": f"libcuda {v.value // 1000}.{v.value % 1000 // 10}",
                "cuda": f"{v.value // 1000}.{v.value % 1000 // 10}"}

    def device_count(self) -> int:
        return len(self.devs)

    def device_info(self, dev: int) -> dict[str, Any]:
        name = ctypes.create_string_buffer(256)
        self._ck(self.lib.cuDeviceGetName(name, 256, self.devs[dev]), "cuDeviceGetName")
        bus = ctypes.create_string_buffer(64)
        rc = self.lib.cuDeviceGetPCIBusId(bus, 64, self.devs[dev])
        uuid = (ctypes.c_ubyte * 16)()
        uuid_txt = "unknown"
        if self.lib.cuDeviceGetUuid(uuid, self.devs[dev]) == 0:
            h = bytes(uuid).hex()
            uuid_txt = f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
        return {"name": name.value.decode(), "pci_bus_id": bus.value.decode() if rc == 0 else "unknown",
                "uuid": uuid_txt}

    def can_access_peer(self, src: int, dst: int) -> bool:
        ok = ctypes.c_int()
        self._ck(self.lib.cuDeviceCanAccessPeer(ctypes.byref(ok), self.devs[src], self.devs[dst]),
                 "cuDeviceCanAccessPeer")
        return bool(ok.value)

    def enable_peer(self, src: int, dst: int) -> None:
        for a, b in ((src, dst), (dst, src)):
            self._use(a)
            rc = self.lib.cuCtxEnablePeerAccess(self.ctxs[b], 0)
            if rc not in (0, CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED):
                self._ck(rc, f"cuCtxEnablePeerAccess {a}->{b}")

    def alloc(self, dev: int, nbytes: int) -> DevBuf:
        self._use(dev)
        p = ctypes.c_uint64()
        self._ck(self.lib.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(nbytes)), "cuMemAlloc")
        buf = DevBuf(dev, p.value, nbytes)
        self._bufs.append(buf)
        return buf

    def upload(self, buf: DevBuf, data: bytes) -> None:
        self._use(buf.dev)
        self._ck(self.lib.cuMemcpyHtoD_v2(ctypes.c_uint64(buf.ptr), data, ctypes.c_size_t(len(data))),
                 "cuMemcpyHtoD")
        buf.host = bytes(data)

    def first_mismatch(self, a: DevBuf, aoff: int, b: DevBuf, boff: int, n: int) -> int | None:
        if b.host is None:
            return super().first_mismatch(a, aoff, b, boff, n)
        return first_difference(self.download(a, aoff, n), memoryview(b.host)[boff:boff + n])

    def download(self, buf: DevBuf, off: int, n: int) -> bytes:
        h = self._pinned(n, slot=9)  # pinned: D2H at full speed, then one memcpy into bytes
        self._use(buf.dev)
        self._ck(self.lib.cuMemcpyDtoH_v2(ctypes.c_void_p(h), ctypes.c_uint64(buf.ptr + off),
                                          ctypes.c_size_t(n)), "cuMemcpyDtoH")
        return ctypes.string_at(h, n)

    def memset(self, buf: DevBuf, off: int, n: int, value: int) -> None:
        self._use(buf.dev)
        self._ck(self.lib.cuMemsetD8_v2(ctypes.c_uint64(buf.ptr + off), ctypes.c_ubyte(value),
                                        ctypes.c_size_t(n)), "cuMemsetD8")
        self._ck(self.lib.cuCtxSynchronize(), "cuCtxSynchronize")

    def _peer_async(self, dst: DevBuf, doff: int, src: DevBuf, soff: int, n: int,
                    stream: ctypes.c_void_p) -> None:
        self._ck(self.lib.cuMemcpyPeerAsync(
            ctypes.c_uint64(dst.ptr + doff), self.ctxs[dst.dev], ctypes.c_uint64(src.ptr + soff),
            self.ctxs[src.dev], ctypes.c_size_t(n), stream), "cuMemcpyPeerAsync")

    def copy(self, path: str, dst: DevBuf, doff: int, src: DevBuf, soff: int, n: int) -> None:
        if path == "p2p":
            self._use(src.dev)
            self._peer_async(dst, doff, src, soff, n, self._stream(src.dev))
        else:
            h = self._pinned(n)
            self._use(src.dev)
            self._ck(self.lib.cuMemcpyDtoH_v2(ctypes.c_void_p(h), ctypes.c_uint64(src.ptr + soff),
                                              ctypes.c_size_t(n)), "cuMemcpyDtoH")
            self._use(dst.dev)
            self._ck(self.lib.cuMemcpyHtoD_v2(ctypes.c_uint64(dst.ptr + doff), ctypes.c_void_p(h),
                                              ctypes.c_size_t(n)), "cuMemcpyHtoD")
        self._sync(src.dev, dst.dev)

    def _bench_copy(self, path: str, k: int, sd: tuple[int, int], src: DevBuf, dst: DevBuf, nbytes: int) -> None:
        if path == "p2p":
            self._use(sd[0])
            self._peer_async(dst, 0, src, 0, nbytes, self._stream(sd[0], 1 + k))
        else:
            self._staged(src, dst, nbytes, k)

    def _staged(self, src: DevBuf, dst: DevBuf, n: int, k: int) -> None:
        """Chunked D2H on the source's stream, H2D on the destination's, one event per chunk."""
        a, b = self._stream(src.dev, 4 + k), self._stream(dst.dev, 4 + k)
        host = self._pinned(2 * CHUNK, slot=1 + k)
        lib = self.lib
        for c, lo in enumerate(range(0, n, CHUNK)):
            m, h = min(CHUNK, n - lo), host + (c % 2) * CHUNK
            self._use(src.dev)
            last = self._ev_h2d.get((k, c % 2))
            if last is not None:  # the H2D that last read this half must finish before we overwrite it
                self._ck(lib.cuStreamWaitEvent(a, last, 0), "cuStreamWaitEvent")
            self._ck(lib.cuMemcpyDtoHAsync_v2(ctypes.c_void_p(h), ctypes.c_uint64(src.ptr + lo),
                                              ctypes.c_size_t(m), a), "cuMemcpyDtoHAsync")
            ev = self._event(src.dev, ("d2h", k, c % 2))
            self._ck(lib.cuEventRecord(ev, a), "cuEventRecord")
            self._use(dst.dev)
            self._ck(lib.cuStreamWaitEvent(b, ev, 0), "cuStreamWaitEvent")
            self._ck(lib.cuMemcpyHtoDAsync_v2(ctypes.c_uint64(dst.ptr + lo), ctypes.c_void_p(h),
                                              ctypes.c_size_t(m), b), "cuMemcpyHtoDAsync")
            ev2 = self._event(dst.dev, ("h2d", k, c % 2))
            self._ck(lib.cuEventRecord(ev2, b), "cuEventRecord")
            self._ev_h2d[k, c % 2] = ev2

    def _event(self, dev: int, key: tuple) -> ctypes.c_void_p:
        cache = self._events
        if (dev, key) not in cache:
            self._use(dev)
            e = ctypes.c_void_p()
            self._ck(self.lib.cuEventCreate(ctypes.byref(e), 2), "cuEventCreate")  # no timing
            cache[dev, key] = e
        return cache[dev, key]


    def close(self) -> None:
        for buf in self._bufs:
            self._use(buf.dev)
            self.lib.cuMemFree_v2(ctypes.c_uint64(buf.ptr))
        self._bufs.clear()
