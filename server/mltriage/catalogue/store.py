"""The catalogue's data, read lazily: per project, an index of key words, and entry shards loaded on first use.

Nothing is read until a line asks; a line's words pick the few shards that can hold an entry for
it, so a diagnosis that meets three unexplained error lines reads a handful of small files. Each
project is a folder of its own (``data/<project>/``): regenerating one leaves the others as they are.
"""

from __future__ import annotations

import gzip
import json
import os
import zlib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import regex

from mltriage.catalogue.formats import text_parts

DATA = Path(os.environ.get("MLTRIAGE_CATALOGUE", Path(__file__).resolve().parent / "data"))
SCHEMA = "mltriage.catalogue/v2"
MIN_FLOATING_LITERAL = 24  # literal characters a value-first format needs to be matched anywhere in a line
GITHUB = "https://github.com/{repo}/blob/{ref}/{path}#L{line}{end}"


@dataclass(frozen=True, slots=True)
class Release:
    name: str
    ref: str
    commit: str | None
    date: str | None


@dataclass(frozen=True, slots=True)
class Site:
    """Where one release range raises or logs the message."""

    first: int  # index of the first release of the range in the project's release list
    last: int
    path: str
    line: int
    end_line: int
    function: str | None
    kind: str | None = None  # exception type or log level at this site
    cause: str | None = None  # the NCCL result code returned after it, or the chained cause (``from e``)


@dataclass
class Entry:
    id: str
    project: str
    kind: str
    format: str
    lines: list[str | None]  # one matcher per output line (None: a line with no literal text)
    keys: list[str]  # the words it is indexed by: the rarest of each output line
    cause: str | None
    sites: list[Site]

    @cached_property
    def matchers(self) -> list[regex.Pattern | None]:
        return [_compile(p) if p else None for p in self.lines]

    @cached_property
    def anchors(self) -> list[str]:
        """Per output line, its longest run of literal non-space text: any output of that line holds it
        verbatim (only whitespace is flexible), so a line without it is rejected before any regex."""
        return [runs[0] if runs else "" for runs in self.literal_runs]

    @cached_property
    def literal_runs(self) -> list[tuple[str, ...]]:
        """Per output line, every run of literal non-space text, longest first: an output holds them all."""
        out = []
        for line in self.format.split("\n"):
            runs = {run for piece in text_parts(line) if isinstance(piece, str) for run in piece.split()}
            out.append(tuple(sorted(runs, key=lambda r: (-len(r), r))))
        return out

    def floating(self, line: int) -> bool:
        """Whether this output line begins with a value, so the text before the literal is unknown."""
        return line < len(self._floating) and self._floating[line]

    @cached_property
    def _floating(self) -> list[bool]:
        out = []
        for text in self.format.split("\n"):
            parts = text_parts(text)
            literal = sum(len(p) for p in parts if isinstance(p, str))
            out.append(bool(parts) and not isinstance(parts[0], str) and literal >= MIN_FLOATING_LITERAL)
        return out

    @cached_property
    def kinds(self) -> frozenset[str]:
        """Every kind (exception type or log level) a site of this message has."""
        return frozenset({self.kind, *(s.kind for s in self.sites if s.kind)})

    def release_indices(self) -> set[int]:
        return {i for s in self.sites for i in range(s.first, s.last + 1)}


