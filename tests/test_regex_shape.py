"""Super-linear regex shapes, found from the structure (mltriage.regex_shape): the signatures' and the
engine's own patterns have none, and a line that used to spend the regex budget no longer does."""

from __future__ import annotations

import importlib
import pkgutil
import re
import tomllib

import pytest
import regex

import mltriage
from mltriage.engine import diagnose_text
from mltriage.library import Rule, load_library, signatures_dir, validate_file
from mltriage.lint import _check_shapes
from mltriage.regex_shape import super_linear_shapes


@pytest.mark.parametrize("pattern", [
    r"could not insert '(?P<module>nvidia)': (?P<reason>[^\n]+?)\s*$",  # host-nvidia-smi-no-driver before this fix
    r"OpType=(?P<op>\w+)(?:, x)?.{0,1000}?, but Rank",  # torch-collective-mismatch before this fix
    r"(?<![\w.])-?(?:\d+\.?\d*(?:e[+-]?\d+)?|nan|inf)(?![\w])",  # symptoms/observe.py _NUMBER before this fix
    r"^\[\s*(\d+(?:\s*,\s*\d+)*)\s*,?\s*\]$",  # engine/interpret.py _GPU_LIST before this fix
    r"a.*.*b",
    r"(?:\w+\s?)+$",  # nested: exponential
    r"(?i)X[A-Z]+[a-z]*!",  # overlapping once case is ignored
    r"NCCL WARN (?:\d|\d\d)+$",  # overlapping alternatives repeated: 2^n splits of n digits
    r"(?:ab|a|b)+c",  # "ab" is one iteration or two
])
def test_super_linear_shapes_are_found(pattern):
    assert super_linear_shapes(pattern), pattern


@pytest.mark.parametrize("pattern", [
    r"could not insert '(?P<module>nvidia)': (?P<reason>[^\n]*\S)\s*$",  # the fix: stops at the last non-space
    r"[^\n]++\s*$",  # possessive: never gives a character back
    r"(?>[^\n]+)\s*$",  # atomic
    r"[^\n]{3,160}?\s*$",  # one side bounded: linear in the line
    r"\w+\s+\w+$",  # the classes do not overlap
    r"[^']{1,200}'\s*$",  # a literal between them that the first cannot cross
    r"\s*(?P<detail>.+)",  # the second ends the pattern: its first try succeeds
    r"X[A-Z]+[a-z]*!",  # disjoint while case matters
    r"(?:\d{1,3}\.){3}\d{1,3}",  # every iteration ends in a mandatory separator
    r"(?:[^:\n]|::){1,800}?: block",  # alternatives that cannot start alike: one way to split a run
    r"(?:\d|\d\d){1,4}x",  # a few iterations: a bounded factor
])
def test_linear_shapes_pass(pattern):
    assert super_linear_shapes(pattern) == [], pattern


def test_the_lint_reports_the_shape_with_the_field(tmp_path):
    path = signatures_dir() / "host" / "host-nvidia-smi-no-driver.toml"
    rule = Rule.from_signature(validate_file(path), path)
    assert _check_shapes(rule) == []
    rule.pattern_sources = [r"could not insert '(?P<module>nvidia)': (?P<reason>[^\n]+?)\s*$"]
    (problem,) = _check_shapes(rule)
    assert "field 'match'" in problem and "side by side" in problem and r"[^\n]+?" in problem and r"\s*" in problem


def test_no_signature_pattern_has_a_super_linear_shape():
    library = load_library()
    found = {
        (rule.id, source): [s.describe() for s in super_linear_shapes(source, rule.ignore_case)]
        for rule in library.rules.values()
        for source in rule.pattern_sources + rule.require_sources + rule.exclude_sources
    }
    assert not {k: v for k, v in found.items() if v}


def _module_patterns(value, depth: int = 0):
    if isinstance(value, (re.Pattern, regex.Pattern)):
        yield value
    elif isinstance(getattr(value, "compiled", None), (re.Pattern, regex.Pattern)):  # a symptom wording
        yield value.compiled
    elif depth < 2 and isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from _module_patterns(item, depth + 1)
    elif depth < 2 and isinstance(value, dict):
        for item in value.values():
            yield from _module_patterns(item, depth + 1)


def test_no_engine_pattern_has_a_super_linear_shape():
    """Every module-level pattern of the runtime (the catalogue generator reads pinned upstream
    source, never a log, and is left out): the symptom vocabulary, the run facts, the interpreters."""
    found = {}
    checked = 0
    for info in pkgutil.walk_packages(mltriage.__path__, "mltriage."):
        if ".catalogue.generate" in info.name or info.name.endswith(("__main__", "mltriage.server")):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            for pattern in _module_patterns(value):
                if isinstance(pattern.pattern, str):
                    checked += 1
                    shapes = super_linear_shapes(pattern.pattern, bool(pattern.flags & re.IGNORECASE))
                    if shapes:
                        found[f"{info.name}.{name}"] = (pattern.pattern[:120], [s.describe() for s in shapes])
    assert checked > 200
    assert not found, found


def test_three_lines_no_longer_spend_the_regex_budget():
    """Three 16 KiB `could not insert 'nvidia'` lines with a run of spaces used to time out the
    signature's search each (quadratic) and spend the diagnosis' regex budget: the OOM after them
    lost its facts (trigger-only). Now every line is matched in full."""
    line = "modprobe: ERROR: could not insert 'nvidia': Key" + " " * 16_000 + "was rejected!\n"
    oom = tomllib.loads((signatures_dir() / "cuda" / "cuda-oom.toml").read_text())["samples"]["positive"][0]
    d = diagnose_text(line * 3 + "[rank3]: " + oom["text"] + "\n")
    assert not any("budget" in w or "time limit" in w for w in d.warnings), d.warnings
    found = next(f for f in d.findings if f.signature == "cuda-oom")
    assert found.rank == 3 and found.facts["reserved_unallocated"] == "30.93 GiB"
    driver = next(f for f in d.findings if f.signature == "host-nvidia-smi-no-driver")
    assert driver.facts["reason"].startswith("Key") and driver.facts["reason"].endswith("was rejected!")


def test_tensor_numbers_read_the_same_after_the_fix():
    from mltriage.symptoms.observe import _NUMBER

    text = "[1.5, -2., 3e-05, nan, inf, 42, 0.125e+3, x1, 7]"
    assert _NUMBER.findall(text) == ["1.5", "-2.", "3e-05", "nan", "inf", "42", "0.125e+3", "7"]
