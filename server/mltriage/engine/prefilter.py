"""Find every occurrence of any trigger literal in a block of bytes.

This is the only code that touches every byte of a log, so it decides the engine's throughput.
Python's ``re`` runs an alternation of ~200 literals at under 10 MB/s; Hyperscan (Intel's
multi-literal/regex engine, BSD licence, wheels for x86-64) does the same at several GB/s, so it
is used where it is installed, with its compiled database cached beside the library cache. The
pure-Python fallback searches each literal with ``bytes.find`` (C speed per literal), skipping
literals absent from the block: correct everywhere, only slower. A block under SMALL_BLOCK (a short
log, a diagnosis' texts for masking) is searched that way too, so a short input never pays for
importing Hyperscan and loading its database, until the short blocks searched so have cost about
what that does (both give the same occurrences).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import threading
from pathlib import Path

SMALL_BLOCK = 16 * 1024  # 750 bytes.find calls on this much cost less than Hyperscan's import and load
# bytes.find calls that cost what importing Hyperscan and loading a database do (~0.1 s here): short
# blocks past it (masking a diagnosis' hundreds of texts, a find per literal each) go to the accelerator
PYTHON_FINDS_BEFORE_LOAD = 100_000


@functools.cache
def _hyperscan():
    """The optional accelerator (declared for x86-64 in pyproject), imported on first use; None if absent."""
    try:
        import hyperscan
    except Exception:  # pragma: no cover - depends on the platform
        return None
    return hyperscan


class Prefilter:
    """``starts(block)`` returns the sorted start offsets of trigger occurrences in ``block``."""

    backend = "python"

    def __init__(self, literals: list[str], single_match: bool = False) -> None:
        # longest first, then by bytes: an order that is the same in every process (a set's order is
        # not), so the compiled database's cache key is too (it was compiled afresh on every start)
        self.literals = sorted({lit.encode("utf-8") for lit in literals}, key=lambda lit: (-len(lit), lit))
        self.single_match = single_match  # report each literal once at most (which ones occur, not where)

    def starts(self, block: bytes) -> list[int]:
        return sorted({start for start, _ in self.matches(block)})

    def matches(self, block: bytes) -> list[tuple[int, int]]:
        """(start offset, index into ``literals``) of every occurrence, sorted by offset."""
        found: list[tuple[int, int]] = []
        for n, lit in enumerate(self.literals):
            i = block.find(lit)
            while i != -1:
                found.append((i, n))
                i = -1 if self.single_match else block.find(lit, i + 1)
        found.sort()
        return found


class HyperscanPrefilter(Prefilter):
    backend = "hyperscan"

    def __init__(self, literals: list[str], cache_dir: Path | None = None, single_match: bool = False) -> None:
        super().__init__(literals, single_match)
        self._lengths = [len(lit) for lit in self.literals]
        self._cache_dir = cache_dir
        self._db = None  # loaded or compiled at the first block of SMALL_BLOCK or more (or once small ones cost as much)
        self._python_finds = 0  # bytes.find calls spent on small blocks so far

    def _load_or_compile(self, cache_dir: Path | None):
        _hs = _hyperscan()
        if _hs is None:
            raise ImportError("hyperscan")
        import hashlib  # (here: a short input never loads the accelerator, so never needs the key)

        flag = _hs.HS_FLAG_SINGLEMATCH if self.single_match else 0
        key = hashlib.sha256(b"\0".join(self.literals) + _hs.__version__.encode() + b"%d" % flag).hexdigest()[:24]
        path = cache_dir / f"prefilter-{key}.hsdb" if cache_dir else None
        if path is not None:
            try:
                db = _hs.loadb(path.read_bytes(), mode=_hs.HS_MODE_BLOCK)
                db.scratch = _hs.Scratch(db)  # a deserialised database comes without scratch space
                return db
            except Exception:
                pass
        db = _hs.Database(mode=_hs.HS_MODE_BLOCK)
        expressions = [_literal_regex(lit) for lit in self.literals]
        db.compile(expressions=expressions, ids=list(range(len(expressions))), elements=len(expressions), flags=[flag] * len(expressions))
        if path is not None:
            from mltriage.library import write_cache_file  # lazily: the library module imports the engine's

            try:
                data = _hs.dumpb(db)
            except Exception:  # a database that cannot be serialised is still used, only not cached
                return db
            write_cache_file(path, data)
        return db

    def matches(self, block: bytes) -> list[tuple[int, int]]:
        if self._db is None:
            self._python_finds += len(self.literals)
            # the accelerator from the first large block on, or once the short ones searched so far
            # have cost what loading it does
            if len(block) >= SMALL_BLOCK or self._python_finds >= PYTHON_FINDS_BEFORE_LOAD:
                try:
                    self._db = self._load_or_compile(self._cache_dir)
                except Exception:  # an accelerator that fails to load or compile: the Python search from then on
                    self._db = False
        if not self._db:
            return super().matches(block)
        found: list[tuple[int, int]] = []
        lengths = self._lengths

        def on_match(pattern_id: int, start: int, end: int, flags: int, context: object) -> None:
            found.append((end - lengths[pattern_id], pattern_id))

        self._db.scan(block, match_event_handler=on_match, scratch=self._scratch())
        found.sort()
        return found

    def _scratch(self):
        """Hyperscan's scratch space is per thread: the language server scans (masking, diagnosis) on
        its event loop and its engine thread at once, and a shared scratch fails (ScratchInUseError)."""
        local = self.__dict__.get("_local")
        if local is None:
            local = self.__dict__.setdefault("_local", threading.local())
        scratch = getattr(local, "scratch", None)
        if scratch is None:
            scratch = local.scratch = _hyperscan().Scratch(self._db)
        return scratch


def _literal_regex(lit: bytes) -> bytes:
    # Hyperscan patterns are regexes: escape every non-alphanumeric byte as \xHH.
    return b"".join(bytes([c]) if chr(c).isalnum() else b"\\x%02x" % c for c in lit)


def make_prefilter(literals: list[str], cache_dir: Path | None = None, single_match: bool = False) -> Prefilter:
    if os.environ.get("MLTRIAGE_PREFILTER", "auto") != "python" and importlib.util.find_spec("hyperscan") is not None:
        return HyperscanPrefilter(literals, cache_dir, single_match)
    return Prefilter(literals, single_match)