class Catalogue:
    def __init__(self, data: Path = DATA) -> None:
        self.data = data
        self._shards: dict[tuple[str, int], _Shard] = {}

    @cached_property
    def _folders(self) -> list[Path]:
        try:
            return sorted(p.parent for p in self.data.glob("*/index.json.gz"))
        except OSError:
            return []

    @cached_property
    def available(self) -> bool:
        return bool(self._folders)

    @cached_property
    def _indexes(self) -> dict[str, dict]:
        """Per project, its shard count and key words (a damaged index costs that project only)."""
        out = {}
        for folder in self._folders:
            try:
                with gzip.open(folder / "index.json.gz", "rt", encoding="utf-8") as fh:
                    doc = json.load(fh)
                out[folder.name] = {"shards": int(doc["shards"]), "keys": frozenset(doc["keys"])}
            except (OSError, ValueError, EOFError, KeyError, TypeError):
                continue
        return out

    @cached_property
    def keys(self) -> frozenset[str]:
        return frozenset().union(*(i["keys"] for i in self._indexes.values()))

    @cached_property
    def projects(self) -> dict[str, dict]:
        out = {}
        for folder in self._folders:
            try:
                doc = json.loads((folder / "releases.json").read_text())
                doc["releases"] = [Release(*row) for row in doc["releases"]]
            except (OSError, ValueError, KeyError, TypeError):
                continue
            out[folder.name] = doc
        return out

    def releases(self, project: str) -> list[Release]:
        return self.projects.get(project, {}).get("releases", [])

    def _shard(self, project: str, n: int) -> _Shard:
        shard = self._shards.get((project, n))
        if shard is None:
            try:
                path = self.data / project / f"shard-{n:02d}.jsonl.gz"
                data = zlib.decompress(path.read_bytes(), 31)
            except (OSError, ValueError, zlib.error):
                data = b""  # a damaged shard costs its entries, never the diagnosis
            shard = self._shards[(project, n)] = _Shard(data)
        return shard

    def candidates(self, words: set[str]) -> list[Entry]:
        """Entries indexed under any of these words (a line's tokens), project by project."""
        out: dict[str, Entry] = {}  # a message whose lines share a line's words is one candidate
        for project, index in self._indexes.items():
            for word in sorted(words & index["keys"]):
                for entry in self._shard(project, shard_of(word, index["shards"])).entries(word):
                    out.setdefault(entry.id, entry)
        return list(out.values())

    def all_entries(self, project: str | None = None):
        """Every entry once (an entry of several lines is filed under each line's key)."""
        for name, index in self._indexes.items():
            if project is not None and name != project:
                continue
            for n in range(index["shards"]):
                shard = self._shard(name, n)
                for key in shard.keys():
                    for entry in shard.entries(key):
                        if entry.keys[0] == key:
                            yield entry

    def entry(self, entry_id: str) -> Entry | None:
        """One entry by id: the words index names its first key, so one shard is read."""
        project = entry_id.rpartition("-")[0]
        index, words = self._indexes.get(project), self.words(project)
        position = self._positions(project).get(entry_id)
        if index is None or position is None:
            return None
        key = words["keys"][position]
        shard = self._shard(project, shard_of(key, index["shards"]))
        return next((e for e in shard.entries(key) if e.id == entry_id), None)

    def _positions(self, project: str) -> dict[str, int]:
        cache = self.__dict__.setdefault("_position_maps", {})
        if project not in cache:
            cache[project] = {entry_id: n for n, entry_id in enumerate(self.words(project).get("ids", []))}
        return cache[project]

    def words(self, project: str) -> dict:
        """A project's prebuilt word index: ``ids`` (its entries) and ``words`` (word -> positions in ids)."""
        cache = self.__dict__.setdefault("_words", {})
        if project not in cache:
            try:
                with gzip.open(self.data / project / "words.json.gz", "rt", encoding="utf-8") as fh:
                    cache[project] = json.load(fh)
            except (OSError, ValueError, EOFError):
                cache[project] = {"ids": [], "keys": [], "words": {}}
        return cache[project]

    def link(self, entry: Entry, site: Site, release: int | None = None) -> str | None:
        """The line on GitHub at a pinned commit (the newest release of the range unless one is named)."""
        project = self.projects.get(entry.project)
        if not project:
            return None
        rel = project["releases"][site.last if release is None else release]
        end = f"-L{site.end_line}" if site.end_line != site.line else ""
        return GITHUB.format(repo=project["repo"], ref=rel.commit or rel.ref, path=site.path, line=site.line, end=end)


class _Shard:
    """One shard's rows, ``key<TAB>entry`` sorted (the generator sorts them, so a key's rows are
    adjacent): a lookup finds its key's rows in the bytes as they are and parses only those, once.
    (Splitting every row of every shard a line's words touched cost more than the rest of the lookup.)"""

    def __init__(self, data: bytes) -> None:
        self._data = b"\n" + data
        self._parsed: dict[str, list[Entry]] = {}

    def entries(self, key: str) -> list[Entry]:
        found = self._parsed.get(key)
        if found is None:
            found = self._parsed[key] = [e for doc in self._rows(key) if (e := _parse_entry(doc)) is not None]
        return found

    def _rows(self, key: str) -> list[bytes]:
        try:
            head = b"\n" + key.encode("utf-8") + b"\t"
        except UnicodeEncodeError:  # (a lone surrogate from a damaged line: no key is spelled so)
            return []
        data, rows = self._data, []
        at = data.find(head)
        while at != -1:
            start = at + len(head)
            end = data.find(b"\n", start)
            end = len(data) if end == -1 else end
            rows.append(data[start:end])
            at = end if data.startswith(head, end) else -1
        return rows

    def keys(self) -> list[str]:
        """Every key of the shard, in file order (each once)."""
        out = {}
        for row in self._data.split(b"\n"):
            key, tab, _ = row.partition(b"\t")
            if tab:
                try:
                    out[key.decode("utf-8")] = None
                except UnicodeDecodeError:
                    continue
        return list(out)


def _parse_entry(doc: bytes) -> Entry | None:
    try:
        return _entry(json.loads(doc))
    except (ValueError, KeyError, TypeError):  # a damaged row costs that entry
        return None


def shard_of(key: str, shards: int) -> int:
    """The shard a key word's entries are filed in (the generator writes, the reader reads, by this)."""
    return zlib.crc32(key.encode()) % shards


def _compile(pattern: str) -> regex.Pattern | None:
    try:
        return regex.compile(pattern)
    except (regex.error, RecursionError, OverflowError):  # a damaged entry costs that entry
        return None


def _entry(doc: dict) -> Entry:
    return Entry(doc["id"], doc["project"], doc["kind"], doc["format"], doc["lines"], doc["keys"], doc.get("cause"),
                 [Site(*s) for s in doc["sites"]])


_DEFAULT: Catalogue | None = None


def default_catalogue() -> Catalogue:
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Catalogue()
    return _DEFAULT
