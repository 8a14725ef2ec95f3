"""Merge every release's message sites into catalogue entries and write the catalogue's data files.

Two steps. First, one *format* per (kind, exact format text): its sites per release, the types of
its placeholders as the newest release has them, and the result code or chained cause the source
shows. Then one *entry* per message text, placeholders normalised (``{rank}`` and ``{self.rank}``
are one message): its formats' sites compressed into release ranges that share a site (path, line
span, function, kind, cause), and one matcher per output line that accepts every form's output.
Formats with too little literal text to mean anything, or with no word to index them by, are left
out: they would fire on healthy lines.

Each project's data is a folder of its own (``data/<project>/``) and a function of that project's
sources only, so a project is regenerated without touching the others, byte for byte the same when
its sources are.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import shutil
import time
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from mltriage.catalogue.formats import MIN_LITERAL_CHARS, Format, Placeholder, key_words, line_regex, text_parts
from mltriage.catalogue.generate.sites import SourceSite
from mltriage.catalogue.generate.sources import C_SUFFIXES, Release
from mltriage.catalogue.store import SCHEMA, shard_of

ENTRIES_PER_SHARD = 256  # a project's shards: a lookup decompresses one of about this many entries
WORDS = "words.json.gz"  # every word of every entry's literal text -> its entries: the search fallback's index


def normal_text(text: str) -> str:
    """A format's text with every placeholder written ``{}``: what stays the same when upstream
    renames a variable."""
    return "".join(p.replace("{", "{{").replace("}", "}}") if isinstance(p, str) else "{}" for p in text_parts(text))


def entry_id(project: str, text: str) -> str:
    """Stable across regenerations: the same project and message text always get the same id."""
    digest = hashlib.sha1(normal_text(text).encode("utf-8", "replace")).hexdigest()
    return f"{project}-{digest[:10]}"


@dataclass(slots=True)
class _Builder:
    """One exact format of one kind, with its sites per release (by release index)."""

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


def usable(b: _Builder) -> bool:
    return b.format.literal_chars >= MIN_LITERAL_CHARS and any(line_regex(parts) for parts in b.format.lines())


# -- entries: one per message text ------------------------------------------------------------------

def _newest(b: _Builder) -> tuple:
    """Which form of a message gives the entry its names, kind and cause: the one in the newest
    release (ties by kind, cause, then text, so a rebuild from data, which keeps only the entry's
    names, picks the same kind and cause)."""
    return (max(b.sites), _neg(b.kind), _neg(b.cause or ""), _neg(b.format.text))


def _neg(text: str) -> tuple[int, ...]:
    return tuple(-ord(c) for c in text)  # (max() with this picks the smallest text)


def _unified(forms: list[_Builder], newest: _Builder) -> Format:
    """The newest form's parts, each placeholder typed as every form agrees (else any text): one
    matcher accepts every release's output."""
    types: list[set[str]] = []
    for b in forms:
        holders = [p for p in b.format.parts if isinstance(p, Placeholder)]
        if not types:
            types = [set() for _ in holders]
        for n, p in enumerate(holders[:len(types)]):
            types[n].add(p.type)
    parts = []
    n = 0
    names: set[str] = set()
    for part in newest.format.parts:
        if isinstance(part, Placeholder):
            kinds = types[n] if n < len(types) else {part.type}
            name = part.name
            while name in names:  # ("x_2" of a second x may be a name of its own too): regex groups are unique
                name += "_"
            names.add(name)
            parts.append(Placeholder(name, part.type if len(kinds) == 1 else "str"))
            n += 1
        else:
            parts.append(part)
    return Format(tuple(parts))


def _site_ranges(sites: dict[int, set[tuple]]) -> list[list]:
    """[first, last, *site] for each run of consecutive releases sharing a site."""
    runs: list[list] = []
    open_runs: dict[tuple, list] = {}
    for idx in sorted(sites):
        still_open = {}
        for site in sorted(sites[idx], key=_site_order):
            run = open_runs.get(site)
            if run is not None and run[1] == idx - 1:
                run[1] = idx
            else:
                run = [idx, idx, *site]
                runs.append(run)
            still_open[site] = run
        open_runs = still_open
    return sorted(runs, key=lambda r: (r[0], *_site_order(r[2:])))


def _site_order(site) -> tuple:
    path, line, end_line, function, kind, cause = site
    return (path, line, end_line, function or "", kind, cause or "")


