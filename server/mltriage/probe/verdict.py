"""Turn worker events + NVML facts into per-pair verdicts, a machine verdict and the fix."""

from __future__ import annotations

from typing import Any

from .model import (BAD_VERDICTS, CORRUPT, CRASH, EXIT_BAD, EXIT_NO_GPU, EXIT_OK, HANG,
                    NO_GPU, NOT_SUPPORTED, OK, SINGLE_GPU, SLOW, UNTESTED, PairResult, worst)

# NCCL_P2P_LEVEL values, nearest first; NODE (two host bridges, one NUMA node) is PHB to NCCL.
NCCL_LEVELS = ("NVL", "PIX", "PXB", "PHB", "SYS")
SLOW_RATIO = 1.0  # P2P no faster than the host-staged path is SLOW


def nccl_level(link: str) -> str | None:
    if link.startswith("NV"):
        return "NVL"
    return {"PIX": "PIX", "PXB": "PXB", "PHB": "PHB", "NODE": "PHB", "SYS": "SYS"}.get(link)


def build_pairs(worker: dict[str, Any], nvml_pairs: dict[tuple[int, int], dict[str, Any]]
                ) -> list[PairResult]:
    """One PairResult per ordered pair of tested CUDA devices."""
    init = next((e for e in worker["events"] if e.get("event") == "init"), None)
    if init is None:
        return []
    devices = init["devices"]
    pairs = {(s, d): PairResult(src=s, dst=d) for s in devices for d in devices if s != d}
    for (s, d), p in pairs.items():
        facts = nvml_pairs.get((s, d))
        if facts:
            p.link, p.nvml_caps = facts["link"], dict(facts["caps"])
    seen_bw: set[tuple[int, int]] = set()
    for e in worker["events"]:
        kind, key = e.get("event"), (e.get("src"), e.get("dst"))
        if kind == "correctness" and key in pairs:
            p = pairs[key]
            p.can_access_peer, p.checks, p.mismatch = e["can_access_peer"], e["checks"], e["first_mismatch"]
            if p.mismatch:
                p.mismatch["failed_checks"] = e["failed"]
        elif kind == "bandwidth" and key in pairs:
            seen_bw.add(key)
            p = pairs[key]
            p.p2p_gbps, p.host_gbps = e.get("p2p_gbps"), e.get("host_gbps")
            p.latency_p2p_us, p.latency_host_us = e.get("latency_p2p_us"), e.get("latency_host_us")
        elif kind == "bidirectional":
            for k in (key, key[::-1]):
                if k in pairs:
                    pairs[k].bidir_p2p_gbps, pairs[k].bidir_host_gbps = e.get("p2p_gbps"), e.get("host_gbps")
    for p in pairs.values():
        _judge(p)
    _apply_failure(worker, pairs)
    return list(pairs.values())


def _judge(p: PairResult) -> None:
    if p.mismatch:
        m = p.mismatch
        p.verdict = CORRUPT
        where = "host-staged control copy" if m["path"] == "host" else "P2P copy"
        p.reason = (f"{where} of {m['size']} bytes ({m['pattern']} pattern) {m['kind']} at offset "
                    f"{m['offset']}: expected {m['expected']}, got {m['got']}")
    elif p.can_access_peer is None:
        p.verdict, p.reason = UNTESTED, "not reached"
    elif not p.can_access_peer:
        p.verdict = NOT_SUPPORTED
        p.reason = "cudaDeviceCanAccessPeer says no: traffic between these GPUs goes through host memory"
    elif p.p2p_gbps is not None and p.host_gbps and p.p2p_gbps <= p.host_gbps * SLOW_RATIO:
        p.verdict = SLOW
        p.reason = (f"P2P {p.p2p_gbps:.1f} GB/s is no faster than staging through host memory "
                    f"({p.host_gbps:.1f} GB/s): the peer path is likely routed through the CPU")
    else:
        p.verdict, p.reason = OK, ""


def _apply_failure(worker: dict[str, Any], pairs: dict[tuple[int, int], PairResult]) -> None:
    status = worker["status"]
    if status not in ("hang", "crash"):
        return
    verdict = HANG if status == "hang" else CRASH
    flight = worker.get("in_flight") or {}
    key = (flight.get("src"), flight.get("dst"))
    last = next((ln.strip() for ln in reversed((worker.get("stderr_tail") or "").splitlines())
                 if ln.strip()), "")
    what = (f"no answer within {worker.get('timeout_s')} s" if verdict == HANG else
            f"worker died ({worker.get('signal') or 'exit ' + str(worker.get('returncode'))}"
            + (f": {last[:200]}" if last else "") + ")")
    for k in ([key, key[::-1]] if flight.get("stage") == "bidirectional" else [key]):
        if k in pairs:
            pairs[k].verdict = verdict
            pairs[k].reason = f"{what} during {flight.get('stage')}"
    for p in pairs.values():
        # Pairs whose checks finished keep their verdicts; the rest were never reached.
        if p.verdict == UNTESTED:
            p.reason = f"not reached: the worker {'hung' if verdict == HANG else 'crashed'} first"


