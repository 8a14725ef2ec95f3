"""Mask secrets (tokens, keys, passwords) in everything we render or export.

Logs echo environments, command lines and configs; a diagnosis pasted into a ticket must not carry
a Hugging Face token, an AWS key or a database password along with it.

The rules are data, not code: gitleaks' maintained rule set (``secret_rules/gitleaks.toml``, a
verbatim copy of a tagged release, its source and licence in its header) plus our own rules for the
forms logs print and gitleaks does not scan for (``secret_rules/mltriage.toml``). Both are read
with gitleaks' semantics: a rule runs only where one of its keywords occurs (one multi-literal
scan finds them all), only the secret group is masked, and entropy, allowlists and stopwords
exempt what is not a secret. Every search has a timeout; a text whose search timed out is withheld
whole, never shown unmasked.

Secrets are found by their context (an assignment, a flag that takes a password, a URL's userinfo
or query, a header, a Python repr; mltriage.toml) and by their shape (gitleaks' rules and ours).

Where it happens (the one boundary): ``mask_diagnosis`` masks every field of a ``Diagnosis``, the
sentences filled in from signatures included (they quote the log's launch command), once all of
it is in: the engine runs it as it hands a diagnosis out, and every output (``Diagnosis.to_json``,
hence the JSON, the editor's view; ``render_text``; ``render_sarif``) passes ``ensure_masked``
first, so a diagnosis made anywhere else cannot be shown unmasked either. Log text the engine
cuts to a length while it reads goes through ``clip``, which never cuts inside a token (a secret
cut at the edge would no longer look like one).

The work is linear in the text: each rule's search reads it once, and what a match costs beyond
that is bounded (its secret, its match, 50 characters of left context; its line once per scan,
not once per match). ``RuleSet.work`` counts the characters read, for tests.
"""

from __future__ import annotations

import bisect
import json
import math
import re
import warnings
import zlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, fields, is_dataclass, replace
from enum import Enum
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

import regex

from mltriage.lazy_pattern import lazy

MASK = "****"
WITHHELD = "**** (text withheld: a secret rule could not be run on it in bounded time)"


class Cost(Enum):
    """What one search of a regex can cost, judged from its shape (regex_shape), never timed: what is
    masked or withheld is the same on any machine."""

    LINEAR = "linear"
    QUADRATIC = "quadratic"  # two overlapping repetitions side by side: run only on texts of QUADRATIC_MAX_CHARS or less
    UNBOUNDED = "unbounded"  # nested/ambiguous repetitions, or a shape the checker cannot read: never run


QUADRATIC_MAX_CHARS = 2048  # a quadratic search of this many characters is a few million steps at most
_INLINE_FLAGS = lazy(re.compile, r"\(\?([aiLmsux]+)\)")


@lru_cache(maxsize=1024)
def regex_cost(source: str) -> Cost:
    """The cost class of a secret rule's or an allowlist's regex. Go's inline flags (gitleaks writes
    `(?i)` mid-pattern) are read as global, and Go's `\\z` as Python's `\\Z`: both only widen what the
    shape check compares, so a verdict of linear still holds."""
    from mltriage.regex_shape import ShapeKind, shape_checkable, super_linear_shapes

    ignore_case = "i" in "".join(_INLINE_FLAGS.findall(source))
    checked = _INLINE_FLAGS.sub("", source).replace("\\z", "\\Z")
    with warnings.catch_warnings():  # the standard parser's FutureWarning on gitleaks' `[[` sets: noise here
        warnings.simplefilter("ignore", FutureWarning)
        if not shape_checkable(checked, ignore_case):
            return Cost.UNBOUNDED
        shapes = super_linear_shapes(checked, ignore_case)
    if any(shape.kind is not ShapeKind.ADJACENT for shape in shapes):
        return Cost.UNBOUNDED
    return Cost.QUADRATIC if shapes else Cost.LINEAR


