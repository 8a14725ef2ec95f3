"""Numbers read from log text: the one place the engine turns a captured string into an int or float.

A log can hold anything where a number belongs: a 4,301-digit pid (Python refuses to convert more
than 4,300 digits), a SeqNum of a thousand digits, ``rank=²`` (``"²".isdigit()`` is True, ``int("²")``
raises). A field that does not parse is a field the diagnosis goes without, never an error.
"""

from __future__ import annotations

MAX_DIGITS = 18  # no rank, pid, exit code, SeqNum or size a log prints is longer (2**63 has 19)


def parse_int(text: str | bytes | int | None) -> int | None:
    """The decimal integer ``text`` spells (optional sign, surrounding blanks), else None; an int (a fact typed at
    capture) is itself."""
    if text is None:
        return None
    if type(text) is int:
        return text
    if isinstance(text, bytes):
        text = text.decode("ascii", "replace")
    s = text.strip()
    digits = s[1:] if s[:1] in ("-", "+") else s
    # isdecimal, not isdigit: superscripts and circled digits pass isdigit but int() refuses them
    if not digits or len(digits) > MAX_DIGITS or not digits.isdecimal():
        return None
    return int(s)


def parse_float(text: str | None) -> float | None:
    """A decimal number (``12``, ``-0.5``, ``3.25``) of bounded length, else None."""
    if text is None:
        return None
    s = text.strip()
    if not s or len(s) > 2 * MAX_DIGITS + 2:
        return None
    body = s[1:] if s[0] in "-+" else s
    whole, _, fraction = body.partition(".")
    if not (whole or fraction) or not all(part.isdecimal() for part in (whole, fraction) if part):
        return None
    return float(s)