def machine(pairs: list[PairResult], worker: dict[str, Any], inventory: dict[str, Any]
            ) -> tuple[str, int, str]:
    """(machine verdict, exit code, one-line message)."""
    status = worker["status"]
    if status == "error":
        kind = worker.get("error_kind")
        if kind in ("bad_devices", "spawn"):  # the user's arguments, not the machine
            return NO_GPU, 2, worker["message"]
        why = worker["message"]
        nvml_err = str(inventory.get("error") or "")
        if not inventory.get("available") and "Not Found" in nvml_err and "libcuda: not found" in why:
            # The short answer first; every runtime's own reason stays in worker.message.
            return NO_GPU, EXIT_NO_GPU, ("no usable GPU: no NVIDIA driver found (neither NVML nor "
                                         "libcuda.so.1 can be loaded)")
        if not inventory.get("available"):
            why = f"NVML unavailable ({nvml_err}); {why}"
        return NO_GPU, EXIT_NO_GPU, f"no usable GPU: {why}"
    if status in ("hang", "crash") and not pairs:
        verdict = HANG if status == "hang" else CRASH
        return verdict, EXIT_BAD, (f"the probe worker {'hung' if verdict == HANG else 'crashed'} while "
                                   "starting the GPU runtime")
    if status == "ok" and not pairs:
        return SINGLE_GPU, EXIT_OK, "only one GPU is visible: no peer-to-peer pairs to test"
    failure = {"hang": [HANG], "crash": [CRASH]}.get(status, [])  # even if no pair was in flight
    verdict = worst([p.verdict for p in pairs] + failure)
    counts: dict[str, int] = {}
    for p in pairs:
        counts[p.verdict] = counts.get(p.verdict, 0) + 1
    detail = ", ".join(f"{n} {v}" for v, n in counts.items())
    code = EXIT_BAD if verdict in BAD_VERDICTS or verdict == UNTESTED else EXIT_OK
    return verdict, code, f"{verdict}: {len(pairs)} ordered GPU pair(s) tested ({detail})"


def advice(pairs: list[PairResult], n_devices: int) -> dict[str, list[str]]:
    """Env exports / flags that avoid the bad paths, and commands that verify the fix."""
    bad = [p for p in pairs if p.verdict in (CORRUPT, SLOW, HANG, CRASH)]
    out: dict[str, list[str]] = {"exports": [], "flags": [], "verify": [], "notes": []}
    if any(p.verdict == NOT_SUPPORTED for p in pairs):
        out["notes"].append("Pairs marked NOT_SUPPORTED have no P2P: NCCL already routes them "
                            "through host memory (SHM); expected on some PCIe topologies, else "
                            "check ACS/IOMMU/virtualisation below.")
    host_bad = [p for p in bad if p.mismatch and p.mismatch["path"] == "host"]
    if host_bad:
        out["notes"].append("Copies staged through host memory were corrupted too: this is not "
                            "only a P2P problem (suspect GPU memory, PCIe link or driver; check "
                            "`nvidia-smi -q -d ECC` and dmesg for Xid errors).")
    if not bad:
        return out
    level = _safe_level(pairs, bad)
    if level:
        out["exports"].append(f"export NCCL_P2P_LEVEL={level}")
        out["notes"].append(f"Only paths beyond {level} are bad: NCCL_P2P_LEVEL={level} keeps P2P "
                            "on the links verified good and routes the rest through host memory.")
    else:
        out["exports"].append("export NCCL_P2P_DISABLE=1")
    out["flags"].append("vllm serve ... --disable-custom-all-reduce")
    env = out["exports"][0].removeprefix("export ")
    out["verify"] += [
        f"{env} NCCL_DEBUG=INFO torchrun --nproc_per_node={n_devices} your_script.py 2>&1 "
        "| grep -E 'via (P2P|SHM)'   # the bad pairs must now say via SHM",
        f"{env} all_reduce_perf -b 8 -e 256M -f 2 -g {n_devices}   # nccl-tests: #wrong must be 0",
        "mltriage probe --refresh   # after a driver/BIOS/ACS fix: every pair OK",
    ]
    if any(p.verdict == SLOW for p in bad):
        out["notes"].append("SLOW P2P usually means PCIe ACS redirect or an IOMMU in translated "
                            "mode sends peer traffic through the root complex: disable ACS on the "
                            "switches (BIOS) or boot with iommu=pt.")
    return out


def _safe_level(pairs: list[PairResult], bad: list[PairResult]) -> str | None:
    """The NCCL_P2P_LEVEL that keeps P2P exactly on the path types verified good, if one exists.

    It must sit below the nearest bad path type; we stop at the farthest good one, so path types
    this probe never saw stay off as well.
    """
    bad_levels = [nccl_level(p.link) for p in bad]
    if None in bad_levels:
        return None
    nearest_bad = min(NCCL_LEVELS.index(x) for x in bad_levels)
    good = [NCCL_LEVELS.index(nccl_level(p.link)) for p in pairs
            if p.verdict == OK and nccl_level(p.link)]
    below = [g for g in good if g < nearest_bad]
    return NCCL_LEVELS[max(below)] if below else None