def runs_on(cost: Cost, text: str) -> bool:
    """Whether a search of this cost class may run on ``text``: by its length, never by a clock."""
    return cost is Cost.LINEAR or (cost is Cost.QUADRATIC and len(text) <= QUADRATIC_MAX_CHARS)

MIN_TEXT = 8  # shorter texts cannot hold a secret worth masking (and cost nothing to skip)
MIN_KNOWN_SECRET = 6  # a secret found once is masked wherever else it occurs, if at least this long
MIN_FRAGMENT = 8  # ... and in facts, any piece of it this long (a pattern's bound may have cut it)
RULE_FILES = ("gitleaks.toml", "mltriage.toml")
RULES_DIR = Path(__file__).with_name("secret_rules")
# gitleaks' keyword-context rules start with an optional, uncaptured left context; a backtracking
# engine would try it at every offset, so it is dropped and restored only where an allowlist reads it
_LAZY_LEFT_CONTEXT = r"(?i)[\w.-]{0,50}?"
# gitleaks ends some 150 rules with this: a token followed by a quote, a space, `;`, an escape or the end.
# Logs also print one before `,` `.` `:` `)` `]` `}` `>` `/` `&` `|` (`(key=AIza...)`, a path, a
# URL): those end it too here.
_GITLEAKS_END = r"""(?:[\x60'"\s;]|\\[nr]|$)"""
_LOG_END = r"""(?:[\x60'"\s;,.:)\]}>/&|]|\\[nr]|$)"""
_LEFT_CONTEXT_MAX = 50
_LEFT_CONTEXT_CHARS = lazy(regex.compile, r"[\w.-]{0,50}$")


def shannon_entropy(text: str) -> float:
    n = len(text)
    if not n:
        return 0.0
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values())


def _basic_credentials(secret: str) -> bool:
    """HTTP Basic credentials are base64 of ``user:password``."""
    try:
        import base64  # (only here: start-up)

        decoded = base64.b64decode(secret + "=" * (-len(secret) % 4), validate=True).decode("utf-8")
    except ValueError:  # (binascii.Error is a ValueError)
        return False
    return ":" in decoded and decoded.isprintable()


def _random_shape(secret: str) -> bool:
    """Generated base64 (a key), not a path or a word: mixed case and digits, few slashes."""
    return (
        not secret.startswith("/")
        and secret.count("/") <= len(secret) // 12
        and any(c.isupper() for c in secret)
        and any(c.islower() for c in secret)
        and any(c.isdigit() for c in secret)
    )


_CHECKS = {"basic-credentials": _basic_credentials, "random": _random_shape}


@dataclass(eq=False)  # identity: a line's verdict is remembered per allowlist
class Allowlist:
    target: str = "secret"  # what the regexes read: the secret, the whole match, or the line
    regexes: tuple[str, ...] = ()
    stopwords: tuple[str, ...] = ()
    condition: str = "OR"
    never: bool = False  # it also needs a file path to match (condition AND): log text has none

    @cached_property
    def compiled(self) -> regex.Pattern[str]:
        """All regexes as one alternation: any of them matching is one search, not one each."""
        return regex.compile("|".join(f"(?:{r})" for r in self.regexes))

    @cached_property
    def cost(self) -> Cost:
        costs = {regex_cost(r) for r in self.regexes}
        return next((c for c in (Cost.UNBOUNDED, Cost.QUADRATIC) if c in costs), Cost.LINEAR)

    @cached_property
    def _stopwords(self):
        """One multi-literal search for gitleaks' stopwords (generic-api-key has 1,400 of them)."""
        from mltriage.engine.prefilter import make_prefilter
        from mltriage.library import cache_dir

        return make_prefilter(list(self.stopwords), cache_dir(), single_match=True)

    def allows(self, secret: str, match: str, line: tuple[int, int], scan: _Scan) -> bool:
        if self.never:
            return False
        checks = []
        if self.regexes:
            checks.append(scan.line_allowed(self, line) if self.target == "line"
                          else self._regex_allows(match if self.target == "match" else secret, scan))
        if self.stopwords:
            scan.work += len(secret)
            checks.append(bool(self._stopwords.matches(secret.lower().encode("utf-8", "surrogatepass"))))
        if not checks:
            return False
        return all(checks) if self.condition == "AND" else any(checks)

    def _regex_allows(self, target: str, scan: _Scan) -> bool:
        if not runs_on(self.cost, target):
            return False  # not searched: nothing is allowed, the secret stays masked
        scan.work += len(target)
        return self.compiled.search(target) is not None

    @classmethod
    def from_toml(cls, table: dict[str, Any]) -> Allowlist:
        condition = table.get("condition", "OR").upper()
        return cls(
            target=table.get("regexTarget", "secret"),
            regexes=tuple(table.get("regexes", ())),
            stopwords=tuple(w.lower() for w in table.get("stopwords", ())),
            condition=condition,
            never=bool(table.get("paths")) and condition == "AND",
        )


