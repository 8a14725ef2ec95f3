"""One failure on many ranks is one finding that lists them all (engine/rank_groups.py), and triage
still reasons rank by rank: who never arrived, who is the odd one out, who only fell over.

Lines are PyTorch 2.x's watchdog and c10d messages as in the signatures' cited samples
(torch-nccl-watchdog-timeout, nccl-unhandled-system-error), and torchrun failure summaries are made
by torch's own ``ChildFailedError.format_msg`` (the installed torch 2.13.0)."""

from __future__ import annotations

import json
import re

import pytest

from cli_runner import run_cli
from mltriage.engine import diagnose_text
from mltriage.engine.rank_groups import GROUP_DETAIL

RANKS = 100
assert RANKS > 4 * GROUP_DETAIL  # most ranks are folded, not kept as full hits


def watchdog(rank: int, seq: int = 2635) -> str:
    # torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (PyTorch 2.x), with the rank prefix torchrun adds
    return (f"[rank{rank}]:[E1130 09:41:07.412904512 ProcessGroupNCCL.cpp:688] [Rank {rank}] Watchdog caught collective "
            f"operation timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn=8388608, NumelOut=8388608, "
            f"Timeout(ms)=600000) ran for 600043 milliseconds before timing out.\n")


def unhandled_system_error(rank: int) -> str:
    # c10d's C10D_NCCL_CHECK RuntimeError (torch/csrc/distributed/c10d/NCCLUtils.hpp, PyTorch 2.x)
    return f"[rank{rank}]: RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error\n"


def test_the_same_timeout_on_every_rank_is_one_finding_that_lists_them_all():
    d = diagnose_text("".join(watchdog(r) for r in range(RANKS)))
    timeouts = [f for f in d.findings if f.signature == "torch-nccl-watchdog-timeout"]
    assert len(timeouts) == 1
    [shared] = timeouts
    assert shared.ranks == list(range(RANKS)) and shared.rank == 0 and shared.line == 1
    assert shared.count == RANKS
    assert f"{RANKS} ranks reported this" in " ".join(shared.notes)
    assert [r.rank for r in d.ranks] == list(range(RANKS))
    assert {r.first_error for r in d.ranks} == {"torch-nccl-watchdog-timeout"}
    assert [r.first_line for r in d.ranks] == list(range(1, RANKS + 1))  # each rank's own line, not the first's


def test_the_timeline_draws_every_rank_a_shared_finding_speaks_for():
    # 40 ranks that share one folded watchdog finding are 40 marks at their own lines, none drawn as silent
    from mltriage.lsp.pictures import timeline_svg

    missing = 17
    d = diagnose_text("".join(watchdog(r) for r in range(40) if r != missing) + f"[rank{missing}]: step 120\n")
    svg = timeline_svg(d)
    marked = re.findall(r'class="mark (?:initiator|collateral)"[^>]*><title>rank (\d+):[^<]*\(line (\d+)\)', svg)
    assert sorted(int(r) for r, _ in marked) == [r for r in range(40) if r != missing]
    assert all(int(line) == (int(r) + 1 if int(r) < missing else int(r)) for r, line in marked)  # each rank's own line
    silent = re.findall(r'class="mark (?:silent|quiet)"[^>]*><title>rank (\d+):', svg)
    assert silent == [str(missing)]


def test_a_rank_that_never_arrived_is_still_named_among_folded_ranks():
    missing = 57
    d = diagnose_text("".join(watchdog(r) for r in range(RANKS) if r != missing) + f"[rank{missing}]: step 120\n")
    assert d.initiating_rank == missing
    assert "never reported the collective" in d.explanation


def test_the_odd_one_out_stands_alone():
    odd = 73
    d = diagnose_text("".join(watchdog(r, 2636 if r == odd else 2635) for r in range(RANKS)))
    assert d.initiating_rank == odd
    alone = [f for f in d.findings if f.rank == odd]
    assert alone and alone[0].ranks == [odd] and alone[0].facts.get("seq") == 2636
    shared = [f for f in d.findings if len(f.ranks) > 1]
    assert shared and odd not in shared[0].ranks and len(shared[0].ranks) == RANKS - 1


def test_a_catch_all_explained_rank_by_rank_leaves_only_the_rank_without_an_explanation():
    """Each rank's `unhandled system error` is explained by its own watchdog line below it, except
    the last rank's, whose log stops there: that rank's line, text and rank are the finding's."""
    last = RANKS - 1
    text = "".join(unhandled_system_error(r) + (watchdog(r) if r != last else "") for r in range(RANKS))
    d = diagnose_text(text)
    system = [f for f in d.findings if f.signature == "nccl-unhandled-system-error"]
    assert len(system) == 1
    assert system[0].rank == last and system[0].ranks == [last]
    assert system[0].line == 2 * last + 1
    assert system[0].evidence == [unhandled_system_error(last).rstrip("\n")]


def _summary(ranks: int) -> str:
    torch = pytest.importorskip("torch.distributed.elastic.multiprocessing.errors")
    from torch.distributed.elastic.multiprocessing.api import ProcessFailure

    failures = {r: ProcessFailure(local_rank=r % 8, pid=10_000 + r, exitcode=-9, error_file="/nonexistent")
                for r in range(ranks)}
    return torch.ChildFailedError("train.py", failures).format_msg()


