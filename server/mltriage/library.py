"""Load the signature library fast.

Validating ~100 TOML files with pydantic costs far more than a whole diagnosis of a small log, so
the validated library is cached as plain JSON keyed by a hash of every file's path and contents
(plus the package version and ``schema.py``); start-up then only reads the files' bytes and one
JSON file, never pydantic. Regexes are compiled lazily, the first time a
trigger of their signature shows up in a log. Malformed files never stop a diagnosis: they are
skipped and reported in ``Library.problems`` (``mltriage signatures lint`` names file and field).
A pattern of a super-linear shape (``mltriage.regex_shape``) is never run: its signature keeps its
other patterns and its trigger phrases, and ``Library.not_run`` says so. That bounds every search's
work by its input (no search has a time limit: output is a function of the input).
"""

from __future__ import annotations

import json
import os
import time
import zlib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import regex

from mltriage import __version__

if TYPE_CHECKING:
    from mltriage.schema import Signature

CACHE_FORMAT = 8  # 8: patterns of a super-linear shape are left out at build (Library.not_run)


def signatures_dir() -> Path:
    """The packaged encyclopedia (wheel) or the repository's ``signatures/`` (checkout)."""
    override = os.environ.get("MLTRIAGE_SIGNATURES")
    if override:
        return Path(override)
    here = Path(__file__).resolve().parent
    for candidate in (here / "signatures", here.parent.parent / "signatures"):
        if candidate.is_dir():
            return candidate
    return here / "signatures"


def cache_dir() -> Path:
    override = os.environ.get("MLTRIAGE_CACHE_DIR")
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mltriage"


CACHE_KEEP = 16  # newest files of one kind kept, so that old libraries' caches go and the folder stays small


