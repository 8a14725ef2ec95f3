"""Bring GPU peer-to-peer evidence into a diagnosis: the local probe's verdicts (``--probe``)
and topology matrices the user pasted into the log (``nvidia-smi topo -m``,
``p2pBandwidthLatencyTest``)."""

from __future__ import annotations

from mltriage.engine.prefixes import parse_prefixes_behind
from mltriage.engine.reader import ANSI_BYTES, clean_line, common_margin
from mltriage.model import Diagnosis

PASTED_SCAN_BYTES = 1024 * 1024  # matrices are small; only the head of each input is parsed
MAX_PASTED_INPUTS = 8


class TopologyHeads:
    """The heads of the inputs that may hold a pasted matrix (memory stays bounded: only those)."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def offer(self, first_block: bytes) -> None:
        head = first_block[:PASTED_SCAN_BYTES]
        if len(self.texts) < MAX_PASTED_INPUTS and (b"GPU0" in head or b"P2P Connectivity" in head):
            self.texts.append(_behind_prefixes(head))


def _behind_prefixes(head: bytes) -> str:
    """The pasted matrix as its tool printed it: each line read past a quote's or code block's margin, a
    launcher's or logger's prefix (torchrun's [rank0]:, docker compose's service column, kubectl's [pod/...])
    and its colour codes, as the scanner reads every other line (colours off first, then the margin)."""
    head = ANSI_BYTES.sub(b"", head)
    margin = common_margin(head).decode("ascii")
    return "\n".join(parse_prefixes_behind(clean_line(line), margin).message for line in head.split(b"\n"))


def attach_pasted_topology(diagnosis: Diagnosis, heads: list[str]) -> None:
    if not heads:  # (no pasted matrix: the probe package, and its subprocess and NVML code, stay unimported)
        return
    try:
        from mltriage.probe.pasted import parse_pasted_matrices
    except ImportError:  # pragma: no cover - the probe ships with the package
        return
    for text in heads:
        topo = parse_pasted_matrices(text)
        if topo is None:
            continue
        diagnosis.topology = topo.to_json()
        facts = topo.facts()
        # the topology object says what is wrong; its rendered facts are only for the notes
        bad = bool(topo.pairs_without_p2p() or topo.p2p_slower_than_disabled())
        for finding in diagnosis.findings:
            if finding.p2p_related:
                finding.notes.extend(f"pasted topology: {f}" for f in facts)
                if bad:
                    finding.confidence = min(0.99, finding.confidence + 0.1)
        return


def attach_probe(diagnosis: Diagnosis) -> None:
    """Run (or read the cache of) the local P2P probe and attach it to P2P-related findings."""
    if not any(f.p2p_related for f in diagnosis.findings):
        diagnosis.warnings.append("--probe: no P2P-related finding in this log, the probe was not run")
        return
    from mltriage.probe import run_probe

    _apply_report(diagnosis, run_probe())


def attach_cached_probe(diagnosis: Diagnosis) -> None:
    """Attach the last probe result of this machine, if one is cached: no GPU work (the language
    server does this on every diagnosis; running the probe itself is the user's choice)."""
    if not any(f.p2p_related for f in diagnosis.findings):
        return
    try:
        from mltriage.probe import load_cached_report

        report = load_cached_report()
    except Exception:  # no NVML, unreadable cache: the diagnosis stands without it
        return
    if report is not None:
        _apply_report(diagnosis, report)


def _apply_report(diagnosis: Diagnosis, report) -> None:
    from mltriage.probe.model import BAD_VERDICTS

    diagnosis.probe = report.to_json()
    verdict = report.machine_verdict
    summaries = report.pair_summaries()
    for finding in diagnosis.findings:
        if not finding.p2p_related:
            continue
        finding.notes.extend(f"local probe: {s}" for s in summaries)
        if verdict in BAD_VERDICTS:
            finding.confidence = min(0.99, finding.confidence + 0.15)
            finding.notes.append(f"local probe verdict {verdict}: the GPUs of this machine show the fault")
        elif verdict == "OK":
            finding.confidence = max(0.05, finding.confidence - 0.2)
            finding.notes.append(
                "local probe verdict OK: P2P on this machine is supported, byte-exact and fast, "
                "so if the log came from this machine, look elsewhere first"
            )
        else:
            finding.notes.append(f"local probe: {report.message}")
