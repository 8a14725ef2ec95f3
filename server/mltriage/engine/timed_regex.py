"""The engine's own regexes on log text (frames, exception lines, launch commands): compiled with
the ``regex`` module, so that every search has a time limit like the signatures' searches. A
search that runs out of time finds nothing: the line loses a fact, the diagnosis goes on.

(The prefix parser stays on ``re`` for speed on every matched line: its pattern is anchored and
every repetition in it is bounded, so a match costs the same on any line.)"""

from __future__ import annotations

from collections.abc import Iterator

import regex

TIMEOUT_S = 0.05


def compile(source: str, flags: int = 0) -> regex.Pattern[str]:  # noqa: A001 - mirrors re.compile
    return regex.compile(source, flags | regex.VERSION0)


def search(pattern: regex.Pattern[str], text: str) -> regex.Match[str] | None:
    try:
        return pattern.search(text, timeout=TIMEOUT_S)
    except TimeoutError:
        return None


def match(pattern: regex.Pattern[str], text: str) -> regex.Match[str] | None:
    try:
        return pattern.match(text, timeout=TIMEOUT_S)
    except TimeoutError:
        return None


def finditer(pattern: regex.Pattern[str], text: str) -> Iterator[regex.Match[str]]:
    try:
        yield from pattern.finditer(text, timeout=TIMEOUT_S)
    except TimeoutError:
        return
