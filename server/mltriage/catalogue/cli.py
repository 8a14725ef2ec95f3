"""``mltriage catalogue search | show | list``: the error catalogue for people."""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from functools import lru_cache
from pathlib import Path

from mltriage.catalogue.formats import TOKEN, fill_text
from mltriage.catalogue.match import (
    NICE_NAMES,
    CatalogueMatch,
    describe_releases,
    frame_hint,
    hints_in,
    match_line,
    raised_from_hint,
    stated_releases,
)
from mltriage.catalogue.prose import prose_for
from mltriage.catalogue.store import Catalogue, Entry, default_catalogue
from mltriage.masking import mask_secrets
from mltriage.render import terminal_text

MAX_WORD_RESULTS = 5
MAX_SHOWN = 5  # entries printed in full; --json lists up to MAX_JSON_RESULTS
MAX_JSON_RESULTS = 20
MAX_LINES = 50  # lines of a pasted text looked up
README = Path(__file__).resolve().parent / "README.md"


def add_arguments(parser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True, parser_class=type(parser))
    search = sub.add_parser("search", help="which catalogued message a pasted error is, where and in which releases")
    search.add_argument("text", nargs="+", help="the message (or - to read it from stdin)")
    search.add_argument("--json", action="store_true")
    show = sub.add_parser("show", help="one entry whole: its format, matchers and every release's site")
    show.add_argument("id")
    show.add_argument("--json", action="store_true")
    ls = sub.add_parser("list", help="the entries of one project (in one release)")
    ls.add_argument("--project", required=True)
    ls.add_argument("--release", help="only entries present in this release")
    ls.add_argument("--json", action="store_true")
    cov = sub.add_parser("coverage", help="the coverage table (every project's releases, figures, what is missing), from the data")
    cov.add_argument("--readme", nargs="?", const=str(README), metavar="PATH",
                     help="rewrite the table in this README (default: the catalogue's own) instead of printing it")


def run(args, out=sys.stdout) -> int:
    catalogue = default_catalogue()
    if not catalogue.available:
        print("mltriage: the error catalogue is not installed (no catalogue data found)", file=sys.stderr)
        return 2
    if args.action == "search":
        return _search(catalogue, args, out)
    if args.action == "show":
        entry = catalogue.entry(args.id)
        if entry is None:
            print(f"mltriage: no catalogue entry {args.id!r} (try `mltriage catalogue search TEXT`)", file=sys.stderr)
            return 2
        if args.json:
            print(json.dumps(_entry_json(catalogue, entry), indent=2), file=out)
        else:
            print(_entry_text(catalogue, entry, None), file=out)
        return 0
    if args.action == "coverage":
        return _coverage(catalogue, args, out)
    return _list(catalogue, args, out)


def _coverage(catalogue: Catalogue, args, out) -> int:
    from mltriage.catalogue import coverage

    if args.readme is None:
        print(coverage.table(catalogue), file=out)
        return 0
    try:
        changed = coverage.rewrite_readme(Path(args.readme), catalogue)
    except (OSError, ValueError) as e:
        print(f"mltriage: {e}", file=sys.stderr)
        return 2
    print(f"{args.readme}: {'coverage table rewritten' if changed else 'coverage table already up to date'}", file=out)
    return 0


def _search(catalogue: Catalogue, args, out) -> int:
    text = sys.stdin.read() if args.text == ["-"] else " ".join(args.text)
    results = [(m.entry, m) for m in search(text, catalogue)]
    if not results:  # not a whole message: the entries sharing the most words with it
        results = [(e, None) for e in _by_words(catalogue, text)]
    if args.json:
        print(json.dumps([{**_entry_json(catalogue, e), "matched": m is not None, "captured": m.facts if m else {},
                           **({"narrowed_to": describe_releases(catalogue, e.project, m.releases),
                               "site": _site_json(catalogue, e, m.site())} if m else {})}
                          for e, m in results[:MAX_JSON_RESULTS]], indent=2), file=out)
        return 0 if results else 1
    if not results:
        print("No catalogue entry matches this text.", file=out)
        return 1
    exact = any(m is not None for _, m in results)
    if not exact:
        print("No entry matches the whole text; the closest by shared words:\n", file=out)
    for n, (entry, match) in enumerate(results[:MAX_SHOWN]):
        if n:
            print("\n" + "-" * 72 + "\n", file=out)
        print(_entry_text(catalogue, entry, match), file=out)
    if len(results) > MAX_SHOWN:
        print(f"\n({len(results) - MAX_SHOWN} more entries match less well: `--json` lists them)", file=out)
    return 0


