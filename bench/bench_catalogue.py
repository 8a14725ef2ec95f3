"""The error catalogue's lookups: `catalogue search` per query and the lookups inside `diagnose`,
against a comparator with no index (every entry tried on every query), run beside them.

    python bench/bench_catalogue.py [--queries 300] [--every 97]

Queries are messages rendered from shipped entries (every N-th entry by id, each line's values
filled with samples of their type), so each has an answer to find. Prints, per figure, the median,
95th percentile and worst, and asserts:

- `catalogue search` of a new query in a warm process (the key-word index loaded, shards read as
  queries ask for them) under 50 ms at the 95th percentile, and at least 20x faster than the
  comparator (the entries already in memory, each one's literal text checked, matchers tried on
  the entries that hold it: a search without the index);
- search by words (a text that is no whole message) under 50 ms at the 95th percentile, from the
  prebuilt word index;
- a lookup inside `diagnose` of a line already met (repeats are the common case in a log) under
  100 microseconds at the median: the shards it needs are parsed, its matchers compiled.
The lookups are bounded by counts (candidates, matchers tried), not time, so the figures say how
long the same work takes here, not what is found.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from mltriage.catalogue import cli  # noqa: E402
from mltriage.catalogue.formats import TOKEN, fill_text, text_parts  # noqa: E402
from mltriage.catalogue.generate.build import _format_of  # noqa: E402
from mltriage.catalogue.match import match_line, message_starts  # noqa: E402
from mltriage.catalogue.store import Catalogue  # noqa: E402

SAMPLES = {"int": "42", "hex": "0x1f", "float": "3.5", "char": "x", "ptr": "0x7f00", "str": "some value"}


def _render(entry, n: int) -> str | None:
    """Line ``n`` of an entry with a value of each placeholder's type (``some value`` for text)."""
    line = entry.format.split("\n")[n]
    if not entry.lines[n] or (text_parts(line) and not isinstance(text_parts(line)[0], str)):
        return None  # a line that starts with a value is only matched where a message starts
    types = {p.name: p.type for p in _format_of(entry.format, entry.lines).parts if not isinstance(p, str)}
    return fill_text(line, lambda name: SAMPLES[types.get(name, "str")])


def _stats(values: list[float]) -> tuple[float, float, float]:
    values = sorted(values)
    return statistics.median(values), values[int(0.95 * (len(values) - 1))], values[-1]


def _row(name: str, values: list[float], unit: str = "ms") -> tuple[float, float, float]:
    scale = 1e3 if unit == "ms" else 1e6
    med, p95, worst = _stats(values)
    print(f"{name:<58} {med * scale:>9.2f} {p95 * scale:>9.2f} {worst * scale:>9.2f} {unit}")
    return med, p95, worst


def _no_index_search(text: str, entries) -> list:
    """The comparator: every entry in memory, its longest literal looked for, its matcher tried where found."""
    found = []
    for line in text.splitlines():
        starts = message_starts(line)
        for entry in entries:
            for n, anchor in enumerate(entry.anchors):  # (one substring test, as the index's path did before)
                if entry.lines[n] and anchor in line:
                    matcher = entry.matchers[n]
                    m = matcher.search(line) if entry.floating(n) else next(
                        (x for s in starts if (x := matcher.match(line, s))), None)
                    if m is not None:
                        found.append(entry)
                        break
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--every", type=int, default=97, help="take every N-th entry (by id) as a query")
    ap.add_argument("--comparator-queries", type=int, default=15)
    args = ap.parse_args()

    catalogue = Catalogue()
    if not catalogue.available:
        print("no catalogue data", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    catalogue.keys  # noqa: B018 - the key-word index of every project: what a warm process holds
    load = time.perf_counter() - t0

    # queries from a separate reading of the data, so the measured catalogue starts with no shard read
    source = Catalogue()
    entries = sorted(source.all_entries(), key=lambda e: e.id)
    queries = []
    for entry in entries[::args.every]:
        for n in range(len(entry.lines)):
            text = _render(entry, n)
            if text and len(queries) < args.queries:
                queries.append((entry.id, text))
    rng = random.Random(21)
    word_queries = []
    for entry in rng.sample(entries, 40):
        words = TOKEN.findall(" ".join(p for p in text_parts(entry.format) if isinstance(p, str)))
        if len(words) >= 4:
            word_queries.append(" ".join(rng.sample(words, len(words))[:6]))  # its words, out of order
    print(f"{len(entries):,} entries; index of {len(catalogue.keys):,} key words loaded in {load * 1e3:.0f} ms; "
          f"{len(queries)} queries, {len(word_queries)} word queries\n")
    print(f"{'':<58} {'median':>9} {'p95':>9} {'worst':>9}")

    first, found = [], 0
    for entry_id, text in queries:
        t = time.perf_counter()
        results = cli.search(text, catalogue)
        first.append(time.perf_counter() - t)
        found += any(m.entry.id == entry_id for m in results)
    _, search_p95, _ = _row("catalogue search, a new query (warm process)", first)

    t = time.perf_counter()
    for entry_id, text in queries:
        cli.search(text, catalogue)
    again = (time.perf_counter() - t) / len(queries)

    words = []
    for text in word_queries:
        t = time.perf_counter()
        cli._by_words(catalogue, text)
        words.append(time.perf_counter() - t)
    _, words_p95, _ = _row("search by words (no whole message), a new query", words)

    repeat = []
    for _, text in queries:
        message = text
        for _ in range(3):
            t = time.perf_counter()
            match_line(message, catalogue)
            repeat.append(time.perf_counter() - t)
    repeat_med, _, _ = _row("diagnose's lookup of a line already met", repeat, "us")

    # the comparator: no index, every entry tried (entries parsed and matchers compiled beforehand: its best case)
    sample = queries[:: max(1, len(queries) // args.comparator_queries)][:args.comparator_queries]
    for entry_id, text in sample:
        _no_index_search(text, entries)  # warm its matchers
    scan = []
    for entry_id, text in sample:
        t = time.perf_counter()
        _no_index_search(text, entries)
        scan.append(time.perf_counter() - t)
    scan_med, _, _ = _row("comparator: no index, every entry tried (warm)", scan)
    ratio = scan_med / again  # both warm: everything they read is in memory
    print(f"\nfound its own entry: {found}/{len(queries)}; a repeated query: {again * 1e3:.2f} ms; "
          f"warm search vs the warm comparator: {ratio:.0f}x faster")

    assert found == len(queries), f"{len(queries) - found} queries did not find their entry"
    assert search_p95 < 0.050, f"catalogue search p95 {search_p95 * 1e3:.1f} ms >= 50 ms"
    assert words_p95 < 0.050, f"search by words p95 {words_p95 * 1e3:.1f} ms >= 50 ms"
    assert repeat_med < 100e-6, f"repeated lookup median {repeat_med * 1e6:.0f} us >= 100 us"
    assert ratio >= 20, f"search only {ratio:.1f}x faster than the comparator"
    print("all assertions hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