class _Scan:
    """One text being scanned: where its lines are (found once, not per match), each line's
    allowlist verdicts (a 64 KB line with 3,000 matches is read once per allowlist, not 3,000
    times), and ``work``, the characters the searches read, for tests that the work is linear."""

    __slots__ = ("text", "work", "_newlines", "_verdicts")

    def __init__(self, text: str) -> None:
        self.text = text
        self.work = 0
        self._newlines: list[int] | None = None
        self._verdicts: dict[tuple[int, int, int], bool] = {}

    def line_of(self, start: int, end: int) -> tuple[int, int]:
        """The span of the line(s) holding ``text[start:end]``."""
        if self._newlines is None:
            self.work += len(self.text)
            self._newlines = [m.start() for m in re.finditer("\n", self.text)]
        newlines = self._newlines
        i = bisect.bisect_left(newlines, start)
        line_start = newlines[i - 1] + 1 if i else 0
        j = bisect.bisect_left(newlines, end, i)
        return line_start, newlines[j] if j < len(newlines) else len(self.text)

    def line_allowed(self, allowlist: Allowlist, line: tuple[int, int]) -> bool:
        key = (id(allowlist), *line)
        verdict = self._verdicts.get(key)
        if verdict is None:
            verdict = self._verdicts[key] = allowlist._regex_allows(self.text[line[0]:line[1]], self)
        return verdict


