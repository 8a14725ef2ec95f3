"""Platform facts that break P2P: PCIe ACS on the bridges between GPUs, IOMMU mode, virtualisation.

Read from /proc and /sys (``root`` is injectable for tests); ``lspci -vvv`` is a fallback for
ACS when the config space beyond 64 bytes is not readable (non-root). Anything we cannot read
is reported as "unknown" -- a VM such as the Firecracker 2xH200 host has neither lspci nor
IOMMU groups.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from typing import Any, Callable

ACS_CAP_ID = 0x000D
# ACS control register bits (PCIe base spec 7.7.11.3)
ACS_BITS = ["SrcValid", "TransBlk", "ReqRedir", "CmpltRedir", "UpstreamFwd", "EgressCtrl", "DirectTrans"]
BDF_RE = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")


def _read(path: str, binary: bool = False) -> Any:
    try:
        with open(path, "rb" if binary else "r") as f:
            return f.read()
    except OSError:
        return None


def iommu_facts(root: str, gpu_bus_ids: list[str]) -> dict[str, Any]:
    cmdline = _read(os.path.join(root, "proc/cmdline")) or ""
    flags = [t for t in cmdline.split() if "iommu" in t.lower()]
    groups_dir = os.path.join(root, "sys/kernel/iommu_groups")
    try:
        groups: Any = len(os.listdir(groups_dir))
    except OSError:
        groups = "unknown"
    gpu_groups = {}
    for bdf in gpu_bus_ids:
        kind = _read(os.path.join(root, "sys/bus/pci/devices", bdf, "iommu_group/type"))
        gpu_groups[bdf] = kind.strip() if kind else "unknown"
    kinds = set(gpu_groups.values()) - {"unknown"}
    if any(f in ("intel_iommu=off", "amd_iommu=off", "iommu=off") for f in flags):
        mode = "off"
    elif kinds:
        # "identity" = passthrough; "DMA"/"DMA-FQ" = translated (P2P may be blocked or slow).
        mode = "passthrough" if kinds == {"identity"} else "translated"
    elif any(f in ("iommu=pt", "iommu.passthrough=1") for f in flags):
        mode = "passthrough"
    elif groups == 0:
        mode = "off or not exposed"
    else:
        mode = "unknown"
    return {"cmdline_flags": flags, "groups": groups, "gpu_groups": gpu_groups, "mode": mode}


def virtualization_facts(root: str) -> dict[str, Any]:
    cpuinfo = _read(os.path.join(root, "proc/cpuinfo"))
    hypervisor: Any = "unknown"
    if cpuinfo is not None:
        hypervisor = bool(re.search(r"^flags\s*:.*\bhypervisor\b", cpuinfo, re.M))
    dmi = {k: (_read(os.path.join(root, "sys/class/dmi/id", k)) or "").strip()
           for k in ("sys_vendor", "product_name")}
    hv_type = (_read(os.path.join(root, "sys/hypervisor/type")) or "").strip()
    cmdline = _read(os.path.join(root, "proc/cmdline")) or ""
    hint = hv_type or dmi["product_name"] or dmi["sys_vendor"]
    if "firecracker" in cmdline.lower():
        hint = "Firecracker microVM"
    return {"hypervisor": hypervisor, "hint": hint or "unknown", **dmi}


def parse_acs_config(config: bytes) -> dict[str, Any]:
    """ACS control bits from a PCI config space dump (needs the 4 KiB extended space)."""
    if len(config) < 0x104:
        return {"acs": "unknown", "reason": "extended config space not readable (needs root)"}
    off, seen = 0x100, set()
    while off and off not in seen and off + 8 <= len(config):
        seen.add(off)
        header = int.from_bytes(config[off:off + 4], "little")
        if header in (0, 0xFFFFFFFF):
            break
        if header & 0xFFFF == ACS_CAP_ID:
            ctrl = int.from_bytes(config[off + 6:off + 8], "little")
            return _acs_result({name: bool(ctrl >> i & 1) for i, name in enumerate(ACS_BITS)})
        off = (header >> 20) & 0xFFC
    return {"acs": "absent", "redirect": False}


def parse_lspci_acs(text: str) -> dict[str, Any]:
    """The ``ACSCtl:`` line of ``lspci -vvv`` ("ReqRedir+ CmpltRedir+ ...")."""
    m = re.search(r"ACSCtl:\s*(.*)", text)
    if not m:
        return {"acs": "absent", "redirect": False}
    bits = {name: sign == "+" for name, sign in re.findall(r"(\w+)([+-])", m.group(1))}
    return _acs_result(bits)


def _acs_result(bits: dict[str, bool]) -> dict[str, Any]:
    on = [k for k, v in bits.items() if v]
    # Request/completion redirect send peer traffic up to the root complex: P2P breaks or crawls.
    redirect = bits.get("ReqRedir", False) or bits.get("CmpltRedir", False)
    return {"acs": " ".join(on) or "none enabled", "redirect": redirect}


def _upstream_bridges(root: str, bdf: str) -> list[str]:
    real = os.path.realpath(os.path.join(root, "sys/bus/pci/devices", bdf))
    parts = [p for p in real.split(os.sep) if BDF_RE.match(p)]
    return parts[:-1] if parts and parts[-1] == bdf else []


def acs_facts(root: str, gpu_bus_ids: list[str],
              lspci: Callable[[str], str | None] | None = None) -> dict[str, Any]:
    if not os.path.isdir(os.path.join(root, "sys/bus/pci/devices")):
        return {"status": "unknown", "reason": "no /sys/bus/pci", "pairs": []}
    lspci = lspci or _run_lspci
    chains = {b: _upstream_bridges(root, b) for b in gpu_bus_ids
              if os.path.exists(os.path.join(root, "sys/bus/pci/devices", b))}
    cache: dict[str, dict[str, Any]] = {}

    def bridge(bdf: str) -> dict[str, Any]:
        if bdf not in cache:
            cfg = _read(os.path.join(root, "sys/bus/pci/devices", bdf, "config"), binary=True) or b""
            res = parse_acs_config(cfg)
            if res["acs"] == "unknown":
                out = lspci(bdf)
                if out is not None:
                    res = parse_lspci_acs(out)
            cache[bdf] = {"bdf": bdf, **res}
        return cache[bdf]

    pairs = []
    for i, a in enumerate(gpu_bus_ids):
        for b in gpu_bus_ids[i + 1:]:
            if a not in chains or b not in chains:
                pairs.append({"a": a, "b": b, "bridges": [], "acs_redirect": "unknown",
                              "reason": "GPU not in /sys/bus/pci"})
                continue
            common = set(chains[a]) & set(chains[b])
            # Peer traffic crosses the bridges below the common ancestor on both sides.
            between = [x for x in chains[a] + chains[b] if x not in common]
            infos = [bridge(x) for x in between]
            redirect = [x["redirect"] for x in infos if "redirect" in x]
            pairs.append({
                "a": a,
                "b": b,
                "bridges": infos,
                # No bridge between them (same switch port or root complex): nothing to redirect.
                "acs_redirect": True if any(redirect) else
                (False if len(redirect) == len(infos) else "unknown"),
            })
    return {"status": "checked", "pairs": pairs}


def _run_lspci(bdf: str) -> str | None:
    exe = shutil.which("lspci")
    if not exe:
        return None
    try:
        return subprocess.run([exe, "-vvv", "-s", bdf], capture_output=True, text=True,
                              timeout=5).stdout
    except (OSError, subprocess.SubprocessError):
        return None


def collect(gpu_bus_ids: list[str], root: str = "/",
            lspci: Callable[[str], str | None] | None = None) -> dict[str, Any]:
    """Platform dict (see README.md, "platform"). Never raises."""
    bus_ids = [b for b in gpu_bus_ids if BDF_RE.match(b)]
    facts: dict[str, Any] = {}
    for name, fn in (("iommu", lambda: iommu_facts(root, bus_ids)),
                     ("virtualization", lambda: virtualization_facts(root)),
                     ("acs", lambda: acs_facts(root, bus_ids, lspci))):
        try:
            facts[name] = fn()
        except Exception as exc:  # a strange sysfs must not stop the probe
            facts[name] = {"status": "unknown", "reason": f"{type(exc).__name__}: {exc}"}
    return facts