def search(text: str, catalogue: Catalogue) -> list[CatalogueMatch]:
    """Every entry a pasted text's lines are, best first: ranked by what the text says (a file:line
    in a line's prefix, the traceback frame above an exception line, the exception type, a release
    it names), then by the text matched. An entry matched by several lines counts its best."""
    from mltriage.engine.prefixes import parse_prefixes

    lines = [ln for ln in text.splitlines() if ln.strip()][:MAX_LINES]
    stated = stated_releases(lines, catalogue)
    best: dict[str, CatalogueMatch] = {}
    as_pasted: dict[str, CatalogueMatch] = {}
    for n, line in enumerate(lines):
        hints = hints_in(line)
        hints += [h for h in (raised_from_hint(lines, n), frame_hint(lines, n)) if h is not None]
        message = parse_prefixes(line).message
        _keep_best(best, match_line(message, catalogue, hints, stated=stated))
        # the line as pasted too: what reads as a log prefix may be the message's own start (NCCL v2.30.7-1
        # src/init.cc: INFO "[Rank %d] %s comm %p ... - Init START"). Those matches come after every match of
        # the message without it: a "[Rank 3] " is more often a prefix (c10d's logPrefix() of 2.6.0)
        pasted = line.strip()
        if message != pasted and _ONE_TAG.fullmatch(pasted[:len(pasted) - len(message)]):
            _keep_best(as_pasted, match_line(pasted, catalogue, hints, stated=stated))
    return _ranked(best.values()) + _ranked(m for i, m in as_pasted.items() if i not in best)


_ONE_TAG = re.compile(r"\[[^\[\]]{1,40}\]\s*")  # a prefix that may be the message's own start: one bracketed tag


def _ranked(matches) -> list[CatalogueMatch]:
    return sorted(matches, key=lambda m: (tuple(-int(r) for r in m.rank), m.entry.id))


def _keep_best(best: dict[str, CatalogueMatch], matches: list[CatalogueMatch]) -> None:
    """An entry matched by several lines counts its best."""
    for m in matches:
        if m.entry.id not in best or m.rank > best[m.entry.id].rank:
            best[m.entry.id] = m


