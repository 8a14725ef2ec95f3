"""The same answer at any scale: no limit on kept details decides who failed (issue 20 item 1).

A job of many rank files, each with a few warnings and a traceback, is what the hit store must hold
in bounded memory. It folds what repeats (ranks that failed alike, in any file, their tracebacks
included) and keeps every rank's first error of each signature, so the culprit is named wherever it
sits, even after ``MAX_HITS`` full hits of other ranks.

Lines are real output: the tracebacks are zoo/cpu/python_exception's (torch 2.13.0, gloo on CPU:
rank 2's IndexError, rank 1's "Connection closed by peer"), the warnings corpus/healthy's
(DeepSpeed 0.19.8's hostfile warning, transformers' load report); the per-rank loss-scale warning is
DeepSpeed's own format (deepspeed/runtime/fp16/loss_scaler.py, as test_hardening_engine uses it).
"""

from __future__ import annotations

from pathlib import Path

from cli_runner import ROOT
from mltriage.engine import diagnose_path, diagnose_text
from mltriage.engine.hit_store import MAX_HITS
from mltriage.engine.rank_groups import GROUP_DETAIL
from mltriage.engine.reader import collect_sources, iter_blocks
from mltriage.engine.scanner import Scanner
from mltriage.library import load_library

_LOGDIR = ROOT / "zoo" / "cpu" / "python_exception" / "logdir"


def _zoo(rank: int) -> str:
    (path,) = _LOGDIR.glob(f"*/attempt_0/{rank}/stderr.log")
    return path.read_text()


def _corpus_line(path: str, phrase: str) -> str:
    return next(line for line in (ROOT / "corpus" / "healthy" / path).read_text().splitlines(keepends=True) if phrase in line)


CULPRIT_TAIL = _zoo(2)  # [rank2]: ... IndexError: list index out of range
VICTIM_TAIL = _zoo(1)  # [rank1]: ... RuntimeError: [...gloo...] Connection closed by peer [127.0.0.1]:28568 ...
HOSTFILE = _corpus_line("deepspeed-cpu-zero1/console.log", "Unable to find hostfile")
NEWLY_INITIALIZED = _corpus_line("hf-trainer-bert-from-local-ckpt/console.log", "newly initialized")


def _job(root: Path, ranks: int, culprit: int, noise, victim=lambda r: VICTIM_TAIL.replace("[rank1]", f"[rank{r}]")) -> Path:
    for r in range(ranks):
        tail = CULPRIT_TAIL.replace("[rank2]", f"[rank{r}]") if r == culprit else victim(r)
        (root / f"rank_{r:04d}.log").write_text(noise(r) + tail)
    return root


def _same_noise(r: int) -> str:
    # 8 of each (as many hits of one signature as one rank's stream keeps): 19 hits a rank with its
    # traceback's three, so MAX_HITS full hits were reached at rank 1,052
    return (HOSTFILE + NEWLY_INITIALIZED) * 8


def _assert_culprit_named(d, ranks: int, culprit: int, root: Path) -> None:
    assert d.initiating_rank == culprit, d.explanation
    own = [f for f in d.findings if f.rank == culprit and f.is_error]
    assert own and own[0].signature == "python-unhandled-exception" and own[0].facts["exception_type"] == "IndexError"
    roles = {r.rank: r for r in d.ranks}
    assert sorted(roles) == list(range(ranks))
    for r, role in roles.items():
        if r == culprit:
            assert role.role == "initiator"
            continue
        # each victim's own specific error, cited in its own file, never only the generic layer
        assert (role.role, role.first_error) == ("collateral", "torch-gloo-connection-closed"), role
        assert role.source == str(root / f"rank_{r:04d}.log")


