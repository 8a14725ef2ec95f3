"""The engine's own regexes on log text (frames, exception lines, launch commands), on the ``regex``
module like the signatures' patterns.

No time limit: a wall-clock limit would make what is found depend on how busy the machine is.
The work of a search is bounded instead, by construction: every pattern here is linear in its
input (``mltriage.regex_shape`` finds no super-linear shape in them; tests/test_regex_shape.py
checks), and every text they search is bounded (the scanner matches at most 16 KiB of a line,
frames and model names are searched in a shorter prefix).

(The prefix parser stays on ``re`` for speed on every matched line: its pattern is anchored and
every repetition in it is bounded, so a match costs the same on any line.)"""

from __future__ import annotations

from collections.abc import Iterator

import regex

from mltriage.lazy_pattern import lazy


def compile(source: str, flags: int = 0) -> regex.Pattern[str]:  # noqa: A001 - mirrors re.compile
    """The pattern, compiled on first use (mltriage.lazy_pattern): the engine's patterns are module constants."""
    return lazy(regex.compile, source, flags | regex.VERSION0)  # type: ignore[return-value]


def search(pattern: regex.Pattern[str], text: str) -> regex.Match[str] | None:
    return pattern.search(text)


def match(pattern: regex.Pattern[str], text: str) -> regex.Match[str] | None:
    return pattern.match(text)


def finditer(pattern: regex.Pattern[str], text: str) -> Iterator[regex.Match[str]]:
    return pattern.finditer(text)