@dataclass(slots=True)
class _Message:
    project: str
    forms: list[_Builder]

    @property
    def newest(self) -> _Builder:
        return max(self.forms, key=_newest)

    def format(self) -> Format:
        return _unified(self.forms, self.newest)

    def doc(self, keys: list[str]) -> dict:
        fmt = self.format()
        sites: dict[int, set[tuple]] = defaultdict(set)
        for b in self.forms:
            for idx, at in b.sites.items():
                sites[idx].update((*s, b.kind, b.cause) for s in at)
        newest = self.newest
        return {"id": entry_id(self.project, fmt.text), "project": self.project, "kind": newest.kind,
                "format": fmt.text, "lines": [line_regex(parts) for parts in fmt.lines()], "keys": keys,
                "cause": newest.cause, "sites": _site_ranges(sites)}


def messages(builders: list[_Builder]) -> list[_Message]:
    """The usable formats grouped by message text, in text order."""
    groups: dict[str, list[_Builder]] = defaultdict(list)
    for b in builders:
        if usable(b):
            groups[normal_text(b.format.text)].append(b)
    return [_Message(forms[0].project, forms) for _, forms in sorted(groups.items())]


# -- one project's data files ---------------------------------------------------------------------

def _write_gzip(path: Path, text: str) -> None:
    """Byte-for-byte reproducible (no time stamp in the header): a regeneration changes only what changed."""
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as fh:
        fh.write(text.encode("utf-8"))


def project_files(project: ProjectInput, builders: list[_Builder], coverage: dict) -> dict[str, bytes | str]:
    """A project's data: ``index.json.gz`` (its key words), ``shard-NN.jsonl.gz`` (its entries, filed
    under the rarest whole word of each output line, so any one line of a multi-line message finds
    it), ``words.json.gz`` (every literal word -> entries, and each entry's first key: search by words and
by id read no shard they do not need) and ``releases.json``."""
    found = messages(builders)
    lines_of = {id(m): [set(key_words(parts)) for parts in m.format().lines() if line_regex(parts)] for m in found}
    frequency = Counter(w for lines in lines_of.values() for w in set().union(*lines, set()))
    docs = []
    for m in found:
        entry_keys = sorted({min(words, key=lambda w: (frequency[w], -len(w), w)) for words in lines_of[id(m)] if words})
        if entry_keys:
            docs.append(m.doc(entry_keys))
    shards = max(1, len(docs) // ENTRIES_PER_SHARD)
    rows: list[list[str]] = [[] for _ in range(shards)]
    keys: set[str] = set()
    words: dict[str, list[int]] = defaultdict(list)
    for n, doc in enumerate(sorted(docs, key=lambda d: d["id"])):
        keys.update(doc["keys"])
        text = json.dumps(doc, separators=(",", ":"))
        for key in doc["keys"]:  # "key<TAB>entry": a reader groups a shard by key without parsing entries it does not need
            rows[shard_of(key, shards)].append(key + "\t" + text)
        for word in sorted(set(_WORD.findall(_literal(doc["format"])))):
            words[word].append(n)
    ordered = sorted(docs, key=lambda d: d["id"])
    ids, first_keys = [d["id"] for d in ordered], [d["keys"][0] for d in ordered]
    files: dict[str, bytes | str] = {}
    for n, shard_rows in enumerate(rows):
        files[f"shard-{n:02d}.jsonl.gz"] = "\n".join(sorted(shard_rows)) + ("\n" if shard_rows else "")
    files["index.json.gz"] = json.dumps({"schema": SCHEMA, "shards": shards, "keys": sorted(keys)}, separators=(",", ":"))
    files[WORDS] = json.dumps({"schema": SCHEMA, "ids": ids, "keys": first_keys, "words": dict(sorted(words.items()))},
                              separators=(",", ":"))
    kept = {id(b) for m in found if lines_of[id(m)] and any(lines_of[id(m)]) for b in m.forms}
    coverage = {"formats_kept": len(kept), **coverage, "entries": len(docs)}  # (a rebuild from data keeps the figure)
    sites = coverage.get("releases", {})
    coverage["releases"] = {r.name: sites[r.name] for r in project.releases if r.name in sites}  # in release order
    files["releases.json"] = json.dumps({
        "schema": SCHEMA, "name": project.name, "repo": project.repo, "source": project.source,
        **({"sampled": True} if project.sampled else {}),
        "releases": [[r.name, r.ref, r.commit, r.date] for r in project.releases], "coverage": coverage}, indent=1) + "\n"
    return files


_WORD = re.compile(r"\w{4,}")


def _literal(text: str) -> str:
    return " ".join(p for p in text_parts(text) if isinstance(p, str))


def write_project(project: ProjectInput, builders: list[_Builder], coverage: dict, out: Path) -> dict:
    """Replace ``out/<project>/`` with the project's data (written beside it, then swapped in)."""
    files = project_files(project, builders, coverage)
    target = out / project.name
    partial = out / f".{project.name}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    for name, content in files.items():
        if name.endswith(".gz"):
            _write_gzip(partial / name, content)
        else:
            (partial / name).write_text(content)
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)
    return json.loads(files["releases.json"])["coverage"]


