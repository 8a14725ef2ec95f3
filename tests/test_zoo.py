"""Multi-rank triage on the failure zoo: real jobs that failed in known ways.

Ground truth comes from each scenario's design (scenario.json), never from mltriage's output.
Both the interleaved console log and the per-rank --log-dir layout are diagnosed.
"""

import json
from pathlib import Path

import pytest

from mltriage.engine import diagnose_path

ZOO = Path(__file__).resolve().parent.parent / "zoo"
SCENARIOS = sorted(p.parent for p in ZOO.glob("*/*/scenario.json"))


def _truth(scenario: Path) -> dict:
    return json.loads((scenario / "scenario.json").read_text())


def _check(d, truth, where):
    assert d.initiating_rank == truth["initiating_rank"], (where, d.explanation)
    roles = {r.rank: r.role for r in d.ranks}
    for rank in truth.get("collateral_ranks", []):
        assert roles.get(rank) == "collateral", (where, rank, roles)
    if truth["initiating_rank"] is not None:
        assert roles[truth["initiating_rank"]] == "initiator"
        assert f"rank {truth['initiating_rank']}" in d.explanation
    if truth.get("kind"):
        assert d.failure_kind == truth["kind"], (where, d.failure_kind)
    if truth.get("domain"):
        assert d.failure_domain == truth["domain"], (where, d.failure_domain)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[f"{p.parent.name}-{p.name}" for p in SCENARIOS])
def test_console_log(scenario):
    truth = _truth(scenario)
    target = scenario / "console.log"
    if (scenario / "fr").is_dir():  # the console plus the Flight Recorder dumps, as a directory
        target = scenario
    d = diagnose_path(target)
    if truth.get("kind") == "silent":
        # the job "succeeded" with wrong numbers: nothing in the log says otherwise, so no wolf
        assert d.status == "healthy", [f.signature for f in d.findings]
        return
    assert d.status == "failure"
    if truth.get("culprit_identifiable_from_logs") is False:
        # a symmetric 2-rank failure: naming either rank would be a guess
        assert d.initiating_rank in (None, truth["initiating_rank"]), d.explanation
        return
    _check(d, truth, "console.log")


@pytest.mark.parametrize(
    "scenario",
    [s for s in SCENARIOS if any(p.is_file() for p in (s / "logdir").rglob("*"))],
    ids=[f"{p.parent.name}-{p.name}" for p in SCENARIOS if any(x.is_file() for x in (p / "logdir").rglob("*"))],
)
def test_per_rank_log_dir(scenario):
    """Worker files alone hold less evidence than the console (no launcher summary): the initiator
    must then be right or left unnamed, never a wrong rank."""
    truth = _truth(scenario)
    d = diagnose_path(scenario / "logdir")
    assert d.initiating_rank in (truth["initiating_rank"], None), d.explanation
    roles = {r.rank: r.role for r in d.ranks}
    for rank in truth.get("collateral_ranks", []):
        assert roles.get(rank) != "initiator"
    if truth["initiating_rank"] is not None and d.initiating_rank is None:
        # what was missing must be visible: the report says no rank stands out (rather than
        # staying silent about it), and the rank that really broke first is never called healthy
        assert roles.get(truth["initiating_rank"]) != "healthy", (roles, d.explanation)
        if d.status == "failure":
            assert "does not single out one initiating rank" in d.explanation, d.explanation
