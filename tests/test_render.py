"""The terminal report shows what a log holds, never what a terminal would act on (issue 22, item 8).

A log is untrusted text: C1 controls (U+009B is a one-byte CSI, U+009D an OSC that can set the
window title or plant a hyperlink), C0 controls (BEL, backspace, carriage return rewriting the
line) and bidirectional overrides (U+202E, "Trojan Source", CVE-2021-42574) must reach the report
as visible escapes. The report's own colours are the only escape sequences in it.
"""

from __future__ import annotations

import re
import unicodedata

import pytest

from cli_runner import run_cli
from mltriage.engine import diagnose_text
from mltriage.render import render_text, terminal_text

# each control with a word beside it, so a test can tell the line reached the report
CONTROLS = {
    "\x9b": "c1-csi", "\x9d": "c1-osc", "\x85": "c1-nel", "\x90": "c1-dcs", "\x9c": "c1-st",
    "\u202e": "bidi-rlo", "\u202d": "bidi-lro", "\u2066": "bidi-lri", "\u2069": "bidi-pdi", "\u200f": "bidi-rlm",
    "\x07": "c0-bel", "\x08": "c0-bs", "\x7f": "del",
}
ERROR = "[rank0]:RuntimeError: checkpoint " + " ".join(f"{word}{ch}x" for ch, word in CONTROLS.items()) + " failed\n"
# our colour codes: ESC [ digits and semicolons m, nothing else
OUR_SGR = re.compile(r"\x1b\[[0-9;]*m")


def _acted_on(text: str) -> list[str]:
    """Characters of ``text`` a terminal would act on (outside our colour codes), by name."""
    text = OUR_SGR.sub("", text)
    return [unicodedata.name(c, hex(ord(c))) for c in text
            if (unicodedata.category(c) == "Cc" and c != "\n") or c in "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"]


def test_terminal_text_escapes_every_control_visibly():
    for ch in CONTROLS:
        shown = terminal_text(f"a{ch}b")
        assert _acted_on(shown) == [] and shown != "ab", repr(ch)
        assert shown == (f"a\\x{ord(ch):02x}b" if ord(ch) < 0x100 else f"a\\u{ord(ch):04x}b")
    assert terminal_text("tab\tand ü, 中文, → stay") == "tab\tand ü, 中文, → stay"


@pytest.mark.parametrize("color", [False, True])
def test_the_report_escapes_controls_read_from_the_log(color):
    d = diagnose_text(ERROR, source="/logs/rank0.log")
    out = render_text(d, color=color)
    assert all(word in out for word in CONTROLS.values()), "the error line never reached the report"
    assert _acted_on(out) == []
    assert "c1-csi\\x9bx" in out and "bidi-rlo\\u202ex" in out
    if color:
        assert OUR_SGR.search(out)
    # the JSON keeps the log's text as it was (JSON escapes what it must)
    assert "\u202e" in d.findings[0].evidence[0]


@pytest.mark.parametrize("flag", ["never", "always"])
def test_the_cli_report_escapes_controls(tmp_path, flag):
    """The real `mltriage diagnose` process, its stdout read as bytes."""
    path = tmp_path / "rank0.log"
    path.write_text(ERROR, encoding="utf-8")
    result = run_cli("diagnose", str(path), "--color", flag)
    assert result.returncode == 1, result.stderr.decode()[-400:]
    out = result.stdout.decode("utf-8")
    assert "c1-osc" in out and "bidi-rlo" in out
    assert _acted_on(out) == []


@pytest.mark.parametrize("log, initiator", [
    ("torchrun_sigkill.log", "rank 1     torchrun-worker-sigkill (root-cause)"),  # reported after the SIGTERMs it caused
    ("torchrun_collective_mismatch.log", "rank 1     torch-collective-mismatch (root-cause)"),  # rank 3's line comes first
    ("torchrun_python_exception.log", "rank 2     python-unhandled-exception (root-cause)"),
])
def test_the_timeline_starts_with_the_initiators_error(log, initiator):
    """Issue 22.7: what the other ranks' errors are a consequence of is listed before them, rank 0's
    SIGTERM included, wherever torchrun wrote its line."""
    from pathlib import Path

    path = Path(__file__).resolve().parent / "lsp" / "data" / "logs" / log
    out = run_cli("diagnose", "--color", "never", str(path)).stdout.decode()
    timeline = out.split("Timeline:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert initiator in timeline[0], timeline
    assert not any("(root-cause)" in t and initiator.split()[2] in t for t in timeline[1:]), timeline
    assert any("torchrun-worker-sigterm" in t for t in timeline[1:]), timeline
