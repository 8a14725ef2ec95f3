"""A message format as upstream source writes it, and the matchers that recognise its output.

The extractors (Python ``ast``, C/C++) turn a raise or log call into a ``Format``: literal text and
typed placeholders, in order. From a format come the catalogue's matchers: one regex per output
line, literal text escaped with whitespace made flexible, each placeholder a named capture of its
type. The same module renders a format with sample values, so tests can check the round trip.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mltriage.lazy_pattern import lazy

# A placeholder's type decides what its capture accepts.
_CAPTURE = {
    "int": r"[-+]?\d+",
    "hex": r"(?:0[xX])?[0-9a-fA-F]+",
    "float": r"[-+]?(?:\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+|nan|inf|NaN|Inf)",
    "char": r".",
    "ptr": r"(?:0[xX][0-9a-fA-F]+|\(nil\)|[0-9a-fA-F]+)",
}
_SAMPLE = {"int": "42", "hex": "0x1f", "float": "3.5", "char": "x", "ptr": "0x7f00", "str": "some value"}
MIN_LITERAL_CHARS = 12  # fewer literal characters than this and a format matches too much to mean anything
MIN_KEY_LENGTH = 4
_WORD = lazy(re.compile, r"\w+")
_TEXT_TOKEN = lazy(re.compile, r"\{\{|\}\}|\{(\w+)\}|[^{}]+|[{}]")


def text_parts(text: str) -> list[str | Placeholder]:
    """``Format.text`` read back: literal text (``{{``/``}}`` undoubled) and placeholders, in order."""
    out: list[str | Placeholder] = []
    for m in _TEXT_TOKEN.finditer(text):
        piece = m.group(0)
        if m.group(1) is not None:
            out.append(Placeholder(m.group(1)))
        else:
            literal = piece[0] if piece in ("{{", "}}") else piece
            if out and isinstance(out[-1], str):
                out[-1] += literal
            else:
                out.append(literal)
    return out


def fill_text(text: str, values) -> str:
    """``Format.text`` with each placeholder replaced by ``values(name)``."""
    return "".join(p if isinstance(p, str) else values(p.name) for p in text_parts(text))

TOKEN = lazy(re.compile, r"\w{4,}")  # how a log line is cut into words at match time; keys are such words


@dataclass(frozen=True, slots=True)
class Placeholder:
    name: str
    type: str = "str"  # str | int | hex | float | char | ptr


Part = str | Placeholder


@dataclass(frozen=True, slots=True)
class Format:
    parts: tuple[Part, ...]

    @property
    def text(self) -> str:
        """The format as people read it: ``{name}`` for each placeholder, literal braces doubled
        (as in Python's format strings), so the two never read alike."""
        return "".join(p.replace("{", "{{").replace("}", "}}") if isinstance(p, str) else "{" + p.name + "}"
                       for p in self.parts)

    @property
    def literal_chars(self) -> int:
        return sum(len(p.strip()) for p in self.parts if isinstance(p, str))

    def lines(self) -> list[tuple[Part, ...]]:
        """The parts of each output line (a literal newline starts a new one)."""
        out: list[list[Part]] = [[]]
        for part in self.parts:
            if isinstance(part, Placeholder):
                out[-1].append(part)
                continue
            pieces = part.split("\n")
            for n, piece in enumerate(pieces):
                if n:
                    out.append([])
                if piece:
                    out[-1].append(piece)
        return [tuple(line) for line in out]

    def render(self, values: dict[str, str] | None = None) -> str:
        values = values or {}
        return "".join(p if isinstance(p, str) else values.get(p.name, _SAMPLE[p.type]) for p in self.parts)


def merged(parts: list[Part]) -> tuple[Part, ...]:
    """Adjacent literals joined, empty ones dropped, placeholder names made unique (regex groups)."""
    out: list[Part] = []
    seen: dict[str, int] = {}
    for part in parts:
        if isinstance(part, str):
            if not part:
                continue
            if out and isinstance(out[-1], str):
                out[-1] += part
            else:
                out.append(part)
            continue
        name = _identifier(part.name)
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            name = f"{name}_{seen[name]}"
        out.append(Placeholder(name, part.type))
    return tuple(out)


def _identifier(text: str) -> str:
    """A placeholder name from the expression that fills it: ``returned.stderr.decode()`` → ``returned_stderr_decode``."""
    words = _WORD.findall(text)
    name = "_".join(words)[:40].strip("_") or "value"
    return f"v_{name}" if name[0].isdigit() else name


def line_regex(parts: tuple[Part, ...]) -> str | None:
    """One output line's matcher: literals escaped (whitespace runs flexible), placeholders captured.
    A leading placeholder is left off (the search finds the literal wherever it starts; a leading
    ``.*?`` would only multiply match attempts), a trailing one takes the rest of the line; None when
    the line has no literal text to anchor on."""
    core = list(parts)
    while core and isinstance(core[0], Placeholder):
        core.pop(0)
    if not any(isinstance(p, str) and p.strip() for p in core):
        return None
    out = []
    for n, part in enumerate(core):
        if isinstance(part, str):
            pieces = [re.escape(w) for w in part.split()]
            text = r"\s+".join(pieces)
            if part[:1].isspace() and n:
                text = r"\s+" + text if pieces else r"\s+"
            if part[-1:].isspace() and n < len(core) - 1 and pieces:
                text += r"\s+"
            out.append(text)
        else:
            last = n == len(core) - 1
            out.append(f"(?P<{part.name}>{_CAPTURE.get(part.type, '.*' if last else '.*?')})")
    return "".join(out)


def key_words(parts: tuple[Part, ...]) -> list[str]:
    """Words of a line's literal text that appear as whole tokens in any output of it: a word that
    touches a placeholder may be glued to the value, so it cannot be looked up on its own."""
    keys: list[str] = []
    for n, part in enumerate(parts):
        if not isinstance(part, str):
            continue
        for m in TOKEN.finditer(part):
            glued_left = m.start() == 0 and n > 0
            glued_right = m.end() == len(part) and n < len(parts) - 1
            if not (glued_left or glued_right) and not m.group().isdigit():
                keys.append(m.group())
    return keys
