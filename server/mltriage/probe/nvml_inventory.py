"""GPU inventory and P2P capability through NVML, one guarded call at a time.

Every NVML call is wrapped: a binding quirk (nvidia-ml-py 13.x defines
``NVML_P2P_CAPS_INDEX_READ = 0,`` -- a tuple -- so passing it raises ``TypeError``) or an
unsupported query becomes "unknown" for that one fact, never a crash. We pass the documented
integer values from nvml.h rather than the binding's constants for the same reason.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

# nvmlGpuP2PCapsIndex_t (nvml.h)
P2P_CAPS = {"read": 0, "write": 1, "nvlink": 2, "atomics": 3}
# nvmlGpuP2PStatus_t (nvml.h)
P2P_STATUS = {
    0: "OK",
    1: "CHIPSET_NOT_SUPPORTED",
    2: "GPU_NOT_SUPPORTED",
    3: "IOH_TOPOLOGY_NOT_SUPPORTED",
    4: "DISABLED_BY_REGKEY",
    5: "NOT_SUPPORTED",
    6: "UNKNOWN",
}
# nvmlGpuTopologyLevel_t (nvml.h) -> the words `nvidia-smi topo -m` prints.
TOPOLOGY = {0: "SELF", 10: "PIX", 20: "PXB", 30: "PHB", 40: "NODE", 50: "SYS"}
VIRT_MODE = {0: "NONE", 1: "PASSTHROUGH", 2: "VGPU", 3: "HOST_VGPU", 4: "HOST_VSGA"}
MAX_NVLINKS = 18  # NVML_NVLINK_MAX_LINKS


def load_nvml() -> Any:
    """The NVML binding: the fake named by MLTRIAGE_PROBE_FAKE_NVML (tests), else pynvml."""
    spec = os.environ.get("MLTRIAGE_PROBE_FAKE_NVML")
    if spec:
        from .fake_nvml import FakeNvml

        return FakeNvml(json.loads(spec))
    import pynvml  # from nvidia-ml-py

    return pynvml


def _text(value: Any) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def normalize_bus_id(bus_id: str) -> str:
    """'00000000:00:06.0' (NVML) and '0000:00:06.0' (CUDA) -> '0000:00:06.0'."""
    bus_id = bus_id.strip().lower()
    parts = bus_id.split(":")
    if len(parts) == 3:
        return f"{int(parts[0], 16):04x}:{parts[1]}:{parts[2]}"
    if len(parts) == 2:
        return f"0000:{parts[0]}:{parts[1]}"
    return bus_id


def _err(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def collect(nvml: Any = None) -> dict[str, Any]:
    """Inventory dict (see README.md, "inventory"). Never raises."""
    t0 = time.perf_counter()
    inv: dict[str, Any] = {"available": False, "error": None, "gpus": [], "pairs": []}
    try:
        nvml = nvml if nvml is not None else load_nvml()
        nvml.nvmlInit()
    except Exception as exc:  # ImportError, library not found, driver not loaded
        inv["error"] = _err(exc)
        inv["seconds"] = round(time.perf_counter() - t0, 4)
        return inv
    try:
        _fill(nvml, inv)
        inv["available"] = True
    except Exception as exc:  # a failure in the device count/handle itself
        inv["error"] = _err(exc)
    finally:
        try:
            nvml.nvmlShutdown()
        except Exception:
            pass
    inv["seconds"] = round(time.perf_counter() - t0, 4)
    return inv


def _call(errors: list[str], what: str, fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except Exception as exc:
        errors.append(f"{what}: {_err(exc)}")
        return None


def _fill(nvml: Any, inv: dict[str, Any]) -> None:
    errors: list[str] = []
    drv = _call(errors, "driver version", nvml.nvmlSystemGetDriverVersion)
    inv["driver_version"] = _text(drv) if drv is not None else "unknown"
    cuda = _call(errors, "cuda driver version", nvml.nvmlSystemGetCudaDriverVersion)
    inv["cuda_driver_version"] = f"{cuda // 1000}.{cuda % 1000 // 10}" if cuda else "unknown"
    count = nvml.nvmlDeviceGetCount()
    handles = [nvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)]
    for i, h in enumerate(handles):
        name = _call(errors, f"GPU{i} name", nvml.nvmlDeviceGetName, h)
        uuid = _call(errors, f"GPU{i} uuid", nvml.nvmlDeviceGetUUID, h)
        pci = _call(errors, f"GPU{i} pci", nvml.nvmlDeviceGetPciInfo, h)
        virt = _call(errors, f"GPU{i} virtualization", nvml.nvmlDeviceGetVirtualizationMode, h)
        bus = normalize_bus_id(_text(pci.busId)) if pci is not None else "unknown"
        inv["gpus"].append({
            "nvml_index": i,
            "name": _text(name) if name is not None else "unknown",
            "uuid": _text(uuid) if uuid is not None else "unknown",
            "pci_bus_id": bus,
            "virtualization": VIRT_MODE.get(virt, "unknown") if virt is not None else "unknown",
            "nvlinks": _nvlinks(nvml, h),
        })
    for i, hi in enumerate(handles):
        for j, hj in enumerate(handles):
            if i != j:
                inv["pairs"].append(_pair(nvml, inv["gpus"], i, j, hi, hj, errors))
    _attribute_unresolved_links(inv)
    inv["errors"] = errors


def _attribute_unresolved_links(inv: dict[str, Any]) -> None:
    """Name the link of NVLink peers whose links do not end at the peer's own bus id.

    In the 2xH200 microVM every link's remote bus id reads ffffffff:ff:ff.0, and on NVSwitch
    systems links end at a switch; either way ``nvidia-smi topo -m`` prints NV<links> and the
    P2P NVLINK capability still says which pairs talk over NVLink. So: NV<links not ending at
    a GPU> when the capability is OK, "NVL" if even that count is unknown.
    """
    gpu_buses = {g["pci_bus_id"] for g in inv["gpus"]}
    for p in inv["pairs"]:
        if p["nvlinks"] or p["caps"].get("nvlink") != "OK":
            continue
        elsewhere = sum(1 for link in inv["gpus"][p["a"]]["nvlinks"] if link["remote"] not in gpu_buses)
        p["nvlinks"] = elsewhere
        p["link"] = f"NV{elsewhere}" if elsewhere else "NVL"


def _nvlinks(nvml: Any, handle: Any) -> list[dict[str, Any]]:
    """Active NVLinks with the PCI bus id of the remote end (empty when NVLink is absent)."""
    links = []
    for link in range(MAX_NVLINKS):
        try:
            if nvml.nvmlDeviceGetNvLinkState(handle, link) != 1:
                continue
            remote = nvml.nvmlDeviceGetNvLinkRemotePciInfo(handle, link)
            links.append({"link": link, "remote": normalize_bus_id(_text(remote.busId))})
        except Exception:
            # NOT_SUPPORTED on PCIe-only parts and past the last link: stop quietly.
            break
    return links


def _pair(nvml: Any, gpus: list[dict], i: int, j: int, hi: Any, hj: Any,
          errors: list[str]) -> dict[str, Any]:
    caps = {}
    for cap, index in P2P_CAPS.items():
        code = _call(errors, f"P2P {cap} GPU{i}->GPU{j}", nvml.nvmlDeviceGetP2PStatus, hi, hj, index)
        caps[cap] = P2P_STATUS.get(code, f"code {code}") if code is not None else "unknown"
    level = _call(errors, f"topology GPU{i}-GPU{j}", nvml.nvmlDeviceGetTopologyCommonAncestor, hi, hj)
    topo = TOPOLOGY.get(level, "unknown") if level is not None else "unknown"
    nvl = sum(1 for link in gpus[i]["nvlinks"] if link["remote"] == gpus[j]["pci_bus_id"])
    return {
        "a": i,
        "b": j,
        "caps": caps,
        "pcie_topology": topo,
        "nvlinks": nvl,
        # What `nvidia-smi topo -m` would print: NVLink wins over the PCIe ancestor.
        "link": f"NV{nvl}" if nvl else topo,
    }
