"""Triage on every recorded scenario, against golden answers.

For each recorded zoo scenario (its console log, or the console plus Flight Recorder dumps, and its
per-rank --log-dir), each recorded error output under corpus/gpu and the bundled example, the
stable part of the verdict — status, initiating rank, each rank's role, failure kind and the root
cause's signature — is compared with ``tests/data/triage_golden/<case>.json``. A change of
behaviour then shows up as a diff of those files. After an intended change, regenerate them with

    UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/test_triage.py

and review the diff. Whether an answer is *right* is tests/test_zoo.py's job (ground truth from
each scenario's design); this file pins what the engine says today.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mltriage.engine import diagnose_path, diagnose_text

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "data" / "triage_golden"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
EXAMPLE = ROOT / "examples" / "torchrun-rank2-indexerror.log"


def _cases() -> dict[str, Path]:
    cases: dict[str, Path] = {}
    for scenario in sorted(p.parent for p in (ROOT / "zoo").glob("*/*/scenario.json")):
        name = f"zoo-{scenario.parent.name}-{scenario.name}"
        # as tests/test_zoo.py loads them: the console, with the Flight Recorder dumps when recorded
        cases[f"{name}-console"] = scenario if (scenario / "fr").is_dir() else scenario / "console.log"
        if any(p.is_file() for p in (scenario / "logdir").rglob("*")):
            cases[f"{name}-logdir"] = scenario / "logdir"
    for log in sorted((ROOT / "corpus" / "gpu").glob("*.log")):
        cases[f"corpus-gpu-{log.stem}"] = log
    cases["example-torchrun-rank2-indexerror"] = EXAMPLE
    return cases


CASES = _cases()


def verdict(target: Path) -> dict:
    """The stable fields of a diagnosis (not the full JSON: wording and evidence may change)."""
    d = diagnose_path(target)
    root = d.root_cause
    return {
        "status": d.status,
        "initiating_rank": d.initiating_rank,
        "failure_kind": d.failure_kind,
        "root_cause": root.signature if root is not None else None,
        "ranks": {str(r.rank): r.role for r in sorted(d.ranks, key=lambda r: r.rank)},
    }


@pytest.mark.parametrize("case", sorted(CASES))
def test_triage_matches_golden(case):
    actual = verdict(CASES[case])
    path = GOLDEN / f"{case}.json"
    if UPDATE:
        GOLDEN.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(actual, indent=2, sort_keys=True) + "\n")
        return
    assert path.is_file(), f"no golden answer for {case}: run with UPDATE_GOLDEN=1 and review {path}"
    expected = json.loads(path.read_text())
    assert actual == expected, f"triage of {CASES[case].relative_to(ROOT)} changed (UPDATE_GOLDEN=1 to accept)"


def test_no_stale_golden_files():
    stale = sorted(p.stem for p in GOLDEN.glob("*.json") if p.stem not in CASES)
    if UPDATE:
        for name in stale:
            (GOLDEN / f"{name}.json").unlink()
        return
    assert not stale, f"golden answers without a case (UPDATE_GOLDEN=1 removes them): {stale}"


def test_launcher_lines_go_to_the_rank_whose_pid_they_name():
    """examples/torchrun-rank2-indexerror.log: torchrun's agent prints "Sending process 9935 closing
    signal SIGTERM" unprefixed in a file named ...rank2..., but pid 9935 is rank 0 (its failure
    summary: "rank : 0", "exitcode : -15 (pid: 9935)"); rank 2 raised IndexError and exited with 1."""
    d = diagnose_path(EXAMPLE)
    pid_rank = {w.pid: w.rank for w in d.launcher}
    assert pid_rank == {9935: 0, 9936: 1, 9938: 3, 9937: 2}
    assert {r.rank: r.role for r in d.ranks} == {0: "collateral", 1: "collateral", 2: "initiator", 3: "collateral"}
    by_pid = [f for f in d.findings if "pid" in f.facts]
    assert by_pid
    for f in by_pid:
        assert f.rank == pid_rank[int(f.facts["pid"])], (f.signature, f.line, f.facts)
        assert f.ranks == [f.rank] and f.facts["rank"] == f.rank  # an int, typed at capture
    sigterm = [f for f in d.findings if f.signature == "torchrun-worker-sigterm"]
    assert sigterm and 2 not in {f.rank for f in sigterm}  # the initiator was never SIGTERMed
    assert {f.rank for f in sigterm} == {0, 1, 3}
    first = next(f for f in sigterm if f.line == 67)
    assert first.rank == 0
    rank2 = [f.signature for f in d.findings if f.rank == 2]
    assert rank2[0] == "python-unhandled-exception" and "torchrun-child-failed-error" in rank2
    ranks = {r.rank: r for r in d.ranks}
    assert ranks[0].first_error == "torchrun-worker-sigterm" and ranks[0].first_line == 67
    assert ranks[2].first_error == "python-unhandled-exception" and ranks[2].first_line == 15
    assert "ranks 0–3" not in d.explanation


def test_every_rank_failing_alike_is_one_failure_named_by_the_launchers_first_report():
    # torch.distributed.launch (PyTorch >= 2.0) passes --local-rank; the script only knows --local_rank
    d = diagnose_path(ROOT / "corpus" / "cpu" / "launch_local_rank_argument.log")
    own = [f for f in d.findings if f.signature == "torchrun-local-rank-argument"]
    assert sorted(f.rank for f in own) == [0, 1]  # one finding per worker, not merged into one
    assert d.initiating_rank == 0
    assert d.explanation.startswith("every rank failed with the same error of its own")
    assert "rank 1 failed the same way" in d.explanation
    assert not any("usually a root cause" in n for f in own for n in f.notes)


def test_rank_less_nccl_line_takes_its_rank_from_the_device_index():
    # NCCL's own "host:pid:tid [dev]" prefix, as printed without a launcher's tee prefix
    line = next(l for l in (ROOT / "corpus" / "gpu" / "nccl_socket_ifname.log").read_text().splitlines() if "NCCL WARN" in l)
    from mltriage.engine import diagnose_text

    d = diagnose_text(line.split(":", 1)[1] + "\n")
    top = d.findings[0]
    assert top.rank == 0 and d.initiating_rank == 0
    assert any("NCCL's device index" in n for n in top.notes)


def test_failure_domain_is_named_only_where_there_is_one():
    """Compute or communication is said of the initiating failure only when it is one of them: a
    checkpoint loaded without map_location on a CPU-only host is neither (it was called
    "communication" by default), an NCCL socket failure is communication, a CUDA OOM compute."""
    from mltriage.engine import diagnose_text
    from mltriage.library import load_library

    library = load_library()

    def first_sample(rule_id: str) -> str:
        import tomllib

        with open(library.rules[rule_id].path, "rb") as fh:
            return tomllib.load(fh)["samples"]["positive"][0]["text"]

    cases = {"torch-load-cuda-device-unavailable": None, "nccl-socket-connect-failed": "communication", "cuda-oom": "compute"}
    for rule_id, domain in cases.items():
        d = diagnose_text(first_sample(rule_id))
        assert d.findings and d.findings[0].signature == rule_id, (rule_id, [f.signature for f in d.findings])
        assert d.failure_domain == domain, (rule_id, d.failure_domain)
        assert d.findings[0].area == library.rules[rule_id].area


def test_the_timeline_is_in_time_order_with_the_initiators_error_first():
    """The example (a real torchrun job): rank 2's traceback has no timestamp of its own; it is
    written before the launcher's stamped SIGTERM to rank 0, so it comes first, as it happened."""
    d = diagnose_path(EXAMPLE)
    first = d.timeline[0]
    assert (first.rank, first.signature, first.role) == (2, "python-unhandled-exception", "root-cause")
    sigterm = next(i for i, t in enumerate(d.timeline) if t.signature == "torchrun-worker-sigterm")
    assert sigterm > 0
    # within one log, the timeline follows the log's own order (it was written in time order)
    lines = [t.line for t in d.timeline if t.source == d.timeline[0].source]
    assert lines == sorted(lines)


