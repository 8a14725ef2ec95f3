"""Super-linear regex shapes, found from the pattern's structure (no timing, so the answer does not
depend on how busy the machine is).

A backtracking engine goes quadratic when two repetitions that can consume the same characters sit
side by side (only optional items between them): on a line where the match fails late, every split
of the run between the two is tried, and each try rescans the rest of the run. ``[^\\n]+?\\s*$`` on
a line with a long run of spaces is the shape: the lazy field grows one character at a time and
``\\s*`` rescans every space each time. A repetition of a body that can end and start with
overlapping repetitions (``(?:\\w+\\s?)+``) is the nested form, exponential.

What is cheap stays allowed: a repetition that cannot give characters back (possessive ``++``,
``{m,n}+`` or inside an atomic group) does not retry; a pair with a side bounded to LONG characters
costs a bounded factor per position; a pair that ends the pattern succeeds on its first try. Characters are compared on a sample of every class a log
line holds (ASCII and a few non-ASCII letters, digits and spaces), which decides overlap for the
classes patterns use (``\\w``, ``\\s``, ``\\d``, ``.``, sets and their negations).
"""

from __future__ import annotations

import re
import re._constants as C  # the standard library's regex parser: the patterns are VERSION0 (re-compatible)
import re._parser as P
from dataclasses import dataclass
from enum import Enum

# Two side-by-side repetitions cost (where the first can stop) x (how far the second scans) per try:
# flagged when both exceed LONG characters, so the cost grows with the square of a run (a bounded
# side, such as `[^\n]{3,160}?`, keeps it linear in the line).
LONG = 256
AMBIGUOUS_ITERATIONS = 16  # a repetition of overlapping alternatives this long can split a run 2^16 ways
UNBOUNDED = 1 << 20  # what *, + and {n,} count as (longer than any line the scanner matches: 16 KiB)

_PROBES = "".join(chr(c) for c in range(128)) + "é中ßÅ٣\u00a0\u2003\u2028"


@dataclass(eq=False)
class Rep:
    """A repetition of a body that consumes one (or a few) characters per iteration."""

    chars: frozenset[str]  # which probe characters one iteration can consume
    low: int
    high: int  # iterations at most (UNBOUNDED for *, +, {n,})
    width: int  # characters of one iteration at most
    backtracks: bool  # False for possessive repetitions and those inside atomic groups
    where: str  # the repetition's quantifier and class, for the message

    @property
    def stops(self) -> int:
        """How many places it can end at when what follows fails (a possessive one: one)."""
        return self.high - self.low if self.backtracks else 0

    @property
    def reach(self) -> int:
        return self.high * self.width


@dataclass
class Info:
    nullable: bool  # can match the empty string
    optional: bool  # ... and always can (no anchor or lookaround that may fail)
    first: list[Rep]  # repetitions that may consume the first characters of this part's match
    last: list[Rep]  # ... and the last ones (backtracking ones only)
    final: list[Rep]  # repetitions after which nothing in this part can fail


class ShapeKind(Enum):
    ADJACENT = "adjacent"  # side by side in one sequence: quadratic
    NESTED = "nested"  # the end of an iteration against the start of the next: exponential
    AMBIGUOUS = "ambiguous"  # alternatives of one repeated body that match the same text: exponential


@dataclass(frozen=True)
class Shape:
    """One super-linear shape: the two repetitions and why they meet."""

    kind: ShapeKind
    left: str
    right: str

    def describe(self) -> str:
        if self.kind is ShapeKind.AMBIGUOUS:
            return (f"a repetition `{self.left}` whose alternatives can match the same text, so a run splits into "
                    "iterations in exponentially many ways: make the alternatives start with different characters")
        if self.kind is ShapeKind.NESTED:
            return (f"a repetition whose body ends in `{self.left}` and starts again with `{self.right}`, which match "
                    "the same characters (exponential): make the separator between iterations mandatory")
        return (f"`{self.left}` and `{self.right}` sit side by side and match the same characters (quadratic on a "
                "long run of them): make the first stop where the second cannot start, or make it possessive")


def _category(cat, ch: str) -> bool:
    probe = {
        C.CATEGORY_DIGIT: r"\d", C.CATEGORY_NOT_DIGIT: r"\D", C.CATEGORY_SPACE: r"\s", C.CATEGORY_NOT_SPACE: r"\S",
        C.CATEGORY_WORD: r"\w", C.CATEGORY_NOT_WORD: r"\W", C.CATEGORY_LINEBREAK: r"\n", C.CATEGORY_NOT_LINEBREAK: r"[^\n]",
    }.get(cat)
    return probe is not None and re.fullmatch(probe, ch) is not None


def _folds(ch: str, flags: int) -> set[str]:
    if not flags & C.SRE_FLAG_IGNORECASE:
        return {ch}
    return {f for f in (ch, ch.lower(), ch.upper()) if len(f) == 1}  # ("ß".upper() is "SS")