@dataclass(eq=False)  # identity: rules are collected in dicts
class SecretRule:
    id: str
    source: str  # the regex as the rule file gives it, adapted for a backtracking engine
    keywords: tuple[str, ...]
    entropy: float = 0.0
    secret_group: int = 0
    allowlists: tuple[Allowlist, ...] = ()
    check: str | None = None
    left_context: bool = False  # its optional left context was dropped (see _LAZY_LEFT_CONTEXT)
    gate: re.Pattern[str] | None = None  # a rule without keywords runs only where this finds something

    @cached_property
    def pattern(self) -> regex.Pattern[str]:  # compiled on first use: most rules never meet their keyword
        return regex.compile(self.source)

    @cached_property
    def cost(self) -> Cost:  # judged on first use, like the compile
        return regex_cost(self.source)

    @classmethod
    def from_toml(cls, table: dict[str, Any]) -> SecretRule | None:
        source = table.get("regex")
        if not source or table.get("path"):
            return None  # a file-name rule (or no regex at all): nothing to find in log text
        source = source.replace(_GITLEAKS_END, _LOG_END)
        left_context = source.startswith(_LAZY_LEFT_CONTEXT)
        if left_context:
            source = "(?i)" + source[len(_LAZY_LEFT_CONTEXT):]
        check = table.get("check")
        if check is not None and check not in _CHECKS:
            raise ValueError(f"secret rule {table.get('id')}: unknown check {check!r}")
        return cls(
            id=table["id"],
            source=source,
            keywords=tuple(k.lower() for k in table.get("keywords", ())),
            entropy=float(table.get("entropy", 0.0)),
            secret_group=int(table.get("secretGroup", 0)),
            allowlists=tuple(Allowlist.from_toml(a) for a in table.get("allowlists", ())),
            check=check,
            left_context=left_context,
            gate=re.compile(table["gate"]) if table.get("gate") else None,
        )

    def secrets(self, scan: _Scan, allowlists: tuple[Allowlist, ...]) -> Iterable[tuple[int, int]]:
        """Spans of this rule's secrets in the scanned text; raises Unsearchable where its cost class may not run on it.
        The work per match is bounded (its secret, its match, a 50-character left context; its line
        once per scan), so a text of many matches costs its length, not its length per match."""
        text = scan.text
        if self.gate is not None:
            scan.work += len(text)
            if self.gate.search(text) is None:
                return
        if not runs_on(self.cost, text):
            raise Unsearchable(self.id)
        scan.work += len(text)
        for m in self.pattern.finditer(text):
            start, end = self._secret_span(m)
            if end <= start:
                continue
            secret = text[start:end]
            scan.work += len(secret)
            if self.entropy and shannon_entropy(secret) <= self.entropy:
                continue
            if self.check and not _CHECKS[self.check](secret):
                continue
            lists = (*allowlists, *self.allowlists)
            if lists:
                match_start = m.start()
                if self.left_context:  # the left context gitleaks' regex would have matched: at most 50 characters
                    window = max(0, match_start - _LEFT_CONTEXT_MAX)
                    scan.work += match_start - window
                    match_start -= len(_LEFT_CONTEXT_CHARS.search(text, window, match_start).group())
                line = scan.line_of(m.start(), m.end())
                if any(a.allows(secret, text[match_start:m.end()], line, scan) for a in lists):
                    continue
            yield start, end

    def _secret_span(self, m: regex.Match[str]) -> tuple[int, int]:
        if m.re.groups:
            if self.secret_group:
                return m.span(self.secret_group)
            for group in range(1, m.re.groups + 1):  # gitleaks: the first non-empty group
                start, end = m.span(group)
                if end > start:
                    return start, end
        return m.span()


class RuleSet:
    """All rules, indexed by keyword; ``scan`` finds the secrets in one text."""

    def __init__(self, rules: list[SecretRule], allowlists: tuple[Allowlist, ...] = ()) -> None:
        from mltriage.engine.prefilter import make_prefilter  # lazily: the engine package imports this module
        from mltriage.library import cache_dir

        self.rules = rules
        self.allowlists = allowlists
        self.work = 0  # characters read by all scans so far (a count, for tests: never a time)
        self.always = [r for r in rules if not r.keywords]
        by_keyword: dict[str, list[SecretRule]] = {}
        for rule in rules:
            for keyword in rule.keywords:
                by_keyword.setdefault(keyword, []).append(rule)
        self._prefilter = make_prefilter(list(by_keyword), cache_dir(), single_match=True)
        self._rules_of = [by_keyword[lit.decode("utf-8")] for lit in self._prefilter.literals]

    @cached_property
    def _always_gate(self) -> re.Pattern[str] | None:
        """One search for all keyword-less rules' gates (None: one of them has no gate)."""
        if any(r.gate is None for r in self.always):
            return None
        return re.compile("|".join(f"(?:{r.gate.pattern})" for r in self.always) or "(?!)")

    def rules_for(self, text: str) -> list[SecretRule]:
        """The rules worth running on ``text``: those whose keyword it holds, and gated keyword-less ones."""
        found = self._prefilter.matches(text.lower().encode("utf-8", "surrogatepass"))
        gate = self._always_gate
        rules = list(self.always) if gate is None or gate.search(text) else []
        if found:
            for n in {n for _, n in found}:
                rules.extend(self._rules_of[n])
            rules = list(dict.fromkeys(rules))
        return rules

    def scan(self, text: str) -> list[tuple[int, int]] | None:
        """Sorted, merged secret spans; ``None`` when a rule could not run on it (the text must be withheld)."""
        self.work += len(text)  # the keyword pre-filter
        rules = self.rules_for(text)
        if not rules:
            return []
        spans: list[tuple[int, int]] = []
        scan = _Scan(text)
        try:
            for rule in rules:
                spans.extend(rule.secrets(scan, self.allowlists))
        except Unsearchable:
            return None
        finally:
            self.work += scan.work
        spans.sort()
        merged: list[tuple[int, int]] = []
        for start, end in spans:
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
            else:
                merged.append((start, end))
        return merged