def test_the_timeline_merges_per_rank_logs_by_their_timestamps():
    """A directory of per-rank logs: stamped events of different files in time order, and each
    file's unstamped lines kept at their place among that file's stamped ones."""
    from mltriage.engine.triage import in_time_order
    from mltriage.model import Finding, Fix

    def at(source, line, ts):
        return Finding(signature=f"s{line}", title="t", category="c", severity="error", proposed_role="collateral", rank=None,
                       host=None, source=source, lines=(line, line), line=line, column_start=0, column_end=1,
                       evidence=["x"], facts={}, root_cause="", fix=Fix(), verify="", confidence=0.5, timestamp=ts)

    events = [at("b.log", 5, 20.0), at("a.log", 1, None), at("a.log", 3, 10.0), at("a.log", 7, None),
              at("b.log", 9, None), at("a.log", 9, 30.0), at("c.log", 1, None)]
    ordered = [(f.source, f.line) for f in in_time_order(events)]
    assert ordered == [("a.log", 1), ("a.log", 3), ("a.log", 7), ("b.log", 5), ("b.log", 9), ("a.log", 9), ("c.log", 1)]


# -- triage is the only verdict: stages record why a finding is not what broke, triage alone sets roles --

def test_no_stage_but_triage_sets_a_role():
    import ast

    package = Path(__file__).resolve().parent.parent / "server" / "mltriage"
    writers = []
    for path in package.rglob("*.py"):
        if path.parent.name == "probe":
            continue  # the P2P probe's verdicts are about GPU pairs, not findings
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            for t in targets:
                for leaf in (t.elts if isinstance(t, ast.Tuple) else [t]):
                    if isinstance(leaf, ast.Attribute) and leaf.attr in ("role", "verdict"):
                        writers.append((path.relative_to(package).as_posix(), leaf.attr, node.lineno))
    assert writers and all(where == "engine/triage.py" and attr == "verdict" for where, attr, _ in writers), writers