def _set_of(op, av, flags: int) -> frozenset[str] | None:
    """The probe characters one single-character item matches, or None for anything wider."""
    if op is C.LITERAL:
        return frozenset(c for c in _PROBES if c in _folds(chr(av), flags)) | frozenset(_folds(chr(av), flags))
    if op is C.NOT_LITERAL:
        return frozenset(c for c in _PROBES if not _folds(c, flags) & _folds(chr(av), flags))
    if op is C.ANY:
        return frozenset(c for c in _PROBES if c != "\n" or flags & C.SRE_FLAG_DOTALL)
    if op is C.CATEGORY:
        return frozenset(c for c in _PROBES if _category(av, c))
    if op is C.IN:
        negate = bool(av) and av[0][0] is C.NEGATE
        members: set[str] = set()
        for item_op, item_av in av[1:] if negate else av:
            if item_op is C.LITERAL:
                members |= _folds(chr(item_av), flags)
            elif item_op is C.RANGE:
                lo, hi = item_av
                members |= {c for c in _PROBES if any(lo <= ord(f) <= hi for f in _folds(c, flags))}
            elif item_op is C.CATEGORY:
                members |= {c for c in _PROBES if _category(item_av, c)}
        return frozenset(c for c in _PROBES if (c in members) != negate)
    return None


def _body_chars(items, flags: int) -> tuple[frozenset[str], int] | None:
    """A body made of single characters, literals and alternations of those (no repetition inside):
    the characters it can consume and its widest width; None for any other body."""
    chars: set[str] = set()
    width = 0
    for op, av in items:
        one = _set_of(op, av, flags)
        if one is not None:
            chars |= one
            width += 1
        elif op is C.BRANCH:
            alts = [_body_chars(alt.data, flags) for alt in av[1]]
            if any(a is None for a in alts):
                return None
            chars |= set().union(*(a[0] for a in alts))
            width += max(a[1] for a in alts)
        elif op is C.SUBPATTERN:
            inner = _body_chars(av[3].data, _flags(flags, av))
            if inner is None:
                return None
            chars |= inner[0]
            width += inner[1]
        else:
            return None
    return frozenset(chars), width


def _alternatives(items, flags: int) -> list[tuple[frozenset[str], ...]] | None:
    """A simple body (see ``_body_chars``) as the character sequences it can match, one set per
    character (``\\d|\\d\\d``, which the parser stores as ``\\d(?:|\\d)``: [(d,), (d, d)]); None past 64."""
    seqs: list[tuple[frozenset[str], ...]] = [()]
    for op, av in items:
        one = _set_of(op, av, flags)
        if one is not None:
            options = [(one,)]
        elif op is C.BRANCH:
            options = []
            for alt in av[1]:
                inner = _alternatives(alt.data, flags)
                if inner is None:
                    return None
                options += inner
        elif op is C.SUBPATTERN:
            options = _alternatives(av[3].data, _flags(flags, av))
            if options is None:
                return None
        else:
            return None
        seqs = [a + b for a in seqs for b in options]
        if len(seqs) > 64:
            return None
    return seqs


def _covers(short: tuple[frozenset[str], ...], long: tuple[frozenset[str], ...]) -> bool:
    """Some string matched by ``short`` is a prefix of one matched by ``long``."""
    return len(short) <= len(long) and all(a & b for a, b in zip(short, long))


def _ambiguous(items, flags: int) -> bool:
    """Whether a repeated simple body can cut one run of text into iterations in two ways (then in
    exponentially many): two alternatives match the same text, or one matches a prefix of another
    whose rest starts an iteration (``\\d|\\d\\d``; not ``[^:]|::`` nor ``ab|a``)."""
    alts = _alternatives(items, flags)
    if alts is None:
        return False
    for i, a in enumerate(alts):
        for j, b in enumerate(alts):
            if i == j or not a or not _covers(a, b):
                continue
            rest = b[len(a):]
            if not rest or any(_covers(rest, c) or _covers(c, rest) for c in alts if c):
                return True
    return False


def _flags(flags: int, av) -> int:
    return (flags | av[1]) & ~av[2]


