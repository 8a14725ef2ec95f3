"""Line handling that agrees with the editor.

VS Code breaks lines at CRLF, CR and LF only; Python's ``str.splitlines`` also breaks at form feeds,
``\\x1c``-``\\x1e``, NEL and U+2028/9. Logs carry CRs (progress bars) and sometimes the others, so the
text handed to the engine is normalised: editor lines joined by LF, the other separators replaced by
a space (same length, so columns stay valid). Then the engine's line numbers are the editor's.
"""

from __future__ import annotations

import re

_EDITOR_EOL = re.compile(r"\r\n|\r|\n")
_CR = re.compile(r"\r\n?")
_OTHER_SEPARATORS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def editor_lines(text: str) -> list[str]:
    return _EDITOR_EOL.split(text) if "\r" in text else text.split("\n")


def normalise(text: str) -> str:
    """The text the engine sees: one LF per editor line break, nothing else that splits a line.

    Each step runs only when needed: this holds the GIL, and a 100 MB log must not stall hovers."""
    if "\r" in text:
        text = _CR.sub("\n", text)
    if _OTHER_SEPARATORS.search(text):
        text = _OTHER_SEPARATORS.sub(" ", text)
    return text


def utf16_column(line: str, column: int) -> int:
    """Column in UTF-16 code units (what VS Code counts) for a column in code points."""
    prefix = line[: max(0, column)]
    if prefix.isascii():
        return len(prefix)
    return len(prefix.encode("utf-16-le", "surrogatepass")) // 2
