"""The human-readable report: a pairs x verdict matrix with GB/s, then details and the fix."""

from __future__ import annotations

from .model import ProbeReport


def _cell(report: ProbeReport, s: int, d: int) -> str:
    if s == d:
        return "-"
    p = report.pair(s, d)
    if p is None:
        return "?"
    if p.p2p_gbps is not None and p.verdict in ("OK", "SLOW"):
        return f"{p.verdict} {p.p2p_gbps:.0f}"
    return p.verdict


def matrix(report: ProbeReport) -> str:
    devs = sorted({p.src for p in report.pairs} | {p.dst for p in report.pairs})
    cells = {(s, d): _cell(report, s, d) for s in devs for d in devs}
    width = max([len(c) for c in cells.values()] + [6]) + 2
    lines = ["src\\dst".ljust(9) + "".join(f"GPU{d}".rjust(width) for d in devs)]
    for s in devs:
        lines.append(f"GPU{s}".ljust(9) + "".join(cells[s, d].rjust(width) for d in devs))
    return "\n".join(lines)


def text(report: ProbeReport) -> str:
    out = [f"mltriage probe: {report.message}"]
    if report.cache.get("hit"):
        out.append(f"(cached result from {report.created}; run with --refresh to probe again)")
    rt = report.runtime
    inv = report.inventory
    if rt:
        names = ", ".join(f"GPU{d['index']} {d['name']} [{d['pci_bus_id']}]" for d in rt.get("devices", []))
        out.append(f"runtime: {rt.get('backend')} {rt.get('version')}; driver "
                   f"{inv.get('driver_version', 'unknown')}; {names}")
    if not inv.get("available"):
        out.append(f"NVML: unavailable ({inv.get('error')})")
    if report.pairs:
        out += ["", "P2P verdict and one-way P2P bandwidth (GB/s):", matrix(report), ""]
        out.append("pair              verdict        link  P2P GB/s host GB/s  bidir P2P/host   lat P2P/host us")
        for p in report.pairs:
            out.append(
                f"{p.label:<17} {p.verdict:<14} {p.link:>5} {_f(p.p2p_gbps):>9} {_f(p.host_gbps):>9}"
                f"  {_f(p.bidir_p2p_gbps):>7}/{_f(p.bidir_host_gbps):<7} {_f(p.latency_p2p_us):>6}/{_f(p.latency_host_us)}")
        reasons = [f"  {p.label}: {p.reason}" for p in report.pairs if p.reason and p.verdict != "OK"]
        if reasons:
            out += ["", "why:"] + reasons
        caps = [f"  {p.label}: " + " ".join(f"{k}={v}" for k, v in p.nvml_caps.items())
                for p in report.pairs if p.nvml_caps]
        if caps:
            out += ["", "NVML P2P capability:"] + caps
    w = report.worker
    if w.get("status") in ("hang", "crash"):
        out += ["", f"worker {w['status']}: in flight {w.get('in_flight')}; stderr tail:"]
        out += ["  " + line for line in (w.get("stderr_tail") or "(empty)").strip().splitlines()[-15:]]
    plat = report.platform
    if plat:
        iommu, virt, acs = plat.get("iommu", {}), plat.get("virtualization", {}), plat.get("acs", {})
        acs_txt = acs.get("status", "unknown") if report.pairs else "n/a"
        if acs.get("pairs"):
            acs_txt = ", ".join(f"{p['a']}<->{p['b']}: redirect={p['acs_redirect']}" for p in acs["pairs"])
        out += ["", f"platform: IOMMU {iommu.get('mode', 'unknown')}; virtualised "
                    f"{virt.get('hypervisor', 'unknown')} ({virt.get('hint', 'unknown')}); ACS {acs_txt}"]
    adv = report.advice
    if adv.get("exports") or adv.get("flags"):
        out += ["", "fix:"] + [f"  {x}" for x in adv["exports"] + adv.get("flags", [])]
        out += ["verify:"] + [f"  {x}" for x in adv.get("verify", [])]
    if adv.get("notes"):
        out += ["", "notes:"] + [f"  - {x}" for x in adv["notes"]]
    t = report.timing
    if t.get("worker_probe_s") is not None:
        out += ["", f"time: {t.get('total_wall_s')} s total; worker {t.get('worker_wall_s')} s of which "
                    f"runtime start {t.get('worker_init_s')} s and probe {t.get('worker_probe_s')} s"]
    return "\n".join(out)


def _f(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"
