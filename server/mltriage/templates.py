"""Fill a signature's ``{fact}`` templates with what one log line captured.

A template may name facts a log does not hold (an older release printed fewer numbers, the line
was cut, only the trigger matched). A user never sees a format field:
- a title drops the bracketed or trailing part that held the unknown fact;
- a summary sentence that needs an unknown fact is replaced by the entry's plain-words mechanism;
- fix steps, commands and verify show the slot as ``<name>``, a value for the user to fill.
"""

from __future__ import annotations

import re

from mltriage.lazy_pattern import lazy

PLACEHOLDER = lazy(re.compile, r"\{(\w+)\}")
_UNITS = r"(?:\s?(?:ms|s|kB|KiB|MiB|GiB|GB|bytes|tokens))?"


class _Keep(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


class _Slot(dict):
    def __missing__(self, key: str) -> str:
        return f"<{key}>"


def fill_with(template: str, mapping: dict) -> str:
    """``template`` with each ``{name}`` replaced from a caller's mapping (whose ``__missing__``
    decides what an unknown fact shows). Only ``{word}`` is a placeholder: shell and Python braces
    in commands (``awk '{print $5}'``, ``{p.dtype for p in ...}``) stay as written."""

    def one(m: re.Match) -> str:
        try:
            return str(mapping[m.group(1)])
        except KeyError:
            return m.group(0)

    return PLACEHOLDER.sub(one, template)


def _known(facts: dict[str, str | int]) -> dict[str, str | int]:
    return {k: v for k, v in facts.items() if v not in (None, "")}


def unknown_facts(template: str, facts: dict[str, str | int]) -> list[str]:
    return sorted({name for name in PLACEHOLDER.findall(template) if facts.get(name) in (None, "")})  # (0 is a value)


def fill_slots(template: str, facts: dict[str, str | int]) -> str:
    """For commands and steps: unknown facts become ``<name>`` slots."""
    return fill_with(template, _Slot(_known(facts)))


def fill_sentence(template: str, facts: dict[str, str | int], fallback: str) -> str:
    """For a summary: the filled template, or ``fallback`` when it needs a fact this log lacks."""
    if unknown_facts(template, facts):
        return fallback
    return fill_with(template, _Keep(_known(facts)))


def fill_title(template: str, facts: dict[str, str | int]) -> str:
    """For a title: unknown facts are dropped with the words that only frame them."""
    text = fill_with(template, _Keep(_known(facts)))
    if "{" not in text or not PLACEHOLDER.search(text):
        return text
    text = re.sub(r"\s*\([^()]*\{\w+\}[^()]*\)", "", text)  # "(pid {pid})", "({reason})"
    text = re.sub(r"\s*[:=—-]\s*\{\w+\}(?:\s+\w+)?\s*$", "", text)  # ": {exception_type}" at the end
    group = r"\{\w+\}(?:\s*(?:[:/,]|->|and)\s*\{\w+\})*" + _UNITS
    text = re.sub(r"\s*(?:\b(?:on|of|for|to|at|in|by|from|after|with|a|an|the)\s+)?(?:\w+=\s*)?" + group, "", text)
    text = re.sub(r"\s+([,.;:)])", r"\1", text)
    text = re.sub(r"[ \t]{2,}", " ", text)
    return text.strip().rstrip(":,;-").strip()


def first_sentence(text: str) -> str:
    """The first sentence of a paragraph, joined onto one line."""
    flat = " ".join(text.split())
    m = re.search(r"(?<=[a-z0-9)`'\"])[.!?](?=\s+[A-Z`(]|\s*$)", flat)
    return flat[: m.end()] if m else flat


def ranks_text(ranks, width: int | None = None) -> str:
    """[0,1,2,4,5] -> '0–2, 4–5'; with ``width``, a longer text is cut after its last whole range
    that fits and ends in ', …'."""
    ranks = sorted(set(ranks))
    parts: list[str] = []
    start = prev = None
    for r in ranks:
        if start is None:
            start = prev = r
        elif r == prev + 1:
            prev = r
        else:
            parts.append(f"{start}" if start == prev else f"{start}–{prev}")
            start = prev = r
    if start is not None:
        parts.append(f"{start}" if start == prev else f"{start}–{prev}")
    text = ", ".join(parts)
    if width is not None and len(text) > width:
        text = text[:width - 3].rsplit(", ", 1)[0] + ", …"
    return text
