"""Issue 13 items 8, 12 and 13 in the engine: adversarial lines, the library fingerprint, the hit cap.

Item 8: patterns that backtracked on 64 KB lines are caught by lint's adversarial generator and
fixed; a line whose pattern is never run (its shape is super-linear) or that arrives after the
diagnosis' regex work budget is spent still yields its finding from the trigger phrase. Item 12: a diagnosis reads no signature
file again once the library is loaded (the fingerprint is checked by size and mtime). Item 13:
the cap on kept hits never drops a rank's first error.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

import regex

from cli_runner import ROOT, run_cli
from mltriage.engine import diagnose_text
from mltriage.engine.hit_store import MAX_HITS
from mltriage.library import Library, Rule, load_library, signature_files, signatures_dir, validate_file
from mltriage.lint import _check_backtracking, adversarial_lines
import procs

ZOO_RANK2 = next((ROOT / "zoo" / "cpu" / "python_exception" / "logdir").glob("*/attempt_0/2/stderr.log"))

# The patterns as they were before this fix (signatures/<path> at commit 9d34adf): each took
# 0.1-1 s per search on a 64 KB adversarial line; 10 MB of such lines took 10-34 s.
BACKTRACKING_BEFORE = {
    "nccl/nccl-socket-connect-failed.toml":
        r"(?:\w+: |Net : |^|NCCL WARN )[Cc]onnect to (?P<peer>[^<\s]{1,255})<(?P<port>\d+)> failed : (?P<reason>[^\n]{1,80})",
    "cuda/cuda-kernel-assertion-failed.toml":
        r"(?P<file>[^\s:]{1,300}\.cuh?):(?P<line>\d+): (?P<function>(?:[^:\n]|::){1,800}?): block: \[(?P<block>\d+,\d+,\d+)\], "
        r"thread: \[(?P<thread>\d+,\d+,\d+)\] Assertion `(?P<condition>[^`]{1,400})` failed\.",
    "deepspeed/deepspeed-launcher-rank-exit-code.toml":
        r"(?P<cmd>\[[^\]]{0,2000}'--local_rank=(?P<local_rank>\d+)'[^\]]{0,2000}\]) exits with return code = (?P<return_code>-?\d+)",
    "cuda/cuda-runtime-error.toml": r"(?:CUDA|HIP) error: (?P<cuda_error>[^\n`]{3,160}?)\s*(?: when calling `|$)",
}


def _rule_with(path: Path, pattern: str) -> tuple[Rule, list[str]]:
    sig = validate_file(path)
    rule = Rule.from_signature(sig, path)
    rule.pattern_sources = [pattern]
    rule.__dict__.pop("patterns", None)  # compiled lazily from pattern_sources
    return rule, [s.text for s in sig.samples.positive]


def test_lint_catches_the_patterns_that_backtracked_and_passes_their_fixes():
    for rel, before in BACKTRACKING_BEFORE.items():
        path = signatures_dir() / rel
        rule, samples = _rule_with(path, before)
        assert rule.patterns[0].pattern == before
        problems = _check_backtracking(rule, samples)
        assert problems and "backtracks catastrophically" in problems[0], rel
        fixed = Rule.from_signature(validate_file(path), path)
        assert _check_backtracking(fixed, samples) == [], rel


def test_every_library_pattern_is_linear_on_the_adversarial_lines():
    library = load_library()
    for path in signature_files(signatures_dir()):
        sig = validate_file(path)
        rule = library.rules[sig.id]
        assert _check_backtracking(rule, [s.text for s in sig.samples.positive]) == [], path.name


def test_generator_cuts_samples_open():
    path = signatures_dir() / "cuda" / "cuda-kernel-assertion-failed.toml"
    sig = validate_file(path)
    lines = adversarial_lines(Rule.from_signature(sig, path), [s.text for s in sig.samples.positive], 4096)
    assert any(line.count(".cu:") > 10 and line.endswith("failed.") for line in lines)  # the path part repeated


def test_word_characters_before_the_phrase_no_longer_cost_the_facts():
    # 16 KB of word characters before "Connect to": the old pattern's \w+ tried every start
    line = "0" * 16_000 + " NCCL WARN Connect to 10.0.0.2<43467> failed : Connection refused\n"
    d = diagnose_text("[rank3]:" + line)
    found = [f for f in d.findings if f.signature == "nccl-socket-connect-failed"]
    assert found and found[0].rank == 3 and found[0].facts.get("reason") == "Connection refused"


def test_a_pattern_of_a_super_linear_shape_is_never_run_and_the_line_still_yields_its_finding(tmp_path):
    """A signature file outside the shipped library may hold any regex: one that backtracks
    exponentially (2^60 ways to split 60 digits: it would not finish) is found by its shape when the
    library is built and never run, and the line still yields the finding (trigger-only, no facts).
    No time limit decides it, so a busy machine finds the same."""
    root = tmp_path / "signatures" / "nccl"
    root.mkdir(parents=True)
    text = (signatures_dir() / "nccl" / "nccl-socket-connect-failed.toml").read_text()
    exponential = r"NCCL WARN (?:\d|\d\d)+$"
    assert text.count("patterns = [\n") == 1
    (root / "nccl-socket-connect-failed.toml").write_text(text.replace("patterns = [\n", f"patterns = [\n    '{exponential}',\n"))
    library = load_library(root.parent, use_cache=False)
    rule = library.rules["nccl-socket-connect-failed"]
    assert exponential not in rule.pattern_sources and rule.pattern_sources
    assert library.not_run == [f"{rule.path}: regex {exponential!r} has a super-linear shape: not run"]
    line = "NCCL WARN " + "1" * 60 + "! socketStartConnect: exceeded error retry count\n"
    d = diagnose_text(line, library=library)
    found = [f for f in d.findings if f.signature == rule.id]
    assert found and found[0].confidence == rule.confidence * 0.7 and not found[0].facts.get("reason")
    assert any("super-linear shape" in w for w in d.warnings)


def test_a_pattern_whose_shape_cannot_be_checked_is_not_run(tmp_path):
    """A regex-module extension (``\\p{Nd}``) is beyond the structural check: it is left out like a
    super-linear one, since no time limit would stop it."""
    root = tmp_path / "signatures" / "nccl"
    root.mkdir(parents=True)
    text = (signatures_dir() / "nccl" / "nccl-socket-connect-failed.toml").read_text()
    unchecked = r"NCCL WARN (?:\p{Nd}|\p{Nd}\p{Nd})+$"
    (root / "nccl-socket-connect-failed.toml").write_text(text.replace("patterns = [\n", f"patterns = [\n    '{unchecked}',\n"))
    library = load_library(root.parent, use_cache=False)
    assert unchecked not in library.rules["nccl-socket-connect-failed"].pattern_sources
    assert len(library.not_run) == 1 and "cannot be checked" in library.not_run[0]


def test_after_the_regex_budget_signatures_fire_on_their_trigger_alone(tmp_path):
    """Lines holding every trigger phrase make every pattern run on every line: the budget runs out,
    later lines still yield findings (trigger-only, 0.7 of the confidence), and the CLI says so."""
    triggers = " ".join(sorted(load_library().trigger_index))
    log = tmp_path / "adversarial.log"
    body = (f"[rank0]: {triggers}\n" * 400).encode()
    real = ZOO_RANK2.read_bytes().replace(b"[rank2]", b"[rank5]")
    log.write_bytes(body + real)
    started = time.perf_counter()
    r = run_cli("diagnose", "--json", str(log))
    elapsed = time.perf_counter() - started
    assert r.returncode == 1, r.stderr.decode()
    doc = json.loads(r.stdout)
    assert any("regex work budget (characters searched) was spent" in w for w in doc["warnings"]), doc["warnings"]
    assert elapsed < 60  # generous: the budget bounds it to a few seconds on a busy machine
    rank5 = [f for f in doc["findings"] if f["rank"] == 5]
    assert rank5 and rank5[0]["signature"] == "python-unhandled-exception"


def test_hit_cap_never_drops_a_ranks_first_error():
    """Rank 517's error comes after MAX_HITS warnings of 2,500 other ranks (8 each, as many as one
    finding keeps): the cap must not take it (issue 13 item 13). Each rank's loss scale differs, so
    no two ranks' warnings are one failure (those would be folded, engine/rank_groups.py)."""
    ranks = MAX_HITS // 8 + 10
    noise = "".join(f"[rank{r}]: [deepspeed] OVERFLOW! Rank {r} Skipping step. Attempted loss scale: {r + 2}, "
                    f"reducing to {r + 1}\n" * 8 for r in range(ranks) if r != 517)
    culprit = ZOO_RANK2.read_text().replace("[rank2]", "[rank517]")
    d = diagnose_text(noise + culprit)
    mine = [f for f in d.findings if f.rank == 517 and f.is_error]
    assert mine and mine[0].signature == "python-unhandled-exception"
    assert mine[0].facts["exception_type"] == "IndexError"
    assert d.initiating_rank == 517
    assert any("hit limit reached" in w for w in d.warnings)  # the cap did act on the warnings