class Unsearchable(Exception):
    """A rule whose regex may not run on this text (its cost class, the text's length): the text is withheld."""


def read_rule_file(path: Path) -> dict[str, Any]:
    """A rule file's tables; parsed once and kept as JSON in the cache (TOML parsing of gitleaks'
    100 KB costs ~30 ms, more than masking a diagnosis), keyed by the file's size and time."""
    from mltriage.library import cache_dir, write_cache_file

    stat = path.stat()
    stamp = f"{path.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}"
    # the file holds its stamp, so a checksum names it (no hashlib to import at start-up)
    cached = cache_dir() / f"secret-rules-{zlib.crc32(stamp.encode()):08x}.json"
    try:
        plain = json.loads(cached.read_text(encoding="utf-8"))
        if plain["stamp"] == stamp:
            return plain["tables"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    import tomllib  # (only when the cache cannot answer)

    with open(path, "rb") as fh:
        data = tomllib.load(fh)
    write_cache_file(cached, json.dumps({"stamp": stamp, "tables": data}).encode("utf-8"))  # read-only: parsed every time
    return data


def load_rules(paths: Iterable[Path] | None = None) -> RuleSet:
    tables: list[dict[str, Any]] = []
    adaptations: dict[str, dict[str, Any]] = {}
    allowlists: list[Allowlist] = []
    for path in paths or [RULES_DIR / name for name in RULE_FILES]:
        data = read_rule_file(path)
        for key in ("allowlist", "allowlists"):  # gitleaks' global allowlist(s)
            found = data.get(key, [])
            allowlists.extend(Allowlist.from_toml(t) for t in ([found] if isinstance(found, dict) else found))
        tables.extend(data.get("rules", []))
        adaptations.update({a["id"]: a for a in data.get("adapt", [])})
    rules = []
    for table in tables:
        adapt = adaptations.get(table.get("id"))
        if adapt is not None and table.get("regex") == adapt["from"]:  # a stale adaptation is not applied
            table = {**table, "regex": adapt["regex"]}
        rule = SecretRule.from_toml(table)
        if rule is not None:
            rules.append(rule)
    return RuleSet(rules, tuple(allowlists))


def stale_adaptations(paths: Iterable[Path] | None = None) -> list[str]:
    """Ids of adaptations whose rule is gone or no longer has the regex they were written for."""
    tables, adaptations = {}, []
    for path in paths or [RULES_DIR / name for name in RULE_FILES]:
        data = read_rule_file(path)
        tables.update({t["id"]: t for t in data.get("rules", [])})
        adaptations.extend(data.get("adapt", []))
    return [a["id"] for a in adaptations if tables.get(a["id"], {}).get("regex") != a["from"]]


@lru_cache(maxsize=1)
def rule_set() -> RuleSet:
    return load_rules()


def secret_spans(text: str) -> list[tuple[int, int]] | None:
    """Where ``text`` holds secrets (``None``: a rule could not run on it, treat all of it as secret)."""
    if len(text) < MIN_TEXT:
        return []
    return rule_set().scan(text)


def _apply(text: str, spans: list[tuple[int, int]]) -> str:
    out, pos = [], 0
    for start, end in spans:
        out.append(text[pos:start])
        out.append(MASK)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def mask_secrets(text: str) -> str:
    """``text`` with every recognised secret replaced by ``****``."""
    if not text or len(text) < MIN_TEXT:
        return text
    spans = secret_spans(text)
    if spans is None:
        return WITHHELD
    return _apply(text, spans) if spans else text


# what ends a token: a secret never spans one of these unless its context (a quote, a BEGIN line)
# is kept before the cut, and the rules mask from that context to the end of the text
_TOKEN_BREAKS = " \t\r\n\"'`,;()[]{}<>\\|"


def clip(text: str, limit: int) -> str:
    """``text[:limit]``, but never ending inside a token: a token the limit would cut is cut away
    whole. (A token cut short no longer looks like a secret, so the masker applied later could
    not see it.) C-speed searches of at most ``limit`` characters: no rule runs here."""
    if len(text) <= limit:
        return text
    if text[limit] in _TOKEN_BREAKS or text[limit - 1] in _TOKEN_BREAKS:
        return text[:limit]
    start = max(text.rfind(c, 0, limit) for c in _TOKEN_BREAKS) + 1
    return text[:start]


_SCALARS = frozenset({int, float, bool, type(None)})  # no text in them


@dataclass
class _Masker:
    """Masks the texts of one diagnosis; remembers each secret it found, to mask it wherever else it
    shows up (a fact captured without the words that made it recognisable, a rendered sentence)."""

    found: set[str] = field(default_factory=set)
    _seen: dict[str, str] = field(default_factory=dict)

    def text(self, value: str) -> str:
        if len(value) < MIN_TEXT:
            return value
        done = self._seen.get(value)
        if done is not None:
            return done
        spans = secret_spans(value)
        if spans is None:
            masked = WITHHELD
        else:
            masked = _apply(value, spans) if spans else value
            self.found.update(s for a, b in spans if len(s := value[a:b]) >= MIN_KNOWN_SECRET)
        self._seen[value] = masked
        return masked

    def lines(self, values: list[str]) -> list[str]:
        """A list of log lines, also searched as one text: a PEM block spans lines. A secret found
        across lines is masked in each line it touches."""
        joined = "\n".join(values)
        if "-----" not in joined or len(values) < 2 or joined.count("\n") != len(values) - 1:
            return [self.text(v) for v in values]
        spans = secret_spans(joined)
        if spans is None:
            return [WITHHELD for _ in values]
        out, start = [], 0
        for value in values:
            end = start + len(value)
            local = [(max(a, start) - start, min(b, end) - start) for a, b in spans if a < end and b > start]
            self.found.update(s for a, b in local if len(s := value[a:b]) >= MIN_KNOWN_SECRET)
            out.append(self.text(_apply(value, local) if local else value))
            start = end + 1
        return out

    def deep(self, value: Any, mask: Any = None) -> Any:
        """``value`` (text, or dicts, lists and tuples of them) with ``mask`` applied to every string."""
        return self._deep(value, mask or self.text)

    def _deep(self, value: Any, mask: Any) -> Any:
        kind = type(value)  # exact types first: a 40,000-entry launcher list is walked here
        if kind is str:
            return mask(value)
        if kind in _SCALARS:
            return value
        if kind is dict or isinstance(value, dict):
            return {k: mask(v) if type(v) is str else v if type(v) in _SCALARS else self._deep(v, mask)
                    for k, v in value.items()}
        if kind is list or kind is tuple or isinstance(value, (list, tuple)):
            return kind(mask(v) if type(v) is str else v if type(v) in _SCALARS else self._deep(v, mask) for v in value)
        if isinstance(value, str):
            return mask(value)
        if is_dataclass(value) and not isinstance(value, type):  # a fix's launch flags: typed records of text
            return replace(value, **{f.name: self._deep(getattr(value, f.name), mask) for f in fields(value)})
        return value

    @cached_property
    def _known(self) -> regex.Pattern[str]:
        """Every secret found, as one named list: a set lookup per position, however many there are
        (an alternation, or a substring test per secret, costs the text's length per secret)."""
        return regex.compile(r"\L<secrets>", secrets=sorted(self.found, key=len, reverse=True) or ["\0never\0"])

    @cached_property
    def _pieces(self) -> frozenset[str]:
        n = MIN_FRAGMENT
        return frozenset(s[i : i + n] for s in self.found for i in range(len(s) - n + 1))

    def known(self, value: str) -> str:
        """``value`` with every secret found elsewhere in the diagnosis masked."""
        if len(value) < MIN_KNOWN_SECRET:
            return value
        return self._known.sub(MASK, value)

    def fragments(self, value: str) -> str:
        """Also a piece of a known secret: a fact whose pattern's bound cut a token short."""
        value = self.known(value)
        n, pieces = MIN_FRAGMENT, self._pieces
        spans: list[tuple[int, int]] = []
        for i in range(len(value) - n + 1):
            if value[i : i + n] in pieces:
                if spans and i <= spans[-1][1]:
                    spans[-1] = (spans[-1][0], i + n)
                else:
                    spans.append((i, i + n))
        return _apply(value, spans) if spans else value


# Names the engine chose or computed (ids, kinds, the inputs' paths, internal links): left alone.
# Everything else is searched, our own sentences too (title, root cause, fix, verify): the engine
# fills them with what the log said (a launch command in ``fix.relaunch`` and in "rerun <command>"),
# and tests/test_masking.py checks that no signature's own words look like a secret to the rules.
# (``catalogue``: where upstream source raises the message, from our catalogue, not from the log.)
_NAMES = frozenset({"signature", "category", "area", "severity", "role", "kind", "clock", "reported_by", "source", "sources",
                    "first_error", "block", "probe", "status", "failure_kind", "failure_domain", "catalogue"})
_MASKED = "_mltriage_masked"  # set on a diagnosis once masked (an attribute, not a field: never exported)


@lru_cache(maxsize=None)
def _text_fields(cls: type) -> tuple[str, ...]:
    nested = ("findings", "ranks") if cls.__name__ == "Diagnosis" else ()
    return tuple(f.name for f in fields(cls) if f.name not in _NAMES and f.name not in nested)


def _texts(obj: Any) -> list[tuple[str, Any]]:
    """(name, value) of a record's fields that may hold text; a field added later is included."""
    out = []
    for name in _text_fields(type(obj)):
        value = getattr(obj, name)
        if isinstance(value, (str, list, dict, tuple)) or is_dataclass(value):
            out.append((name, value))
    return out


def mask_diagnosis(diagnosis: Any) -> None:
    """Mask, in place, every text of a ``Diagnosis``: the one boundary between what was read and
    what is shown.

    Every field of the diagnosis, its findings (their fixes, launch flags and relaunch command
    included) and its ranks is searched with the rules: evidence, facts, notes, launcher entries,
    Flight Recorder summaries, pasted topology, explanation, warnings, inputs skipped or not read,
    the sentences filled in from signatures, and any field added later; only the names in
    ``_NAMES`` are not. Then every text is cleared of every secret found anywhere in the diagnosis
    (a fact filled into a sentence is masked there too, even where its context is gone), and facts
    of any piece of one (a pattern's bound may have cut a token short).
    """
    m = _Masker()
    records = [diagnosis, *diagnosis.findings, *diagnosis.ranks]
    for record in records:
        for name, value in _texts(record):
            setattr(record, name, m.lines(value) if name == "evidence" else m.deep(value))
    if m.found:
        for record in records:
            for name, value in _texts(record):
                setattr(record, name, m.deep(value, m.fragments if name == "facts" else m.known))
    setattr(diagnosis, _MASKED, True)


def ensure_masked(diagnosis: Any) -> Any:
    """``diagnosis``, masked: every output (text, JSON, SARIF) is made through this, so a diagnosis
    made anywhere (the engine masks its own as it hands them out) cannot be shown unmasked."""
    if not getattr(diagnosis, _MASKED, False):
        mask_diagnosis(diagnosis)
    return diagnosis
