"""Attach the local GPU peer-to-peer probe's verdicts to P2P-related findings."""

from __future__ import annotations

from mltriage.model import Diagnosis


def attach_probe(diagnosis: Diagnosis) -> None:
    related = [f for f in diagnosis.findings if f.p2p_related]
    if not related:
        return
    try:
        from mltriage.probe import run_probe
    except ImportError:
        diagnosis.warnings.append("the P2P probe is not available in this installation")
        return
    report = run_probe()
    diagnosis.probe = report.to_json()
    for finding in related:
        finding.notes.extend(report.pair_summaries())