def test_a_diagnosis_reads_no_signature_file_once_the_library_is_loaded(tmp_path):
    """An audit hook (the interpreter's own, no mock) counts opens of .toml files: none on later
    diagnoses; touching a signature file (a new mtime) makes the next load check the content again
    (the files are looked at again at most once a second)."""
    library = tmp_path / "signatures"
    shutil.copytree(signatures_dir(), library)
    probe = (
        "import sys, os\n"
        "from pathlib import Path\n"
        "opened = []\n"
        "sys.addaudithook(lambda event, args: opened.append(str(args[0])) if event == 'open' and str(args[0]).endswith('.toml') else None)\n"
        "from mltriage.engine import diagnose_text\n"
        "text = 'RuntimeError: CUDA error: an illegal memory access was encountered\\n'\n"
        "diagnose_text(text)\n"
        "first = len(opened)\n"
        "for _ in range(5): diagnose_text(text)\n"
        "again = len(opened) - first\n"
        "import time; from mltriage.library import RECHECK_S; time.sleep(RECHECK_S + 0.1)\n"
        "os.utime(next(Path(sys.argv[1]).glob('cuda/*.toml')))\n"
        "diagnose_text(text)\n"
        "print(first, again, len(opened) - first - again)\n"
    )
    env = {"PYTHONPATH": str(ROOT / "server"), "MLTRIAGE_SIGNATURES": str(library), "MLTRIAGE_CACHE_DIR": str(tmp_path / "cache")}
    r = procs.run([sys.executable, "-c", probe, str(library)], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    first, again, after_touch = map(int, r.stdout.split())
    n_files = len(signature_files(library))
    assert first >= n_files  # the first load hashes every file's content
    assert again == 0  # five more diagnoses: not one signature file opened
    assert after_touch >= n_files  # a changed mtime: the content is checked again


def test_no_regex_in_the_engine_runs_on_log_text_without_a_bound():
    """The engine's own patterns: every one is on the regex module (linear, tests/test_regex_shape.py) or is anchored with
    only bounded repetitions (the prefix parser and torchrun's summary lines, kept on re for speed)."""
    from mltriage.engine import launcher, prefixes, run_facts, tracebacks

    bounded_on_re = {"_LINE", "_FIELD_BYTES", "_ENTRY_BYTES", "_RANK", "_EXIT", "_SIGNAL_IN_TRACEBACK"}
    sources = ["\n".join(line.split("#")[0] for line in prefixes._PREFIX.pattern.splitlines())]
    for module in (launcher, run_facts, tracebacks):
        for name, value in vars(module).items():
            if hasattr(value, "pattern") and hasattr(value, "search") and name != "FINISHED_LINE":
                if module is launcher and name in bounded_on_re:
                    pattern = value.pattern
                    sources.append(pattern.decode() if isinstance(pattern, bytes) else pattern)
                else:
                    # (a module's patterns compile on first use: mltriage.lazy_pattern)
                    assert isinstance(getattr(value, "compiled", value), regex.Pattern), f"{module.__name__}.{name}"
    for source in sources:
        # a * or + after a group, a class, an escape or a dot is an unbounded repetition
        assert regex.findall(r"(?:\)|\]|\\[dwsS]|\.)[*+]", source) == [], source


def test_a_flood_of_lines_that_fire_nothing_leaves_the_prefilter_but_not_the_failure(tmp_path):
    """10 MB of one harmless line holding a trigger phrase (`Error: x`: the exception layer's phrase,
    no exception type) cost 7 s of per-line work for no finding. After FLOOD_LANDINGS such lines
    in a row the phrase is no longer landed on, and the diagnosis says so; a later failure with
    phrases of its own is still found, and so is a rank's traceback."""
    from mltriage.engine.prefilter_budget import FLOOD_LANDINGS

    noise = "Error: x\n" * (FLOOD_LANDINGS * 5)
    culprit = ZOO_RANK2.read_text()
    d = diagnose_text(noise + culprit)
    flood = [w for w in d.warnings if "'rror: '" in w]
    assert flood and f":{FLOOD_LANDINGS})" in flood[0], d.warnings  # dropped where the run reached the bound
    top = [f for f in d.findings if f.is_error]
    assert top and top[0].signature == "python-unhandled-exception" and top[0].facts["exception_type"] == "IndexError"


def test_lines_that_fire_keep_their_phrase_landed():
    """A phrase whose lines keep producing hits is no flood, however often it appears."""
    from mltriage.engine.prefilter_budget import FLOOD_LANDINGS

    line = "[rank0]: RuntimeError: CUDA error: an illegal memory access was encountered\n"
    d = diagnose_text(line * (FLOOD_LANDINGS + 10))
    assert not any("fired nothing" in w for w in d.warnings), d.warnings
    assert d.findings and d.findings[0].signature.startswith("cuda")