def test_a_finding_has_no_role_to_set_and_its_context_reason_is_typed_evidence():
    from mltriage.model import ContextReason, Role

    f = _finding_for_role_checks()
    with pytest.raises(AttributeError):
        f.role = Role.CONTEXT
    assert f.role is Role.ROOT_CAUSE
    f.set_aside(ContextReason.SURVIVED, "the process carried on")
    assert f.role is Role.CONTEXT and f.to_json()["context_reason"] == "survived"


@pytest.mark.parametrize("log, reason", [("gloo_hang_ctrl_c.log", "after-interrupt"), ("handled_exception.log", "survived")])
def test_real_logs_say_why_a_finding_was_set_aside(log, reason):
    d = diagnose_path(Path(__file__).resolve().parent.parent / "corpus" / "cpu" / log)
    aside = [f for f in d.findings if f.context_reason is not None]
    assert aside and all(f.role == "context" for f in aside)
    assert reason in {f.context_reason for f in aside}
    assert all(f.verdict is not None for f in d.findings)  # every role in the answer is triage's


def _finding_for_role_checks():
    from mltriage.model import Finding, Fix

    return Finding(signature="s", title="t", category="c", severity="error", proposed_role="root-cause", rank=None, host=None,
                   source="a.log", lines=(1, 1), line=1, column_start=0, column_end=1, evidence=["x"], facts={}, root_cause="r",
                   fix=Fix(), verify="", confidence=0.5)


def test_the_rank_a_survivors_library_names_as_faulty_is_the_initiator():
    # recorded (torch 2.13.0, gloo): rank 0 exits before monitored_barrier; only rank 1's output is in the log
    from mltriage.engine import diagnose_path

    corpus = Path(__file__).resolve().parent.parent / "corpus" / "cpu"
    d = diagnose_path(corpus / "monitored_barrier_peer_exit.log")
    assert d.initiating_rank == 0
    assert "names as the one that failed" in d.explanation
    [rank1] = [r for r in d.ranks if r.rank == 1]
    assert rank1.role.value == "collateral"


def test_ranks_that_never_got_the_nccl_unique_id_name_the_rank_that_should_have_sent_it():
    # torch 2.14.1 libtorch_cuda.so's broadcastUniqueNCCLID message, on two ranks behind torchrun's [rankN]: prefix
    line = ("[rank{r}]: torch.distributed.DistBackendError: [{r}] is setting up NCCL communicator and retrieving ncclUniqueId from "
            "[0] via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout. This may indicate a possible "
            "application crash on rank 0 or a network set up issue.")
    d = diagnose_text("\n".join(line.format(r=r) for r in (1, 2, 3)) + "\n")
    assert d.initiating_rank == 0
    assert d.root_cause.signature == "torch-nccl-unique-id-not-received" and d.root_cause.facts["error"] == "Socket Timeout"
