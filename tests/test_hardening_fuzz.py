"""Fuzz targets (issue 13): the engine and the CLI on assembled, damaged and random logs.

A fixed, small budget keeps the suite fast; ``bench/fuzz/fuzz_engine.py`` runs the same inputs by
the million. What must hold for every input: the engine returns a diagnosis whose JSON document
serialises (or refuses the input with ``InputError``), never another exception; the CLI exits
0, 1, 2 or 5, prints no traceback, and prints valid JSON whenever it exits 0, 1 or 5.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli_runner import run_cli
from fuzz_inputs import log_bytes, log_lines
from mltriage.engine import InputError, diagnose_bytes, diagnose_text
from mltriage.render import render_sarif, render_text

ENGINE_BUDGET = settings(max_examples=150, deadline=None, derandomize=True,
                         suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
CLI_BUDGET = settings(max_examples=20, deadline=None, derandomize=True,
                      suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _renders(d) -> None:
    json.dumps(d.to_json())
    json.dumps(render_sarif(d))
    assert render_text(d)
    assert d.status in ("failure", "incomplete", "healthy")


@ENGINE_BUDGET
@given(log_bytes())
def test_engine_on_bytes(data):
    try:
        d = diagnose_bytes(data)
    except InputError as exc:
        assert str(exc)  # a refusal says why
        return
    _renders(d)


@ENGINE_BUDGET
@given(st.lists(log_lines(), max_size=30).map("\n".join), st.integers(min_value=1, max_value=10**6))
def test_engine_on_editor_text(text, first_line):
    d = diagnose_text(text, source="/logs/job/rank_3.log", first_line=first_line)
    _renders(d)
    assert all(f.line >= first_line for f in d.findings)


@CLI_BUDGET
@given(log_bytes(), st.sampled_from([["--json"], ["--sarif"], []]))
def test_cli_on_stdin(data, fmt):
    r = run_cli("diagnose", *fmt, "-", input=data, timeout=60)
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode in (0, 1, 2, 5), (r.returncode, err)
    assert "Traceback" not in err and "internal error" not in err, err
    if r.returncode == 2:
        assert err.startswith("mltriage: error: ") and r.stdout == b""
    elif fmt:
        json.loads(r.stdout)
