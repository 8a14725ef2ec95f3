"""What the C/C++ extractor finds in every NCCL v2.x release, and how long it takes.

    python bench/bench_nccl_sites.py [--git-dir DIR] [--strings FILE --tag v2.21.5-1]

Prints one row per release (sites, distinct formats, by kind, sites with a cause), the totals,
and the misses (calls recognised but not turned into a format). With ``--strings`` (the output
of ``strings -n 4 libnccl.so.2`` of a wheel of that release) it also prints the share of the
release's formats whose literal text is in the binary: the cross-check the notes describe.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "server"))

from mltriage.catalogue.formats import MIN_LITERAL_CHARS  # noqa: E402
from mltriage.catalogue.generate.c_sites import extract_c_with_misses  # noqa: E402
from mltriage.catalogue.generate.nccl_source import _listing, _source_blobs, nccl_releases  # noqa: E402

DEFAULT_GIT = Path(os.environ.get("MLTRIAGE_MIRRORS", "/work/.mirror")) / "NVIDIA+nccl" / "repo"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--git-dir", default=str(DEFAULT_GIT))
    ap.add_argument("--strings", type=Path, help="strings(1) of libnccl.so.2 of the release --tag")
    ap.add_argument("--tag", default="v2.21.5-1")
    args = ap.parse_args()
    if not Path(args.git_dir).is_dir():
        print(f"no NCCL mirror at {args.git_dir}", file=sys.stderr)
        return 2

    t0, cpu0 = time.perf_counter(), time.process_time()
    by_blob: dict[tuple[str, str], list] = {}
    misses: collections.Counter[str] = collections.Counter()
    presence: collections.Counter[tuple[str, str]] = collections.Counter()
    literal: dict[tuple[str, str], int] = {}
    per_release = {}
    releases = nccl_releases(args.git_dir)
    print(f"{'release':<11} {'date':<10} {'files':>5} {'sites':>5} {'formats':>7} {'warn':>4} {'info':>4} "
          f"{'error':>5} {'cause':>5} {'kept':>5}")
    for tag, commit, date in releases:
        listing = _listing(args.git_dir, commit)
        for path, sha, text in _source_blobs(args.git_dir, commit, skip=set(by_blob), listing=listing):
            sites, missed = extract_c_with_misses(path, text, "nccl")
            by_blob[(path, sha)] = sites
            misses.update(m.reason for m in missed)
        sites = [s for path, sha in listing for s in by_blob.get((path, sha), ())]
        per_release[tag] = sites
        formats = {(s.kind, s.format.text) for s in sites}
        presence.update(formats)
        literal.update({(s.kind, s.format.text): s.format.literal_chars for s in sites})
        kinds = collections.Counter(s.kind for s in sites)
        kept = sum(1 for s in {(s.kind, s.format.text): s for s in sites}.values()
                   if s.format.literal_chars >= MIN_LITERAL_CHARS)
        print(f"{tag:<11} {date[:10]:<10} {len(listing):>5} {len(sites):>5} {len(formats):>7} {kinds['warn']:>4} "
              f"{kinds['info']:>4} {kinds['error']:>5} {sum(s.cause is not None for s in sites):>5} {kept:>5}")
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    every = sum(1 for n in presence.values() if n == len(releases))
    print(f"\n{len(releases)} releases, {len(by_blob)} distinct file versions parsed, "
          f"{len(presence)} distinct (kind, format), {every} in every release, "
          f"{sum(1 for n in presence.values() if n == 1)} in exactly one")
    short = sum(1 for chars in literal.values() if chars < MIN_LITERAL_CHARS)
    print(f"formats under MIN_LITERAL_CHARS={MIN_LITERAL_CHARS} (left to the build step to drop): {short}")
    print(f"misses (calls recognised, no format): {dict(misses)}")
    print(f"time: {wall:.1f} s wall, {cpu:.1f} s CPU (this process; git runs in its own)")

    if args.strings:
        blob = args.strings.read_bytes().decode("latin-1")
        found: collections.Counter[str] = collections.Counter()
        total: collections.Counter[str] = collections.Counter()
        for site in {(s.kind, s.format.text): s for s in per_release[args.tag]}.values():
            pieces = [line for p in site.format.parts if isinstance(p, str) for line in p.split("\n")
                      if len(line.strip()) >= 3]
            if not pieces:
                continue  # nothing of 3+ characters to look for ("%s:%d -> %d")
            total[site.kind] += 1
            found[site.kind] += all(piece in blob for piece in pieces)
        for kind in total:
            print(f"{args.tag} {kind}: {found[kind]}/{total[kind]} formats have all their literal text in the "
                  f"binary ({100 * found[kind] / total[kind]:.1f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
