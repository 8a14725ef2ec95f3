"""The catalogue's data, read lazily: an index of key words, and entry shards loaded on first use.

Nothing is read until a line asks; a line's words pick the few shards (of 256) that can hold an
entry for it, so a diagnosis that meets three unexplained error lines reads three small files.
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
        return [regex.compile(p) if p else None for p in self.lines]

    @cached_property
    def anchors(self) -> list[str]:
        """Per output line, its longest run of literal non-space text: any output of that line holds it
        verbatim (only whitespace is flexible), so a line without it is rejected before any regex."""
        out = []
        for line in self.format.split("\n"):
            runs = [run for piece in text_parts(line) if isinstance(piece, str) for run in piece.split()]
            out.append(max(runs, key=len) if runs else "")
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

    def release_indices(self) -> set[int]:
        return {i for s in self.sites for i in range(s.first, s.last + 1)}


class Catalogue:
    def __init__(self, data: Path = DATA) -> None:
        self.data = data
        self._shards: dict[int, dict[str, list[Entry]]] = {}

    @cached_property
    def available(self) -> bool:
        return (self.data / "index.json.gz").is_file()

    @cached_property
    def _index(self) -> dict:
        try:
            with gzip.open(self.data / "index.json.gz", "rt", encoding="utf-8") as fh:
                return json.load(fh)
        except (OSError, ValueError, EOFError):
            return {"shards": 1, "keys": []}

    @cached_property
    def keys(self) -> frozenset[str]:
        return frozenset(self._index["keys"])

    @cached_property
    def projects(self) -> dict[str, dict]:
        try:
            doc = json.loads((self.data / "releases.json").read_text())
        except (OSError, ValueError):
            return {}
        out = doc.get("projects", {})
        for name, project in out.items():
            project["releases"] = [Release(*row) for row in project["releases"]]
            project["coverage"] = doc.get("coverage", {}).get(name, {})
        return out

    def releases(self, project: str) -> list[Release]:
        return self.projects.get(project, {}).get("releases", [])

    def _shard(self, n: int) -> dict[str, list]:
        """key -> its entries: raw JSON text until a line asks for that key, then ``Entry``s."""
        shard = self._shards.get(n)
        if shard is None:
            shard = self._shards[n] = {}
            try:
                text = zlib.decompress((self.data / f"shard-{n:02d}.jsonl.gz").read_bytes(), 31).decode("utf-8")
            except (OSError, ValueError, zlib.error, UnicodeDecodeError):
                return shard  # a damaged shard costs its entries, never the diagnosis
            for row in text.splitlines():
                key, _, doc = row.partition("\t")
                shard.setdefault(key, []).append(doc)
        return shard

    def _entries(self, shard: dict[str, list], key: str) -> list[Entry]:
        docs = shard.get(key, [])
        if docs and isinstance(docs[0], str):
            parsed = []
            for doc in docs:
                try:
                    parsed.append(_entry(json.loads(doc)))
                except (ValueError, KeyError, TypeError):
                    continue
            shard[key] = docs = parsed
        return docs

    def candidates(self, words: set[str]) -> list[Entry]:
        """Entries indexed under any of these words (a line's tokens)."""
        out: dict[str, Entry] = {}  # a message whose lines share a line's words is one candidate
        n = self._index["shards"]
        for word in sorted(words & self.keys):
            for entry in self._entries(self._shard(shard_of(word, n)), word):
                out.setdefault(entry.id, entry)
        return list(out.values())

    def all_entries(self):
        """Every entry once (an entry of several lines is filed under each line's key)."""
        for n in range(self._index["shards"]):
            shard = self._shard(n)
            for key in list(shard):
                for entry in self._entries(shard, key):
                    if entry.keys[0] == key:
                        yield entry

    def entry(self, entry_id: str) -> Entry | None:
        return next((e for e in self.all_entries() if e.id == entry_id), None)

    def link(self, entry: Entry, site: Site, release: int | None = None) -> str | None:
        """The line on GitHub at a pinned commit (the newest release of the range unless one is named)."""
        project = self.projects.get(entry.project)
        if not project:
            return None
        rel = project["releases"][site.last if release is None else release]
        end = f"-L{site.end_line}" if site.end_line != site.line else ""
        return GITHUB.format(repo=project["repo"], ref=rel.commit or rel.ref, path=site.path, line=site.line, end=end)


def shard_of(key: str, shards: int) -> int:
    """The shard a key word's entries are filed in (the generator writes, the reader reads, by this)."""
    return zlib.crc32(key.encode()) % shards


def _entry(doc: dict) -> Entry:
    return Entry(doc["id"], doc["project"], doc["kind"], doc["format"], doc["lines"], doc["keys"], doc.get("cause"),
                 [Site(*s) for s in doc["sites"]])


_DEFAULT: Catalogue | None = None


def default_catalogue() -> Catalogue:
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Catalogue()
    return _DEFAULT
