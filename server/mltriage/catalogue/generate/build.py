"""Merge every release's message sites into catalogue entries and write the catalogue's data files.

One entry per (project, kind, message format). Its sites are kept per release and compressed into
release ranges that share a site (path, line span, function); the ranges together are the releases
in which this exact format exists. Formats with too little literal text to mean anything, or with
no word to index them by, are left out: they would fire on healthy lines.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from mltriage.catalogue.formats import MIN_LITERAL_CHARS, Format, key_words, line_regex
from mltriage.catalogue.generate.sites import SourceSite
from mltriage.catalogue.generate.sources import C_SUFFIXES, Release
from mltriage.catalogue.store import shard_of

SHARDS = 256
SCHEMA = "mltriage.catalogue/v1"


def entry_id(project: str, kind: str, text: str) -> str:
    """Stable across regenerations: the same project, kind and format always get the same id."""
    digest = hashlib.sha1(kind.encode() + b"\0" + text.encode("utf-8", "replace")).hexdigest()
    return f"{project}-{digest[:10]}"


@dataclass(slots=True)
class _Builder:
    project: str
    kind: str
    format: Format
    sites: dict[int, set[tuple[str, int, int, str | None]]] = field(default_factory=lambda: defaultdict(set))
    cause: str | None = None


@dataclass(slots=True)
class ProjectInput:
    """One project's releases (in order) and a way to get each release's sites."""

    name: str
    repo: str
    source: str  # where its source came from, said in the README and the data
    releases: list[Release]
    sites_of: Callable[[Release], Iterable[SourceSite]]
    sampled: bool = False  # the releases are a few of upstream's (whatever source could be had), not a series


def sites_of_files(files_of: Callable[[Release], Iterator[tuple[str, str]]],
                   c_project: str | None = None) -> Callable[[Release], Iterator[SourceSite]]:
    """Sites of a release's files: Python ones, and C/C++ ones read as ``c_project``'s (one of
    ``c_sites.PROJECTS``) where one is named; a file unchanged since an earlier release is not parsed again."""
    from mltriage.catalogue.generate.python_sites import extract_python

    cache: dict[bytes, list[SourceSite]] = {}

    def extract(path: str, text: str) -> list[SourceSite]:
        if path.endswith(".py"):
            return extract_python(path, text)
        if c_project is not None and path.endswith(C_SUFFIXES):
            from mltriage.catalogue.generate.c_sites import extract_c  # needs the 'catalogue' extra (tree-sitter)

            return extract_c(path, text, c_project)
        return []

    def sites_of(release: Release) -> Iterator[SourceSite]:
        for path, text in files_of(release):
            digest = hashlib.sha1(path.encode() + b"\0" + text.encode("utf-8", "replace")).digest()
            sites = cache.get(digest)
            if sites is None:
                sites = cache[digest] = extract(path, text)
            yield from sites

    return sites_of


def collect(project: ProjectInput, log: Callable[[str], None] = print) -> tuple[list[_Builder], dict[str, int]]:
    builders: dict[tuple[str, str], _Builder] = {}
    per_release: dict[str, int] = {}
    for idx, release in enumerate(project.releases):
        t0 = time.perf_counter()
        count = 0
        for site in project.sites_of(release):
            count += 1
            key = (site.kind, site.format.text)
            builder = builders.get(key)
            if builder is None:
                builder = builders[key] = _Builder(project.name, site.kind, site.format)
            builder.format = site.format  # the newest release's placeholder types win
            builder.sites[idx].add((site.path, site.line, site.end_line, site.function))
            if site.cause and not builder.cause:
                builder.cause = site.cause
        per_release[release.name] = count
        log(f"{project.name} {release.name}: {count} sites ({time.perf_counter() - t0:.1f} s)")
    return list(builders.values()), per_release


def _site_ranges(sites: dict[int, set[tuple]]) -> list[list]:
    """[first, last, path, line, end_line, function] for each run of consecutive releases sharing a site."""
    runs: list[list] = []
    open_runs: dict[tuple, list] = {}
    for idx in sorted(sites):
        still_open = {}
        for site in sorted(sites[idx], key=lambda s: (s[0], s[1])):
            run = open_runs.get(site)
            if run is not None and run[1] == idx - 1:
                run[1] = idx
            else:
                run = [idx, idx, *site]
                runs.append(run)
            still_open[site] = run
        open_runs = still_open
    return sorted(runs, key=lambda r: (r[0], r[2], r[3]))


def _entry_json(b: _Builder, keys: list[str]) -> dict | None:
    lines = [line_regex(parts) for parts in b.format.lines()]
    if not any(lines):
        return None
    return {"id": entry_id(b.project, b.kind, b.format.text), "project": b.project, "kind": b.kind,
            "format": b.format.text, "lines": lines, "keys": keys, "cause": b.cause, "sites": _site_ranges(b.sites)}


def _write_gzip(path: Path, text: str) -> None:
    """Byte-for-byte reproducible (no time stamp in the header): a regeneration changes only what changed."""
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as fh:
        fh.write(text.encode("utf-8"))


def usable(b: _Builder) -> bool:
    return b.format.literal_chars >= MIN_LITERAL_CHARS


def write(projects: list[ProjectInput], out: Path, log: Callable[[str], None] = print) -> dict:
    """Build every project and write ``releases.json``, ``index.json.gz`` and the entry shards."""
    builders: list[_Builder] = []
    coverage: dict[str, dict] = {}
    for project in projects:
        found, per_release = collect(project, log)
        kept = [b for b in found if usable(b)]
        builders += kept
        coverage[project.name] = {"releases": per_release, "formats": len(found), "kept": len(kept)}
    # index each entry by the rarest whole word of each output line it can be recognised by, so that
    # a line is tried against few entries, and any one line of a multi-line message finds its entry
    lines_of = {id(b): [set(key_words(parts)) for parts in b.format.lines() if line_regex(parts)] for b in builders}
    frequency = Counter(w for lines in lines_of.values() for w in set().union(*lines, set()))
    shards: list[list[str]] = [[] for _ in range(SHARDS)]
    keys: set[str] = set()
    per_project = Counter()
    for b in builders:
        rarest = lambda words: min(words, key=lambda w: (frequency[w], -len(w), w))  # noqa: E731
        entry_keys = sorted({rarest(words) for words in lines_of[id(b)] if words})
        if not entry_keys:
            continue
        doc = _entry_json(b, entry_keys)
        if doc is None:
            continue
        keys.update(entry_keys)
        per_project[b.project] += 1
        # "key<TAB>entry" under each key: a reader groups a shard by key without parsing entries it does not need
        text = json.dumps(doc, separators=(",", ":"))
        for key in entry_keys:
            shards[shard_of(key, SHARDS)].append(key + "\t" + text)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("shard-*.jsonl.gz"):
        old.unlink()
    for n, rows in enumerate(shards):
        _write_gzip(out / f"shard-{n:02d}.jsonl.gz", "\n".join(sorted(rows)) + ("\n" if rows else ""))
    _write_gzip(out / "index.json.gz", json.dumps({"schema": SCHEMA, "shards": SHARDS, "keys": sorted(keys)},
                                                  separators=(",", ":")))
    releases = {p.name: {"repo": p.repo, "source": p.source, **({"sampled": True} if p.sampled else {}),
                         "releases": [[r.name, r.ref, r.commit, r.date] for r in p.releases]} for p in projects}
    for name, cov in coverage.items():
        cov["entries"] = per_project[name]
    (out / "releases.json").write_text(json.dumps({"schema": SCHEMA, "projects": releases, "coverage": coverage},
                                                  indent=1) + "\n")
    return coverage