def write(projects: list[ProjectInput], out: Path, log: Callable[[str], None] = print) -> dict:
    """Build each project from its sources and write its folder; other projects' folders stay as they are."""
    out.mkdir(parents=True, exist_ok=True)
    coverage = {}
    for project in projects:
        found, per_release = collect(project, log)
        coverage[project.name] = write_project(project, found, {"releases": per_release, "formats": len(found)}, out)
    return coverage


# -- a project rebuilt from data already written ---------------------------------------------------

_CAPTURES = {r"[-+]?\d+": "int", r"(?:0[xX])?[0-9a-fA-F]+": "hex", r".": "char",
             r"(?:0[xX][0-9a-fA-F]+|\(nil\)|[0-9a-fA-F]+)": "ptr"}
_GROUP = re.compile(r"\(\?P<(\w+)>((?:[^()\\]|\\.|\((?:[^()\\]|\\.|\([^()]*\))*\))*)\)")


def _format_of(text: str, lines: list[str | None]) -> Format:
    """A format's parts read back from its text and matchers (a placeholder's type is its capture's)."""
    types = {}
    for pattern in lines:
        for name, body in _GROUP.findall(pattern or ""):
            types[name] = _CAPTURES.get(body, "float" if "nan|inf" in body else "str")
    return Format(tuple(p if isinstance(p, str) else Placeholder(p.name, types.get(p.name, "str")) for p in text_parts(text)))


def _project_doc(name: str, data: Path) -> tuple[Path, dict, dict]:
    """(folder, the project's releases document, its coverage) in a v2 data folder or v1's shared one."""
    folder = data / name if (data / name / "releases.json").is_file() else data
    doc = json.loads((folder / "releases.json").read_text())
    if "projects" in doc:  # v1
        return folder, doc["projects"][name], doc.get("coverage", {}).get(name, {})
    return folder, doc, doc.get("coverage", {})


def releases_in_data(name: str, data: Path) -> list[Release]:
    return [Release(*row) for row in _project_doc(name, data)[1]["releases"]]


def builders_from_data(name: str, data: Path, releases: list[Release]) -> tuple[list[_Builder], dict]:
    """A project's formats as a data folder already holds them (entries of this schema, or of v1's
    shared shards: ``data/shard-NN.jsonl.gz``), their sites moved onto ``releases`` by release name:
    how a project whose sources are not at hand is re-entered after a change of the entry layout."""
    old_dir, old, coverage = _project_doc(name, data)
    v1 = old_dir == data
    old_names = [r[0] for r in old["releases"]]
    new_index = {r.name: i for i, r in enumerate(releases)}
    builders: dict[tuple[str, str], _Builder] = {}
    seen: set[str] = set()
    for path in sorted(old_dir.glob("shard-*.jsonl.gz")):
        for row in zlib.decompress(path.read_bytes(), 31).decode("utf-8").splitlines():
            entry = json.loads(row.partition("\t")[2])
            if entry["project"] != name or entry["id"] in seen:
                continue
            seen.add(entry["id"])
            fmt = _format_of(entry["format"], entry["lines"])
            for site in entry["sites"]:
                first, last, path_, line, end_line, function, *rest = site
                kind, cause = rest if rest else (entry["kind"], entry["cause"])
                b = builders.setdefault((kind, cause, fmt.text), _Builder(name, kind, fmt, cause=cause))
                for i in range(first, last + 1):
                    if old_names[i] in new_index:
                        b.sites[new_index[old_names[i]]].add((path_, line, end_line, function))
    kept = [b for b in builders.values() if b.sites]
    figures = {k: coverage[k] for k in ("formats_kept",) if k in coverage}
    if v1:  # one entry per exact format, so its entries are the kept formats
        figures["formats_kept"] = coverage.get("entries", len(kept))
    return kept, {"releases": coverage.get("releases", {}), "formats": coverage.get("formats", len(kept)), **figures}
