"""Lines a terminal, a pager or a web page hard-wrapped at a fixed width, joined again for matching.

Copied from tmux, screen, a Windows console, a CI viewer or a forum post, a log's long lines arrive cut
into pieces of exactly the screen's width, and a message cut in two (``subsequent GPU opera`` /
``tions might run``) is none of its wordings. A source is hard-wrapped when its longest lines all have
one width and most of them go on in the next line; each such line is then matched together with the
line that continues it. Line numbers stay the file's: the loop counts every newline joined away.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from functools import lru_cache

from mltriage.lazy_pattern import lazy

MIN_WIDTH = 72  # narrower "widths" are short lines that happen to be equal
MIN_WRAPPED = 2  # lines of that width (one alone proves a width only where it was cut inside a word)
# the widths terminals, pagers and log viewers are set to: only at one of them is one long line alone taken for a cut
# (a line of another width followed by a word is a record and its next field: pydantic's "... for Model" / "field")
TERMINAL_WIDTHS = frozenset({80, 100, 120, 132, 140, 150, 160, 180, 200, 220, 240, 250, 256})
SAMPLE_LINES = 4096
# a line that starts a record of its own: a date or time, a bracketed tag, NCCL's host:pid:tid, a traceback's
# header or frame, a Python warning's or exception's name (what follows a cut never looks like these)
_RECORD_START = lazy(re.compile,
    rb"\d{4}-\d\d-\d\d|\d\d:\d\d:\d\d|[EWIF]\d{4} \d\d:"  # a date, a time, glog's E1201 10:00:00
    rb"|\[(?:[A-Za-z_][\w.-]{0,40}\]|[EWIFD]\s|\d{4}-|\d\d:\d\d|\d{1,6},\d{1,6}\]<|\d{1,6}\]:|[\w.-]{1,64}:\d{1,8}\])"  # [rank0]: [E ...] [2024- [1,0]<stdout> torchrun's [1]:
    rb"|\([\w.-]{1,64} pid=\d"  # a Ray or vLLM worker's (Name pid=N)
    rb"|\w[\w.-]{0,62}:\d{1,8}:\d{1,8} |Traceback \(|File \"|[A-Za-z_][\w.]{0,200}(?:Error|Warning|Exception|Interrupt)\b"
    rb"|(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|FATAL)\b|[A-Z][a-z]{2} [ \d]\d \d\d:"
)


# what a table's rows, a banner or a tab-indented line start with (rows of one width line up: none is a cut)
_TABLE_EDGES = frozenset(bytes([c]) for c in b"\t|+=#*-")


def _body(line: bytes) -> bytes:
    return line[:-1] if line.endswith(b"\r") else line


def _continues(line: bytes, following: bytes) -> bool:
    """``following`` goes on with ``line`` (not a record of its own, nor the same kind of record again)."""
    if not following or following[:1] in _TABLE_EDGES or following[:2].isspace() or following[:8] == line[:8]:
        return False  # (one space may be where the cut fell; two are an indented line of its own; rows of a table line up)
    return not _RECORD_START.match(following.lstrip(b" "))


def _columns(line: bytes) -> int:
    """A line's width in characters (what a terminal wraps at), however its bytes encode them."""
    return len(line) if line.isascii() else len(line.decode("utf-8", "replace"))


def _has_width(line: bytes, width: int) -> bool:
    if len(line) < width:
        return False  # (a character is one byte or more: fewer bytes than the width are fewer columns)
    return len(line) == width if line.isascii() else _columns(line) == width


def _cut_in_a_word(line: bytes, following: bytes) -> bool:
    return line[-1:].isalnum() and following[:1].isalnum() and following[:1].islower() and _continues(line, following)


def wrap_width(block: bytes) -> int | None:
    """The width a source's lines were hard-wrapped at, read from its first block; ``None`` where they were not."""
    lines = [_body(line) for line in block.split(b"\n", SAMPLE_LINES)[:SAMPLE_LINES]]  # (the rest of the block is no line)
    width = max(map(_columns, lines), default=0)
    if width < MIN_WIDTH:
        return None
    at = [i for i, line in enumerate(lines) if i + 1 < len(lines) and _has_width(line, width)]
    if len(at) == 1 and width in TERMINAL_WIDTHS and _cut_in_a_word(lines[at[0]], lines[at[0] + 1]):
        return width  # one long line alone, cut inside a word (``GPU opera`` / ``tions might``)
    if len(at) < MIN_WRAPPED:
        return None
    going_on = sum(1 for i in at if _continues(lines[i], lines[i + 1]))
    return width if going_on * 2 > len(at) else None


@lru_cache(maxsize=8)
def _long_lines(width: int) -> re.Pattern[bytes]:
    """The lines of ``width`` bytes or more, each followed by a newline: the only ones that can be cut at ``width``
    columns, found by one scan of the block instead of a look at every line."""
    return re.compile(rb"^[^\n]{%d,}(?=\n)" % width, re.MULTILINE)


def rejoin(block: bytes, width: int) -> tuple[bytes, list[int]]:
    """``block`` with each line of ``width`` joined to the line that continues it, and the offsets in the result
    where a newline was taken out (ascending)."""
    pieces: list[bytes] = []
    joined: list[int] = []
    size = 0  # bytes of the result so far
    copied = 0  # where the block's bytes not yet in the result begin
    for m in _long_lines(width).finditer(block):
        line, end = _body(m.group()), m.end()  # (end: the line's newline)
        following_end = block.find(b"\n", end + 1)
        following = block[end + 1 : following_end if following_end != -1 else len(block)]
        if _has_width(line, width) and _continues(line, following):
            pieces += (block[copied : m.start()], line)  # (a wrapped line's own \r is the wrap's, not the text's)
            size += m.start() - copied + len(line)
            joined.append(size)
            copied = end + 1
    if not joined:
        return block, []
    pieces.append(block[copied:])
    return b"".join(pieces), joined


def newlines_between(block: bytes, joined: list[int], start: int, end: int | None = None) -> int:
    """The file's newlines between two offsets of a rejoined ``block``: those still there and those joined away."""
    stop = len(block) if end is None else end
    count = block.count(b"\n", start, stop)
    if joined:
        count += bisect_left(joined, stop) - bisect_left(joined, start)
    return count
