"""Every shipped catalogue entry recognises its own message: each output line rendered from the
format with a value of each placeholder's type matches that line's matcher, values captured."""

from __future__ import annotations

import re

import pytest

from mltriage.catalogue.match import match_line
from mltriage.catalogue.store import default_catalogue

CATALOGUE = default_catalogue()
pytestmark = pytest.mark.skipif(not CATALOGUE.available, reason="catalogue data not generated")

_GROUP = re.compile(r"\(\?P<(\w+)>((?:[^()]|\((?:[^()]|\([^()]*\))*\))*)\)")
_SAMPLES = {r"[-+]?\d+": "42", r"(?:0[xX])?[0-9a-fA-F]+": "0x1f", r".": "x", r".*?": "some value", r".*": "the rest"}
from mltriage.catalogue.formats import MIN_LITERAL_CHARS, fill_text, key_words, text_parts


def _render(line_format: str, pattern: str) -> tuple[str, dict[str, str]]:
    samples = {}
    for name, body in _GROUP.findall(pattern):
        samples[name] = _SAMPLES.get(body, "3.5" if "nan" in body else "0x7f00" if "nil" in body else "some value")
    # a name the matcher has no group for is either the line's leading value (left out of the matcher)
    # or literal braces the source printed as they are ("expected format 'intermediate_{int}'")
    return fill_text(line_format, lambda name: samples.get(name, "lead")), samples


_TYPED = {"42", "0x1f", "3.5", "0x7f00", "x"}  # values whose capture is exact; text values next to each other split anywhere


def test_every_entry_matches_its_own_rendered_lines():
    failures = []
    checked = 0
    for entry in CATALOGUE.all_entries():
        for n, (line_format, pattern) in enumerate(zip(entry.format.split("\n"), entry.lines)):
            if pattern is None:
                continue
            text, samples = _render(line_format, pattern)
            m = entry.matchers[n].search(text)
            checked += 1
            if m is None:
                failures.append((entry.id, n, text[:120]))
                continue
            for name, value in m.groupdict().items():
                if samples.get(name) in _TYPED and value != samples[name]:
                    failures.append((entry.id, name, value, samples[name]))
    assert checked > 30_000
    assert not failures, failures[:20]


def test_the_index_finds_every_entry_from_each_rendered_line():
    missed = []
    entries = list(CATALOGUE.all_entries())
    for entry in entries[::25]:  # one in 25: the lookup path (key words, anchors, shards) end to end
        for n, pattern in enumerate(entry.lines):
            parts = text_parts(entry.format.split("\n")[n])
            if pattern is None or (parts and not isinstance(parts[0], str) and not entry.floating(n)):
                continue  # a short line that starts with a value is only recognised where a message starts
            literal = "".join(p for p in parts if isinstance(p, str))
            if len(literal.strip()) < MIN_LITERAL_CHARS or not key_words(tuple(parts)):
                continue  # "opt: {x}", "*****": too little text to be told apart, so not indexed on their own
            text, _ = _render(entry.format.split("\n")[n], pattern)
            found = match_line(text, CATALOGUE)
            if not found:  # (a more specific entry that this text also satisfies may win: that is fine)
                missed.append((entry.id, n, text[:100]))
    assert len(entries) // 25 > 1000
    assert not missed, missed[:20]