def write_cache_file(path: Path, data: bytes) -> None:
    """Write a cache file atomically, then remove the oldest files of its kind (the name before its
    key) beyond CACHE_KEEP. A read-only or vanished cache only costs start-up time."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_bytes(data)
        os.replace(tmp, path)
        kind = path.name.rsplit("-", 1)[0]
        dated = []
        for other in path.parent.glob(f"{kind}-*{path.suffix}"):
            try:
                dated.append((other.stat().st_mtime, other))
            except OSError:
                continue  # removed by another process meanwhile
        for _, old in sorted(dated, reverse=True)[CACHE_KEEP:]:
            old.unlink(missing_ok=True)
    except OSError:
        pass


@dataclass
class Rule:
    """One signature reduced to what matching and reporting need (no pydantic at run time)."""

    id: str
    title: str
    area: str
    category: str
    severity: str
    role: str
    confidence: float
    summary: str
    triggers: list[str]
    pattern_sources: list[str]
    require_sources: list[str]
    exclude_sources: list[str]
    within: int
    ignore_case: bool
    fix_summary: str
    fix_env: dict[str, str]
    fix_steps: list[str]
    fix_commands: list[str]
    verify: str
    p2p_related: bool
    fallback: bool
    path: str
    kind: str = "crash"
    reported_by: str = "worker"
    derived: bool = False
    needs_pattern: list[str] = field(default_factory=list)
    mechanism_gist: str = ""  # the mechanism's first sentence: the summary when a fact is missing
    fix_flags: list[dict[str, str | None]] = field(default_factory=list)  # {command, flag, value, why}: launch-command flags
    cause: dict[str, Any] | None = None  # a derived signature's evidence (schema.Cause, as plain data; read by mltriage.causes)

    def fires_alone(self, trigger: str) -> bool:
        """Whether ``trigger`` on its own (no pattern matched) still names this failure."""
        # a catch-all's pattern is its whole definition (and it only speaks where nothing else does)
        return not self.fallback and trigger not in self.needs_pattern

    @cached_property
    def patterns(self) -> list[regex.Pattern[str]]:
        return [self._compile(p) for p in self.pattern_sources]

    @cached_property
    def requires(self) -> list[regex.Pattern[str]]:
        return [self._compile(p) for p in self.require_sources]

    @cached_property
    def excludes(self) -> list[regex.Pattern[str]]:
        return [self._compile(p) for p in self.exclude_sources]

    @cached_property
    def int_facts(self) -> frozenset[str]:
        """The facts its patterns capture as whole numbers (a group of digits, with an optional sign, wherever the
        group appears): they are ints from capture on, in the finding and in the JSON."""
        typed: dict[str, bool] = {}
        for source in (*self.pattern_sources, *self.require_sources):
            for name, digits in groups_of(source).items():
                typed[name] = typed.get(name, True) and digits
        return frozenset(name for name, digits in typed.items() if digits)

    def _compile(self, source: str) -> regex.Pattern[str]:
        flags = regex.VERSION0 | (regex.IGNORECASE if self.ignore_case else 0)
        return regex.compile(source, flags)

    @classmethod
    def from_signature(cls, sig: "Signature", path: Path) -> "Rule":
        from mltriage.schema import Matcher
        from mltriage.templates import first_sentence

        match = sig.match or Matcher.model_construct(
            triggers=[], patterns=[], requires=[], excludes=[], within=200, ignore_case=False, needs_pattern=[]
        )
        return cls(
            id=sig.id,
            title=sig.title,
            area=sig.area,
            category=sig.category,
            severity=sig.severity,
            role=sig.role,
            confidence=sig.confidence,
            summary=sig.summary,
            triggers=list(match.triggers),
            pattern_sources=list(match.patterns),
            require_sources=list(match.requires),
            exclude_sources=list(match.excludes),
            within=match.within,
            ignore_case=match.ignore_case,
            fix_summary=sig.fix.summary,
            fix_env={e.name: e.value for e in sig.fix.env},
            fix_steps=list(sig.fix.steps),
            fix_commands=list(sig.fix.commands),
            verify=sig.verify,
            p2p_related=sig.p2p_related,
            fallback=sig.fallback,
            path=str(path),
            kind=sig.kind,
            reported_by=sig.reported_by,
            derived=sig.derived,
            needs_pattern=list(match.needs_pattern),
            mechanism_gist=first_sentence(sig.mechanism),
            fix_flags=[f.model_dump() for f in sig.fix.flags],
            cause=sig.cause.model_dump() if sig.cause is not None else None,
        )

    def to_plain(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k in _RULE_FIELDS}


_RULE_FIELDS = tuple(Rule.__dataclass_fields__)


def groups_of(source: str) -> dict[str, bool]:
    """Each named group of a pattern, and whether all it can match is a number (``-?\\d+`` and bounded forms).
    A pattern the standard parser does not read (the ``regex`` module's own syntax) types none of its groups."""
    import re._constants as C
    import re._parser as P

    try:
        tree = P.parse(source)
    except Exception:  # noqa: BLE001 - any parse failure: untyped, never a failed load
        return {}
    names = {number: name for name, number in tree.state.groupdict.items()}
    repeats = (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", C.MAX_REPEAT))
    digit = [(C.CATEGORY, C.CATEGORY_DIGIT)]

    def number(items) -> bool:
        items = list(items)
        digits = False
        for i, (op, av) in enumerate(items):
            if op is C.LITERAL and av == ord("-") and i == 0:
                continue
            if op in repeats and len(av[2]) == 1 and av[2][0][0] is C.IN and list(av[2][0][1]) == digit:
                digits = True
            elif op is C.IN and list(av) == digit:
                digits = True
            else:
                return False
        return digits

    out: dict[str, bool] = {}

    def walk(items) -> None:
        for op, av in items:
            if op is C.SUBPATTERN:
                if av[0] in names:
                    out[names[av[0]]] = out.get(names[av[0]], True) and number(av[3])
                walk(av[3])
            elif op in repeats:
                walk(av[2])
            elif op is C.BRANCH:
                for branch in av[1]:
                    walk(branch)
            elif op in (C.ASSERT, C.ASSERT_NOT):
                walk(av[1])

    walk(tree)
    return out


@dataclass
class Library:
    rules: dict[str, Rule]
    root: Path
    problems: list[str] = field(default_factory=list)
    not_run: list[str] = field(default_factory=list)  # patterns left out for a super-linear shape

    def get(self, signature_id: str) -> Rule | None:
        return self.rules.get(signature_id)

    def entry(self, signature_id: str) -> "Signature | None":
        """The full, validated encyclopedia entry (for explain/hover); None if unknown."""
        rule = self.rules.get(signature_id)
        if rule is None:
            return None
        import tomllib

        from mltriage.schema import Signature

        with open(rule.path, "rb") as fh:
            return Signature.model_validate(tomllib.load(fh))

    @cached_property
    def computed_values(self) -> frozenset[str]:
        """The export and flag values signatures compute with a command substitution (``$(...)``),
        as written (no fact filled in): the only values model.shell_value lets the shell run."""
        values = [v for rule in self.rules.values() for v in (*rule.fix_env.values(),
                  *(f["value"] for f in rule.fix_flags if f["value"]))]
        return frozenset(v for v in values if "$(" in v and not regex.search(r"\{\w+\}", v))

    @cached_property
    def trigger_index(self) -> dict[str, list[Rule]]:
        index: dict[str, list[Rule]] = {}
        for rule in self.rules.values():
            for trigger in rule.triggers:
                index.setdefault(trigger, []).append(rule)
        return index


def signature_files(root: Path) -> list[Path]:
    """``root.glob("*/*.toml")``'s files, in Path order, from directory entries: their types come with
    the listing, where a glob and ``is_file`` stat each file (every start lists the library)."""
    found = []
    try:
        with os.scandir(root) as areas:
            folders = [entry for entry in areas if _is(entry, entry.is_dir)]
        for folder in folders:
            with os.scandir(folder.path) as entries:
                found += [(folder.name, e.name) for e in entries if e.name.endswith(".toml") and _is(e, e.is_file)]
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        pass
    return [root / area / name for area, name in sorted(found)]


def _is(entry: os.DirEntry, test) -> bool:
    try:
        return test()
    except OSError:
        return False


def _fingerprint(root: Path, files: list[Path]) -> str:
    """A key over the library's content (not mtimes): a cache built elsewhere, e.g. the one shipped
    beside the signatures, stays valid wherever the files are installed."""
    import hashlib  # (here: a start whose files are as they were never hashes them, see _fingerprint_cached)

    digest = hashlib.sha256(f"{__version__}/{CACHE_FORMAT}".encode())
    digest.update(_SCHEMA_FILE.read_bytes())
    for path in files:
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:24]


_FINGERPRINTS: dict[str, str] = {}
_SCHEMA_FILE = Path(__file__).with_name("schema.py")


def _stamp(root: Path, files: list[Path]) -> str:
    """How the library's files look from outside: each one's size, mtime and ctime (a write changes
    the ctime even where a tool keeps the mtime), and schema.py's; raises OSError."""
    lines = [f"{__version__}/{CACHE_FORMAT}", str(root)]
    for path in (_SCHEMA_FILE, *files):
        st = path.stat()
        lines.append(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}")
    return "\n".join(lines)


def _fingerprint_cached(root: Path, files: list[Path]) -> str:
    """The content fingerprint, computed again only when a file's size or times changed: a long-lived
    process (the language server, a benchmark loop) diagnoses without re-reading 180 files, and so does
    a new process, from the stamp file that the last one to hash these files left in the cache."""
    try:
        stamp = _stamp(root, files)
    except OSError:
        return _fingerprint(root, files)
    key = _FINGERPRINTS.get(stamp)
    if key is None:
        if len(_FINGERPRINTS) > 16:
            _FINGERPRINTS.clear()
        stamp_file = cache_dir() / f"fingerprint-{zlib.crc32(stamp.encode()):08x}.json"
        try:
            plain = json.loads(stamp_file.read_text(encoding="utf-8"))
            key = plain["key"] if plain.get("stamp") == stamp and isinstance(plain.get("key"), str) else None
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            key = None
        if key is None:
            key = _fingerprint(root, files)
            write_cache_file(stamp_file, json.dumps({"stamp": stamp, "key": key}).encode("utf-8"))
        _FINGERPRINTS[stamp] = key
    return key


def validate_file(path: Path) -> "Signature":
    """Parse and validate one signature file; raises ValueError with file and field in the text."""
    import tomllib

    from pydantic import ValidationError

    from mltriage.schema import Signature

    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not valid TOML: {exc}") from None
    try:
        sig = Signature.model_validate(data)
    except ValidationError as exc:
        details = "; ".join(
            f"field '{'.'.join(str(p) for p in err['loc']) or '<root>'}': {err['msg']}" for err in exc.errors()
        )
        raise ValueError(f"{path}: {details}") from None
    if sig.id != path.stem:
        raise ValueError(f"{path}: field 'id': {sig.id!r} must equal the file name stem {path.stem!r}")
    if sig.area != path.parent.name:
        raise ValueError(f"{path}: field 'area': {sig.area!r} must equal the folder name {path.parent.name!r}")
    sources = [*sig.match.patterns, *sig.match.requires, *sig.match.excludes] if sig.match else []
    for source in sources:
        try:
            regex.compile(source, regex.VERSION0)
        except regex.error as exc:
            raise ValueError(f"{path}: field 'match': regex {source!r} does not compile: {exc}") from None
    return sig


def _build(root: Path, files: list[Path]) -> Library:
    rules: dict[str, Rule] = {}
    problems: list[str] = []
    not_run: list[str] = []
    for path in files:
        try:
            sig = validate_file(path)
        except (ValueError, OSError) as exc:
            problems.append(str(exc))
            continue
        if sig.id in rules:
            problems.append(f"{path}: field 'id': duplicate id {sig.id!r} (also in {rules[sig.id].path})")
            continue
        rule = Rule.from_signature(sig, path)
        not_run += _drop_super_linear(rule)
        rules[sig.id] = _as_cached(rule)
    return Library(rules=rules, root=root, problems=problems, not_run=not_run)


def _as_cached(rule: Rule) -> Rule:
    """The rule as the cache gives it back (its JSON has sorted keys, so a dict such as ``fix_env``
    comes back in sorted order): a library built from the files and one read from a cache must give
    the same diagnosis, in the same order, or a process's first run differs from the next."""
    plain = json.loads(json.dumps(rule.to_plain(), sort_keys=True))
    return Rule(**dict(plain, path=rule.path))


def _drop_super_linear(rule: Rule) -> list[str]:
    """Leave out the patterns whose shape can cost more than linear time on a long line (checked
    here, once per library build, and cached: ~1 ms a pattern); what was left out, for the warning."""
    from mltriage.regex_shape import shape_checkable, super_linear_shapes

    dropped = []
    for name in ("pattern_sources", "require_sources", "exclude_sources"):
        kept = []
        for source in getattr(rule, name):
            if not shape_checkable(source, rule.ignore_case):
                dropped.append(f"{rule.path}: regex {source!r} has a super-linear shape or one that cannot be checked "
                               "(a regex-module extension): not run")
            elif super_linear_shapes(source, rule.ignore_case):
                dropped.append(f"{rule.path}: regex {source!r} has a super-linear shape: not run")
            else:
                kept.append(source)
        setattr(rule, name, kept)
    return dropped


_LOADED: dict[str, Library] = {}
# A library looked at (globbed and stat'ed: ~2 ms for 190 files) less than this long ago is taken as
# it was: a process diagnosing many inputs in a row (the language server, a fuzz run) pays once a second.
RECHECK_S = 1.0
_CHECKED: dict[str, tuple[float, str]] = {}  # root -> (when it was last looked at, its fingerprint)


SHIPPED_CACHE = "library.cache.json"  # built by `mltriage signatures build-cache`, shipped beside the files


def load_library(root: Path | None = None, *, use_cache: bool = True) -> Library:
    """The library at ``root`` (default: ``signatures_dir()``), from a cache when one matches."""
    root = Path(root) if root else signatures_dir()
    recent = _CHECKED.get(str(root))
    if use_cache and recent is not None and time.monotonic() - recent[0] < RECHECK_S and recent[1] in _LOADED:
        return _LOADED[recent[1]]  # looked at less than a second ago: no glob, no stat
    if not root.is_dir():
        raise FileNotFoundError(f"signature library not found at {root}")
    files = signature_files(root)
    key = _fingerprint_cached(root, files)
    _CHECKED[str(root)] = (time.monotonic(), key)
    if use_cache and key in _LOADED:
        return _LOADED[key]
    cache_file = cache_dir() / f"library-{key}.json"
    library = None
    if use_cache:
        library = _read_cache(cache_file, root, key) or _read_cache(root / SHIPPED_CACHE, root, key)
    if library is None:
        library = _build(root, files)
        if use_cache:
            _write_cache(cache_file, library, key)
    _LOADED[key] = library
    return library


def _read_cache(path: Path, root: Path, key: str) -> Library | None:
    try:
        plain = json.loads(path.read_text(encoding="utf-8"))
        if plain.get("key") != key:
            return None
        rules = {}
        for r in plain["rules"]:
            r = dict(r, path=str(root / r["path"]))  # cached paths are relative to the library
            rules[r["id"]] = Rule(**r)
        return Library(rules=rules, root=root, problems=list(plain["problems"]), not_run=list(plain.get("not_run", [])))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_cache(cache_file: Path, library: Library, key: str) -> None:
    payload = {
        "key": key,
        "rules": [dict(r.to_plain(), path=str(Path(r.path).relative_to(library.root))) for r in library.rules.values()],
        "problems": library.problems,
        "not_run": library.not_run,
    }
    try:
        data = json.dumps(payload, indent=None, sort_keys=True).encode("utf-8")
    except (ValueError, TypeError):
        return
    write_cache_file(cache_file, data)


def build_shipped_cache(root: Path | None = None) -> Path:
    """Validate the library and write the cache that ships beside it (first start skips pydantic)."""
    root = Path(root) if root else signatures_dir()
    files = signature_files(root)
    library = _build(root, files)
    if library.problems:
        raise ValueError("the library has invalid files; fix them first:\n" + "\n".join(library.problems))
    target = root / SHIPPED_CACHE
    _write_cache(target, library, _fingerprint(root, files))
    return target
