"""A simulated GPU runtime for CI: device memory is host RAM, faults come from a JSON spec.

Selected by ``MLTRIAGE_PROBE_FAKE`` so that tests drive the real worker subprocess, timeout
and parsing path. Spec keys (all optional):
  devices: int (default 2); no_runtime: true
  peer: {"0->1": false}                   # cudaDeviceCanAccessPeer answer (default true)
  corrupt: [{"src": 0, "dst": 1, "path": "p2p", "offset": 4096}]   # flip that byte
  overrun: [{"src": 0, "dst": 1, "path": "p2p"}]                   # write one byte past the end
  hang: {"stage": "init" | "correctness" | "bandwidth" | ..., "src": 0, "dst": 1}
  crash: {"stage": ..., "src": .., "dst": .., "signal": "abort" | "segv", "stderr": "text"}
  gbps: {"p2p": 390, "host": 25, "0->1": {"p2p": 3}}; latency_us: {"p2p": 2, "host": 9}
"""

from __future__ import annotations

import ctypes
import os
import sys
import time
from typing import Any

from .base import Backend, NoRuntime


class FakeBuf:
    def __init__(self, dev: int, nbytes: int):
        self.dev = dev
        self.mem = bytearray(nbytes)


class FakeBackend(Backend):
    name = "fake"

    def __init__(self, spec: dict[str, Any]):
        self.spec = spec
        if spec.get("no_runtime"):
            raise NoRuntime("fake: no GPU runtime (spec no_runtime)")
        self.on_stage("init", -1, -1)

    def info(self) -> dict[str, Any]:
        return {"backend": "fake", "version": "0"}

    def device_count(self) -> int:
        return int(self.spec.get("devices", 2))

    def device_info(self, dev: int) -> dict[str, Any]:
        return {"name": "Fake H200", "pci_bus_id": f"0000:{dev + 6:02x}:00.0",
                "uuid": f"GPU-fake-{dev}"}

    def can_access_peer(self, src: int, dst: int) -> bool:
        return bool(self.spec.get("peer", {}).get(f"{src}->{dst}", True))

    def enable_peer(self, src: int, dst: int) -> None:
        pass

    def alloc(self, dev: int, nbytes: int) -> FakeBuf:
        return FakeBuf(dev, nbytes)

    def upload(self, buf: FakeBuf, data: bytes) -> None:
        buf.mem[:len(data)] = data

    def download(self, buf: FakeBuf, off: int, n: int) -> bytes:
        return bytes(buf.mem[off:off + n])

    def memset(self, buf: FakeBuf, off: int, n: int, value: int) -> None:
        buf.mem[off:off + n] = bytes([value]) * n

    def copy(self, path: str, dst: FakeBuf, doff: int, src: FakeBuf, soff: int, n: int) -> None:
        dst.mem[doff:doff + n] = src.mem[soff:soff + n]
        for fault in self.spec.get("corrupt", []):
            if self._match(fault, path, src, dst) and fault["offset"] < n:
                dst.mem[doff + fault["offset"]] ^= 0x01
        for fault in self.spec.get("overrun", []):
            if self._match(fault, path, src, dst):
                dst.mem[doff + n] ^= 0xFF

    @staticmethod
    def _match(fault: dict, path: str, src: FakeBuf, dst: FakeBuf) -> bool:
        return (fault.get("src", src.dev) == src.dev and fault.get("dst", dst.dev) == dst.dev
                and fault.get("path", "p2p") == path)

    def _gbps(self, path: str, src: int, dst: int) -> float:
        table = self.spec.get("gbps", {})
        return float(table.get(f"{src}->{dst}", {}).get(path, table.get(path,
                     390.0 if path == "p2p" else 25.0)))

    def bench(self, path: str, directions: list[tuple[int, int]], nbytes: int, iters: int) -> float:
        # Modelled time: directions run concurrently, so the slowest one sets the pace.
        return max(nbytes / (self._gbps(path, s, d) * 1e9) for s, d in directions)

    def latency(self, path: str, src: int, dst: int, iters: int) -> float:
        return float(self.spec.get("latency_us", {}).get(path, 2.0 if path == "p2p" else 9.0)) / 1e6

    def on_stage(self, stage: str, src: int | None, dst: int | None) -> None:
        for key in ("hang", "crash"):
            fault = self.spec.get(key)
            if not fault or fault.get("stage") != stage:
                continue
            if stage not in ("init", "prepare") and (fault.get("src", src), fault.get("dst", dst)) != (src, dst):
                continue
            if key == "hang":
                time.sleep(3600)  # the parent's timeout must fire
            sys.stderr.write(fault.get("stderr", "fake driver failure\n"))
            sys.stderr.flush()
            if fault.get("signal") == "segv":
                ctypes.string_at(0)  # a real SIGSEGV, as a broken driver would give
            os.abort()