def _by_words(catalogue: Catalogue, text: str) -> list[Entry]:
    """The entries whose literal text shares the most words with the text (the prebuilt word index:
    no entry is read but those shown)."""
    words = set(TOKEN.findall(text))
    if not words:
        return []
    least = max(2, len(words) // 2)
    scored = []
    for project in catalogue.projects:
        index = catalogue.words(project)
        shared: Counter[int] = Counter()
        for word in words:
            shared.update(index["words"].get(word, ()))
        scored += [(count, index["ids"][n]) for n, count in shared.items() if count >= least]
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [e for e in (catalogue.entry(i) for _, i in scored[:MAX_WORD_RESULTS]) if e is not None]


def _curated_for(entry: Entry) -> list[str]:
    return list(_curated_for_format(entry.format))


@lru_cache(maxsize=256)
def _curated_for_format(fmt: str) -> tuple[str, ...]:
    """Curated encyclopedia entries that recognise this message (rendered with sample values)."""
    from mltriage.engine import diagnose_text

    sample = fill_text(fmt, lambda name: name)  # the message with each value named
    diagnosis = diagnose_text(sample.splitlines()[0] if sample else sample)
    return tuple(sorted({f.signature for f in diagnosis.findings if not f.generic and f.signature != "catalogue"}))


def _entry_json(catalogue: Catalogue, entry: Entry) -> dict:
    return {
        "id": entry.id, "project": entry.project, "kind": entry.kind, "format": entry.format,
        "matchers": entry.lines, "cause": entry.cause,
        "present_in": describe_releases(catalogue, entry.project, entry.release_indices()),
        "sites": [_site_json(catalogue, entry, s) for s in entry.sites],
        "curated": _curated_for(entry),
        "prose": (lambda p: p and {"meaning": p.meaning, "when": p.when, "solutions": p.solutions,
                                   "example_fix": p.example_fix})(prose_for(entry.id)),
    }


def _site_json(catalogue: Catalogue, entry: Entry, s) -> dict:
    releases = catalogue.releases(entry.project)
    return {"releases": [releases[s.first].name, releases[s.last].name] if releases else [s.first, s.last],
            "path": s.path, "line": s.line, "end_line": s.end_line, "function": s.function,
            "kind": s.kind or entry.kind, "cause": s.cause, "link": catalogue.link(entry, s)}


def _entry_text(catalogue: Catalogue, entry: Entry, match: CatalogueMatch | None) -> str:
    releases = catalogue.releases(entry.project)
    project = NICE_NAMES.get(entry.project, entry.project)
    lines = [f"{entry.id} · {project} · {entry.kind}", "", "Message format:", *("    " + ln for ln in entry.format.splitlines())]
    if match is not None and match.facts:
        lines += ["", "Captured from your text: " + ", ".join(f"{k} = {terminal_text(mask_secrets(v))}" for k, v in match.facts.items())]
    present = entry.release_indices()
    lines += ["", f"Present in: {describe_releases(catalogue, entry.project, present)}"]
    if match is not None and match.hint is not None:
        lines.append(f"Your text's {match.hint.file}:{match.hint.line} narrows it to: "
                     f"{describe_releases(catalogue, entry.project, match.releases)}")
    if entry.cause:
        lines.append(f"Cause in the source: {entry.cause}")
    prose = prose_for(entry.id)
    if prose:
        lines += ["", "What it means:", "    " + " ".join(prose.meaning.split())]
        if prose.when:
            lines += ["When it happens:", "    " + prose.when]
        if prose.solutions:
            lines += ["Solutions:", *(f"    {n}. {s}" for n, s in enumerate(prose.solutions, 1))]
        if prose.example_fix:
            lines += ["Example fix:", "    " + prose.example_fix]
    lines += ["", "Source sites, per release range:"]
    for s in sorted(entry.sites, key=lambda s: -s.last)[:12]:
        span = f"{s.line}-{s.end_line}" if s.end_line != s.line else str(s.line)
        names = f"{releases[s.first].name}–{releases[s.last].name}" if s.first != s.last else releases[s.first].name
        kind = f" ({s.kind})" if s.kind and s.kind != entry.kind else ""
        lines.append(f"  {names}: {s.path}:{span}" + (f" in {s.function}" if s.function else "") + kind)
        link = catalogue.link(entry, s)
        if link:
            lines.append(f"      {link}")
    if len(entry.sites) > 12:
        lines.append(f"  … {len(entry.sites) - 12} older site ranges (`mltriage catalogue show {entry.id} --json`)")
    curated = _curated_for(entry)
    lines += ["", "Curated entry: " + (", ".join(f"{c} (mltriage explain {c})" for c in curated) if curated
                                        else "none yet")]
    return "\n".join(lines)


def _list(catalogue: Catalogue, args, out) -> int:
    releases = catalogue.releases(args.project)
    if not releases:
        known = ", ".join(sorted(catalogue.projects))
        print(f"mltriage: no project {args.project!r} in the catalogue (known: {known})", file=sys.stderr)
        return 2
    index = None
    if args.release:
        index = next((i for i, r in enumerate(releases) if r.name == args.release or r.ref == args.release), None)
        if index is None:
            print(f"mltriage: {args.project} has no release {args.release!r} in the catalogue "
                  f"(covered: {releases[0].name} … {releases[-1].name})", file=sys.stderr)
            return 2
    entries = [e for e in catalogue.all_entries(args.project)
               if index is None or any(s.first <= index <= s.last for s in e.sites)]
    entries.sort(key=lambda e: (e.kind, e.format))
    if args.json:
        print(json.dumps([{"id": e.id, "kind": e.kind, "format": e.format} for e in entries], indent=1), file=out)
        return 0
    for e in entries:
        first = e.format.splitlines()[0] if e.format else ""
        print(f"{e.id}  {e.kind:<18} {first[:100]}", file=out)
    print(f"{len(entries)} entries", file=out)
    return 0
