"""Markdown built from text we do not control: log lines, the facts read from them, and the
signature sentences they were filled into.

A log line can say anything, ``![p](https://attacker.example/t.png)`` included: rendered as it is,
the editor fetches that image when the user hovers (a local tool must make no request), and links
can be spoofed. So every string that may hold log text goes through one of these:

- `text`: a sentence (a title, a root cause, a note) whose code spans (the signatures' backticks)
  stay code spans and everything else is literal: each character that can start or end a
  CommonMark or GFM construct is backslash-escaped, so no link, image, HTML, entity, emphasis,
  table or strikethrough forms, no ``scheme://``, ``www.`` or ``@`` is left for an autolinker, and
  what would open a block at the start (``#``, ``>``, ``-``, ``1.``) is escaped there. The rest of
  the punctuation (``,:;.'"/%=``...) stays as it is, so the source reads as the log does;
- `code`: an inline code span, `code_block`: a fenced block, each fenced longer than any backtick
  run inside, so the text cannot close it (what is inside a code span or block is never a link);

and all three replace control and bidirectional-override characters (U+202E shows text reversed)
with U+FFFD.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from mltriage.lazy_pattern import lazy

# what makes inline Markdown anywhere (with ':' before '/', '.' after "www") and blocks at the start
_INLINE = lazy(re.compile, r"([\\`*_\[\]()<>!|~&@$]|:(?=/)|(?<=[wW]{3})\.)")
_BLOCK_START = lazy(re.compile, r"^(\s*)([#>+=\-]|\d+(?=[.)]))")
_UNSHOWN = lazy(re.compile, "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_BACKTICKS = lazy(re.compile, r"`+")
_NEWLINES = lazy(re.compile, r"\r\n?|\n")


def shown(value: str) -> str:
    """``value`` without the characters that hide or reorder what is shown."""
    return _UNSHOWN.sub("\ufffd", value)


def escape(value: str, at_start: bool = True) -> str:
    """Literal text: nothing in it is Markdown. Line breaks become spaces (one paragraph);
    ``at_start``: it may begin a line, where ``#``, ``-``, ``1.``... would open a block."""
    value = _INLINE.sub(r"\\\1", shown(_NEWLINES.sub(" ", value)))
    if at_start and (m := _BLOCK_START.match(value)):
        if m.group(2).isdigit():  # "1." / "1)": the character after the number is the marker
            end = m.end()
            return value[:end] + "\\" + value[end:]
        return f"{m.group(1)}\\{value[m.start(2):]}"
    return value


def code(value: str) -> str:
    """An inline code span showing ``value`` as it is (line breaks become spaces)."""
    value = shown(_NEWLINES.sub(" ", value))
    if not value:
        return ""
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(value)), default=0) + 1)
    if value.startswith("`") or value.endswith("`") or (value.startswith(" ") and value.endswith(" ")):
        value = f" {value} "  # CommonMark strips one space from each side
    return f"{fence}{value}{fence}"


def code_block(lines: Iterable[str], info: str = "sh") -> list[str]:
    """A fenced code block's lines: ``lines`` shown as they are."""
    body = [shown(piece) for line in lines for piece in _NEWLINES.split(line)]
    fence = "`" * max(3, max((len(run) for line in body for run in _BACKTICKS.findall(line)), default=0) + 1)
    return [f"{fence}{info}", *body, fence]


def _pieces(value: str) -> Iterable[tuple[str, bool]]:
    """``value`` as (piece, is_code) pairs, its code spans found as CommonMark finds them: a run of
    backticks up to the next run of the same length; a run without one is literal backticks."""
    runs = list(_BACKTICKS.finditer(value))
    following: list[int | None] = [None] * len(runs)  # the next run of the same length
    last: dict[int, int] = {}
    for i in range(len(runs) - 1, -1, -1):
        size = len(runs[i].group())
        following[i], last[size] = last.get(size), i
    at, index = 0, 0
    while index < len(runs):
        opening, closing = runs[index], following[index]
        if closing is None:
            index += 1
            continue
        yield value[at:opening.start()], False
        inside = value[opening.end():runs[closing].start()]
        if len(inside) >= 2 and inside.startswith(" ") and inside.endswith(" ") and inside.strip():
            inside = inside[1:-1]
        yield (inside, True) if inside else (opening.group() * 2, False)
        at = runs[closing].end()
        index = closing + 1
    yield value[at:], False


def text(value: str) -> str:
    """A sentence with code spans: the spans stay code (re-fenced), the rest is literal."""
    out, start = [], True
    for piece, is_code in _pieces(value):
        out.append(code(piece) if is_code else escape(piece, at_start=start))
        start = False
    return "".join(out)


def plain(value: str) -> str:
    """The same sentence for a place that shows no Markdown (a diagnostic's message in the Problems
    panel and the hover): its code spans' text without the backticks."""
    return shown("".join(piece for piece, _ in _pieces(value)))


def link(label: str, url: str) -> str:
    """A link of ours (an https page, a ``command:`` URI we wrote); anything else is shown as text."""
    if not re.fullmatch(r"(?:https://|command:)[^\s<>()\\`]+", url):
        return escape(label)
    return f"[{escape(label)}]({url})"