class _Walker:
    def __init__(self, flags: int):
        self.flags = flags
        self.shapes: list[Shape] = []
        self._pairs: list[tuple[Rep, Rep]] = []

    def _add(self, shape: Shape) -> None:
        if shape not in self.shapes:
            self.shapes.append(shape)

    def top(self, items, flags: int) -> None:
        """A whole pattern (or a lookaround's inside, which is matched on its own): a pair whose
        second repetition ends the match with nothing after it that can fail is harmless (the
        first try succeeds)."""
        pairs, self._pairs = self._pairs, []
        info = self.seq(items, flags, False)
        final = {id(r) for r in info.final}
        for left, right in self._pairs:
            if id(right) not in final:
                self._add(Shape(ShapeKind.ADJACENT, left.where, right.where))
        self._pairs = pairs

    def seq(self, items, flags: int, atomic: bool) -> Info:
        nullable = optional = True
        first: list[Rep] = []
        tails: list[Rep] = []
        final: list[Rep] = []
        for op, av in items:
            part = self.node(op, av, flags, atomic)
            for left in tails:
                for right in part.first:
                    if left.stops > LONG and right.reach > LONG and left.chars & right.chars:
                        self._pairs.append((left, right))
            if nullable:
                first = first + part.first
            tails = part.last + (tails if part.nullable else [])
            final = part.final + (final if part.optional else [])
            nullable, optional = nullable and part.nullable, optional and part.optional
        return Info(nullable, optional, first, tails, final)

    def node(self, op, av, flags: int, atomic: bool) -> Info:
        if _set_of(op, av, flags) is not None:
            return Info(False, False, [], [], [])
        if op is C.AT:
            return Info(True, False, [], [], [])
        if op in (C.ASSERT, C.ASSERT_NOT):
            self.top(av[1].data, flags)  # matched on its own, never backtracked into
            return Info(True, False, [], [], [])
        if op is C.SUBPATTERN:
            return self.seq(av[3].data, _flags(flags, av), atomic)
        if op is C.ATOMIC_GROUP:
            inner = self.seq(av.data, flags, True)
            return Info(inner.nullable, inner.optional, inner.first, [], inner.final)
        if op is C.BRANCH:
            parts = [self.seq(alt.data, flags, atomic) for alt in av[1]]
            return Info(any(p.nullable for p in parts), any(p.optional for p in parts), [r for p in parts for r in p.first],
                        [r for p in parts for r in p.last], [r for p in parts for r in p.final])
        if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            return self.repeat(op, av, flags, atomic)
        if op is C.GROUPREF_EXISTS:
            parts = [self.seq(p.data, flags, atomic) for p in av[1:] if p is not None]
            return Info(True, False, [r for p in parts for r in p.first], [r for p in parts for r in p.last],
                        [r for p in parts for r in p.final])
        return Info(False, False, [], [], [])  # a back-reference

    def repeat(self, op, av, flags: int, atomic: bool) -> Info:
        low, high, body = av
        high = UNBOUNDED if high is C.MAXREPEAT else high
        backtracks = not atomic and op is not C.POSSESSIVE_REPEAT
        simple = _body_chars(body.data, flags)
        if simple is not None:
            chars, width = simple
            if backtracks and high >= AMBIGUOUS_ITERATIONS and _ambiguous(body.data, flags):
                # `(?:\d|\d\d)+`: a run of digits splits into iterations in 2^n ways
                self._add(Shape(ShapeKind.AMBIGUOUS, _text_of(chars, low, high, op), ""))
            rep = Rep(chars, low, high, width, backtracks, _text_of(chars, low, high, op))
            return Info(low == 0, low == 0, [rep], [rep] if backtracks else [], [rep])
        inner = self.seq(body.data, flags, atomic or not backtracks)
        if high > 1 and backtracks:  # the end of one iteration meets the start of the next
            for left in inner.last:
                for right in inner.first:
                    if left.high >= 2 and right.high >= 2 and left.chars & right.chars:
                        self._add(Shape(ShapeKind.NESTED, left.where, right.where))
        return Info(low == 0 or inner.nullable, low == 0 or inner.optional, inner.first,
                    inner.last if backtracks else [], inner.final)


def _named(cls: str) -> frozenset[str]:
    return frozenset(c for c in _PROBES if re.fullmatch(cls, c))


_NAMES = {_named(cls): cls for cls in (r"[^\n]", r"\s", r"\S", r"\w", r"\W", r"\d", r"\D", r"[\s\S]")}


def _text_of(chars: frozenset[str], low: int, high: int, op) -> str:
    """A readable name for a repetition, such as ``[^\\n]+?`` (the parser keeps no source offsets)."""
    cls = _NAMES.get(chars)
    if cls is None:
        shown = "".join(sorted(repr(c)[1:-1] for c in chars if c.isascii()))
        cls = f"[{shown[:40]}{'…' if len(shown) > 40 else ''}]"
    top = "" if high >= UNBOUNDED else str(high)
    quant = {(0, ""): "*", (1, ""): "+", (0, "1"): "?"}.get((low, top), f"{{{low},{top}}}")
    return cls + quant + ("?" if op is C.MIN_REPEAT else "+" if op is C.POSSESSIVE_REPEAT else "")


def super_linear_shapes(source: str, ignore_case: bool = False) -> list[Shape]:
    """The quadratic (adjacent) and exponential (nested) shapes of a pattern; [] when it has none
    or when the standard parser cannot read it (see ``shape_checkable``: the library does not run such a pattern)."""
    try:
        parsed = P.parse(source, C.SRE_FLAG_IGNORECASE if ignore_case else 0)
    except (re.error, RecursionError, OverflowError):
        return []
    walker = _Walker(parsed.state.flags)
    walker.top(parsed.data, parsed.state.flags)
    return walker.shapes


def shape_checkable(source: str, ignore_case: bool = False) -> bool:
    """Whether the standard parser reads the pattern, so that ``super_linear_shapes`` can judge it (a
    regex-module extension such as ``\\p{L}`` cannot be judged: the library does not run it)."""
    try:
        P.parse(source, C.SRE_FLAG_IGNORECASE if ignore_case else 0)
    except (re.error, RecursionError, OverflowError):
        return False
    return True


__all__ = ["LONG", "Shape", "ShapeKind", "shape_checkable", "super_linear_shapes"]