def test_torchrun_summary_of_many_sigkilled_workers_through_the_cli(tmp_path):
    log = tmp_path / "summary.log"
    log.write_text(_summary(RANKS) + "\n")
    r = run_cli("diagnose", "--json", str(log))
    assert r.returncode == 1, r.stderr.decode()
    doc = json.loads(r.stdout)
    kills = [f for f in doc["findings"] if f["signature"] == "torchrun-worker-sigkill"]
    assert len(kills) == 1 and kills[0]["ranks"] == list(range(RANKS))
    entries = {e["rank"]: e for e in doc["launcher"]}
    assert sorted(entries) == list(range(RANKS))
    assert all(e["pid"] == 10_000 + rank and e["local_rank"] == rank % 8 and e["exitcode"] == -9
               and e["signal"] == "SIGKILL" and e["traceback"] == f"Signal 9 (SIGKILL) received by PID {10_000 + rank}"
               for rank, e in entries.items())
    assert [x["rank"] for x in doc["ranks"]] == list(range(RANKS))
    human = run_cli("diagnose", str(log)).stdout.decode()
    assert f"{RANKS} ranks (0–{RANKS - 1})" in human
    assert f"0–{RANKS - 1}" in human.split("Ranks:")[1].splitlines()[2]  # one row for the ranks that failed alike


def test_summary_fields_read_from_bytes_and_from_decoded_lines_agree():
    """Field lines are read straight from the bytes when they are printable ASCII; one with an ANSI
    colour or a non-ASCII host takes the decoding path, and both give the same entry."""
    plain = _summary(3)
    host = next(line.split(":", 1)[1].strip() for line in plain.splitlines() if line.strip().startswith("host"))
    odd = plain.replace(f"host      : {host}", "host      : \x1b[1mnodé-7\x1b[0m", 1)
    entries = [{e.rank: e.to_json() for e in diagnose_text(t).launcher} for t in (plain, odd)]
    assert sorted(entries[0]) == sorted(entries[1]) == [0, 1, 2]
    changed = [r for r in entries[0] if entries[0][r]["host"] != entries[1][r]["host"]]
    assert len(changed) == 1 and entries[1][changed[0]]["host"] == "nodé-7"
    for r in entries[0]:
        assert {k: v for k, v in entries[0][r].items() if k != "host"} == {k: v for k, v in entries[1][r].items() if k != "host"}


def _summary_with_a_traceback(tmp_path) -> str:
    """A worker that raised (its error file holds a traceback over several lines) among SIGKILLed ones."""
    errors = pytest.importorskip("torch.distributed.elastic.multiprocessing.errors")
    from torch.distributed.elastic.multiprocessing.api import ProcessFailure

    error_file = tmp_path / "error.json"
    message = "RuntimeError: CUDA error: an illegal memory access was encountered"
    callstack = f'Traceback (most recent call last):\n  File "/w/train.py", line 9, in <module>\n    main()\n{message}\n'
    # the error file's layout as torch's ErrorHandler.record_exception writes it
    error_file.write_text(json.dumps({"message": {"message": message,
                                                  "extraInfo": {"py_callstack": callstack, "timestamp": "1700000000"}}}))
    failures = {r: ProcessFailure(local_rank=r % 8, pid=10_000 + r, exitcode=-9, error_file="/nonexistent") for r in range(30)}
    failures[7] = ProcessFailure(local_rank=7, pid=10_007, exitcode=1, error_file=str(error_file))
    return errors.ChildFailedError("train.py", failures).format_msg()


@pytest.mark.parametrize("kind", ["signals", "with-a-traceback"])
def test_summary_read_from_bytes_equals_the_line_by_line_reading(monkeypatch, tmp_path, kind):
    """Every entry (line numbers included) and every finding is what the decoded, line-by-line path reads."""
    from mltriage.engine.launcher import TorchrunSummary

    text = (_summary(30) if kind == "signals" else _summary_with_a_traceback(tmp_path)) + "\n"
    fast_diagnosis = diagnose_text(text)
    fast = fast_diagnosis.launcher
    fast_findings = [(f.signature, f.ranks, f.line, f.evidence, f.count) for f in fast_diagnosis.findings]
    monkeypatch.setattr(TorchrunSummary, "feed_fields", lambda self, block, pos, *rest: (pos, 0))
    monkeypatch.setattr(TorchrunSummary, "field_line", lambda self, *args: None)
    monkeypatch.setattr(TorchrunSummary, "read_entry", lambda self, *args: None)
    slow = diagnose_text(text)
    assert slow.launcher == fast and len(fast) == 30
    assert [(f.signature, f.ranks, f.line, f.evidence, f.count) for f in slow.findings] == fast_findings


def test_past_the_hit_limit_every_rank_stays_in_the_answer():
    """Details that differ on every rank (here the SeqNum) fold nothing; past MAX_RANKS_PER_SIGNATURE
    ranks of one signature a rank's error is still kept, as its number and line, and the diagnosis
    says so."""
    from mltriage.engine.hit_store import MAX_RANKS_PER_SIGNATURE

    ranks = MAX_RANKS_PER_SIGNATURE + 500
    d = diagnose_text("".join(watchdog(r, 1000 + r) for r in range(ranks)))
    reporting = sorted(r for f in d.findings if f.signature == "torch-nccl-watchdog-timeout" for r in f.reporting_ranks)
    assert reporting == list(range(ranks))
    assert [r.rank for r in d.ranks] == list(range(ranks)) and {r.role for r in d.ranks} == {"collateral"}
    assert f"0–{ranks - 1}" in d.explanation
    assert any(w.startswith("500 ranks reported an error") for w in d.warnings), d.warnings
    late = [f for f in d.findings if len(f.ranks) == 500]
    assert late and late[0].rank == MAX_RANKS_PER_SIGNATURE and "details" in " ".join(late[0].notes)
    assert len([f for f in d.findings if f.signature == "torch-nccl-watchdog-timeout"]) == MAX_RANKS_PER_SIGNATURE + 1