def test_a_culprit_past_the_old_hit_cap_is_named(tmp_path):
    """1,100 rank files, the culprit at 1,090: MAX_HITS full hits were reached at rank 1,052, whose
    generic 'unhandled exception' then stood alone (its gloo error dropped) and was named."""
    ranks, culprit = 1_100, 1_090
    assert culprit * 19 > MAX_HITS
    d = diagnose_path(_job(tmp_path, ranks, culprit, _same_noise))
    _assert_culprit_named(d, ranks, culprit, tmp_path)
    [gloo] = [f for f in d.findings if f.signature == "torch-gloo-connection-closed"]
    assert gloo.ranks == [r for r in range(ranks) if r != culprit] and gloo.count == ranks - 1
    assert d.warnings == []  # folding, not a limit, bounded what was kept


def test_ranks_that_failed_alike_are_folded_across_files(tmp_path):
    """Memory is bounded by folding: the full hits held do not grow with the ranks (the first
    GROUP_DETAIL ranks' of each failure, the culprit's own), while every other rank stays in the
    answer as a member of its group."""
    ranks, culprit = 1_100, 1_090
    scanner = Scanner(load_library())
    sources, _, _ = collect_sources(_job(tmp_path, ranks, culprit, _same_noise))
    for source in sources:
        scanner.begin(source)
        with open(source.path, "rb") as fh:
            for block in iter_blocks(fh):
                scanner.feed(block)
        scanner.end()
    store = scanner.store
    per_rank = 19  # 8 + 8 warnings and 3 traceback hits
    assert None not in store.hits and len(store.hits) <= (GROUP_DETAIL + 1) * per_rank < ranks * per_rank, len(store.hits)
    folded = {m.stream[1] for g in store.rank_groups.values() if g.first.rule.id == "torch-gloo-connection-closed"
              for m in g.members}
    assert len(folded) == ranks - 1 - GROUP_DETAIL and culprit not in folded


def test_ranks_whose_details_all_differ_keep_their_first_errors_past_the_cap(tmp_path):
    """Nothing folds when every rank's details differ (its loss scale, the peer it lost): past
    MAX_HITS full hits a rank's first error of each signature is still kept (its number, line and
    traceback), so the last rank's IndexError is found and named, and each victim's own gloo error
    still explains its traceback."""
    ranks = 2_000
    culprit = ranks - 1

    def overflow(r: int) -> str:
        return f"[rank{r}]: [deepspeed] OVERFLOW! Rank {r} Skipping step. Attempted loss scale: {r + 2}, reducing to {r + 1}\n" * 8

    def victim(r: int) -> str:
        return VICTIM_TAIL.replace("[rank1]", f"[rank{r}]").replace("28568", str(20_000 + r))

    assert (culprit - 1) * 11 > MAX_HITS  # 8 warnings and 3 traceback hits a rank
    d = diagnose_path(_job(tmp_path, ranks, culprit, overflow, victim))
    _assert_culprit_named(d, ranks, culprit, tmp_path)
    assert any("hit limit reached" in w for w in d.warnings), d.warnings  # the cap did act (on the warnings)
    assert any("past the engine's limits" in w for w in d.warnings), d.warnings
    generic = [f for f in d.findings if f.signature == "python-unhandled-exception"]
    assert [r for f in generic for r in f.reporting_ranks] == [culprit]


def test_tracebacks_of_many_ranks_in_one_log_fold_once_each_is_over():
    """One interleaved log: the same traceback on 200 ranks is one finding (it waited for its
    exception line to be one failure), the culprit's stands alone, each rank keeps its own line."""
    ranks, culprit = 200, 157
    text = "".join(CULPRIT_TAIL.replace("[rank2]", f"[rank{r}]") if r == culprit else VICTIM_TAIL.replace("[rank1]", f"[rank{r}]")
                   for r in range(ranks))
    d = diagnose_text(text)
    assert d.initiating_rank == culprit
    [gloo] = [f for f in d.findings if f.signature == "torch-gloo-connection-closed"]
    assert gloo.ranks == [r for r in range(ranks) if r != culprit]
    lines = VICTIM_TAIL.count("\n")
    exception_line = lines  # the gloo error is each victim tail's last line
    assert {r.rank: r.first_line for r in d.ranks if r.rank < culprit} == {r: r * lines + exception_line for r in range(culprit)}
    assert len(d.findings) <= 4, [(f.signature, f.rank) for f in d.findings]
