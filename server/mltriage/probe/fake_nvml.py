"""A pynvml-shaped fake for the NVML boundary (tests and ``MLTRIAGE_PROBE_FAKE_NVML``).

Spec (JSON): {"missing": true} (library absent) or
{"driver": "580.159.04", "cuda": 13000,
 "gpus": [{"name": ..., "uuid": ..., "bus": "00000000:00:06.0"}],
 "p2p": {"0,1,read": "TypeError" | <status code>}, default 0 (OK),
 "nvlinks": {"0,1": 18}, "nvlink_remote_unknown": true, "ancestor": {"0,1": 30}}
 (ancestor default 50 = SYS).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any


class NVMLError(Exception):
    pass


class FakeNvml:
    def __init__(self, spec: dict[str, Any]):
        self.spec = spec
        self.gpus = spec.get("gpus", [])

    def nvmlInit(self) -> None:
        if self.spec.get("missing"):
            raise NVMLError("NVML Shared Library Not Found")

    def nvmlShutdown(self) -> None:
        pass

    def nvmlSystemGetDriverVersion(self) -> str:
        return self.spec.get("driver", "580.159.04")

    def nvmlSystemGetCudaDriverVersion(self) -> int:
        return self.spec.get("cuda", 13000)

    def nvmlDeviceGetCount(self) -> int:
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, i: int) -> int:
        return i

    def nvmlDeviceGetName(self, h: int) -> str:
        return self.gpus[h].get("name", "NVIDIA H200")

    def nvmlDeviceGetUUID(self, h: int) -> str:
        return self.gpus[h].get("uuid", f"GPU-fake-{h}")

    def nvmlDeviceGetPciInfo(self, h: int) -> Any:
        return SimpleNamespace(busId=self.gpus[h].get("bus", f"00000000:{h + 6:02x}:00.0").encode())

    def nvmlDeviceGetVirtualizationMode(self, h: int) -> int:
        return self.spec.get("virtualization", 0)

    def _links(self, h: int) -> list[int]:
        peers = []
        for key, n in self.spec.get("nvlinks", {}).items():
            a, b = (int(x) for x in key.split(","))
            if h in (a, b):
                peers += [b if h == a else a] * n
        return peers

    def nvmlDeviceGetNvLinkState(self, h: int, link: int) -> int:
        if link >= len(self._links(h)):
            raise NVMLError("Not Supported")
        return 1

    def nvmlDeviceGetNvLinkRemotePciInfo(self, h: int, link: int) -> Any:
        if self.spec.get("nvlink_remote_unknown"):  # as the Firecracker VM reports it
            return SimpleNamespace(busId=b"ffffffff:ff:ff.0")
        return self.nvmlDeviceGetPciInfo(self._links(h)[link])

    def nvmlDeviceGetP2PStatus(self, h1: int, h2: int, index: int) -> int:
        name = {0: "read", 1: "write", 2: "nvlink", 3: "atomics"}.get(index, str(index))
        linked = any(sorted((h1, h2)) == sorted(int(x) for x in k.split(","))
                     for k in self.spec.get("nvlinks", {}))
        default = 5 if name == "nvlink" and not linked else 0  # NVLINK is OK only over NVLink
        value = self.spec.get("p2p", {}).get(f"{h1},{h2},{name}", default)
        if value == "TypeError":
            # What nvidia-ml-py 13.615 raised on the real 2xH200 host for the READ index.
            raise TypeError("argument 3: TypeError: Don't know how to convert parameter 3")
        return value

    def nvmlDeviceGetTopologyCommonAncestor(self, h1: int, h2: int) -> int:
        key = f"{min(h1, h2)},{max(h1, h2)}"
        return self.spec.get("ancestor", {}).get(key, 50)
