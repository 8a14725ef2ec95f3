"""The probe's entry points for the CLI, the language server and the diagnosis engine."""

from __future__ import annotations

import datetime as _dt
import os
import time
from typing import Any

from . import cache, nvml_inventory, platform_facts, runner, verdict
from .checks import DEFAULT_SIZES
from .model import EXIT_NO_GPU, NO_GPU, ProbeReport

DEFAULT_TIMEOUT_S = 90.0  # importing torch and starting CUDA on a cold machine can take a while


def load_cached_report(nvml: Any = None) -> ProbeReport | None:
    """The cached report for this machine state, or None. Does no GPU work (NVML only)."""
    key = cache.machine_key(nvml_inventory.collect(nvml))
    if key is None:
        return None
    data = cache.load(key)
    if data is None:
        return None
    try:
        report = ProbeReport.from_json(data)
    except (KeyError, TypeError, ValueError):
        return None
    report.cache["hit"] = True
    return report


def run_probe(refresh: bool = False, timeout_s: float = DEFAULT_TIMEOUT_S,
              devices: list[int] | None = None, sizes: list[int] | None = None,
              bandwidth: bool = True, backend: str = "auto", python: str | None = None,
              nvml: Any = None, platform_root: str = "/") -> ProbeReport:
    """Probe every ordered pair of ``devices`` (CUDA ordinals; default all), or reuse the cache."""
    t0 = time.perf_counter()
    inventory = nvml_inventory.collect(nvml)
    options = {"devices": devices, "sizes": list(sizes or DEFAULT_SIZES), "bandwidth": bandwidth,
               "backend": backend}
    key = cache.machine_key(inventory)
    if key is not None and not refresh:
        data = cache.load(key)
        if data is not None and data.get("options") == options:
            report = ProbeReport.from_json(data)
            report.cache["hit"] = True
            return report

    if inventory["available"] and not inventory["gpus"]:
        return _no_gpu(inventory, options, "NVML reports no NVIDIA GPU on this machine", t0)

    worker = runner.run_worker({**options, "sizes": options["sizes"]}, timeout_s, python)
    init = next((e for e in worker["events"] if e.get("event") == "init"), {})
    runtime = _runtime(init, inventory)
    cuda_to_nvml = {d["index"]: d.get("nvml_index") for d in runtime.get("devices", [])}
    nvml_pairs = {}
    for p in inventory.get("pairs", []):
        src = next((c for c, n in cuda_to_nvml.items() if n == p["a"]), None)
        dst = next((c for c, n in cuda_to_nvml.items() if n == p["b"]), None)
        if src is not None and dst is not None:
            nvml_pairs[src, dst] = p

    pairs = verdict.build_pairs(worker, nvml_pairs)
    mverdict, code, message = verdict.machine(pairs, worker, inventory)
    tested = init.get("devices") or []
    bus_ids = [runtime["devices"][i]["pci_bus_id"] for i in tested if i < len(runtime.get("devices", []))]
    platform = platform_facts.collect(bus_ids, root=platform_root)
    adv = verdict.advice(pairs, len(tested))
    _platform_notes(platform, adv)
    done = next((e for e in worker["events"] if e.get("event") == "done"), {})
    report = ProbeReport(
        machine_verdict=mverdict,
        exit_code=code,
        message=message,
        pairs=pairs,
        advice=adv,
        inventory=inventory,
        platform=platform,
        runtime=runtime,
        worker={k: worker.get(k) for k in ("status", "returncode", "signal", "stderr_tail",
                                           "in_flight", "message", "wall_s", "timeout_s")},
        timing={
            "total_wall_s": round(time.perf_counter() - t0, 3),
            "nvml_s": inventory.get("seconds"),
            "worker_wall_s": worker.get("wall_s"),
            "worker_init_s": init.get("init_s"),  # import + runtime/context start in the worker
            "worker_probe_s": done.get("probe_s"),  # the GPU work itself, runtime already up
        },
        options=options,
        created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    )
    report.cache = {"key": key, "hit": False, "path": None}
    if key is not None and code != EXIT_NO_GPU:
        report.cache["path"] = cache.save(key, report.to_json())
    return report


def _no_gpu(inventory: dict, options: dict, why: str, t0: float) -> ProbeReport:
    return ProbeReport(machine_verdict=NO_GPU, exit_code=EXIT_NO_GPU, message=f"no usable GPU: {why}",
                       inventory=inventory, options=options,
                       timing={"total_wall_s": round(time.perf_counter() - t0, 3)},
                       created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))


def _runtime(init: dict[str, Any], inventory: dict[str, Any]) -> dict[str, Any]:
    if not init:
        return {}
    by_bus = {g["pci_bus_id"]: g["nvml_index"] for g in inventory.get("gpus", [])}
    by_uuid = {g["uuid"]: g["nvml_index"] for g in inventory.get("gpus", [])}
    devices = []
    for idx in range(init.get("count", 0)):
        info = init.get("device_info", {}).get(str(idx), {})
        bus = nvml_inventory.normalize_bus_id(info.get("pci_bus_id", "unknown"))
        nvml_index = by_uuid.get(info.get("uuid"), by_bus.get(bus))
        devices.append({"index": idx, "name": info.get("name"), "pci_bus_id": bus,
                        "uuid": info.get("uuid"), "nvml_index": nvml_index})
    return {"backend": init.get("backend"), "version": init.get("version"),
            "cuda": init.get("cuda"), "devices": devices,
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}


def _platform_notes(platform: dict[str, Any], adv: dict[str, list[str]]) -> None:
    acs = platform.get("acs", {})
    redirected = [p for p in acs.get("pairs", []) if p.get("acs_redirect") is True]
    if redirected:
        adv["notes"].append("PCIe ACS request/completion redirect is on between "
                            + ", ".join(f"{p['a']}<->{p['b']}" for p in redirected)
                            + ": peer traffic is forced through the root complex.")
    if platform.get("iommu", {}).get("mode") == "translated":
        adv["notes"].append("The IOMMU translates GPU DMA (not passthrough): P2P may be blocked "
                            "or slow; iommu=pt on the kernel command line avoids it.")
