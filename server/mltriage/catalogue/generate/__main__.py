"""Regenerate the error catalogue: ``python -m mltriage.catalogue.generate [--fetch] [PROJECT ...]``.

Reads every covered release of each project (git mirrors under $MLTRIAGE_MIRRORS, wheels and Debian
source tarballs cached under $MLTRIAGE_CATALOGUE_SOURCES; ``--fetch`` downloads missing ones first)
and rewrites ``server/mltriage/catalogue/data`` with the projects named (all by default: the data
holds only what one run wrote). See ../README.md for what each project covers.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from mltriage.catalogue.generate.build import ProjectInput, sites_of_files, write
from mltriage.catalogue.generate.projects import C_PROJECTS, PYTHON_PROJECTS
from mltriage.catalogue.generate.sources import GitProject, Release

DATA = Path(__file__).resolve().parent.parent / "data"
SOURCES = {**PYTHON_PROJECTS, **C_PROJECTS}
ALL = ["nccl", *SOURCES]


def _nccl_input() -> ProjectInput:
    from mltriage.catalogue.generate import nccl_source  # needs the 'catalogue' extra (tree-sitter)

    git_dir = str(GitProject("nccl", "NVIDIA/nccl", ("src",), r"v(2\..*)").git_dir)
    releases = [Release(tag[1:], tag, commit, date[:10]) for tag, commit, date in nccl_source.nccl_releases(git_dir)]
    stream = nccl_source.iter_nccl_sites(git_dir)  # release by release, in the same order as `releases`

    def sites_of(release: Release):
        tag, _commit, _date, sites = next(stream)
        assert tag == release.ref, (tag, release.ref)
        return sites

    return ProjectInput("nccl", "NVIDIA/nccl", "git tags v2.x of github.com/NVIDIA/nccl (C/C++ WARN/INFO sites)",
                        releases, sites_of)


def _source_input(name: str, fetch: bool) -> ProjectInput:
    project = SOURCES[name]
    if fetch and hasattr(project, "missing"):
        for version in project.missing():
            error = project.fetch(version)
            print(f"fetch {name} {version}: {'ok' if error is None else 'FAILED: ' + error}", flush=True)
    return ProjectInput(name, project.repo, project.source, project.releases(),
                        sites_of_files(project.files, getattr(project, "c_project", None)),
                        sampled=getattr(project, "sampled", False))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mltriage.catalogue.generate", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("projects", nargs="*", default=ALL, help=f"default: all ({', '.join(ALL)})")
    ap.add_argument("--fetch", action="store_true", help="download the wheels and tarballs of releases not yet cached")
    ap.add_argument("--out", type=Path, default=DATA)
    args = ap.parse_args(argv)
    unknown = [p for p in args.projects if p not in ALL]
    if unknown:
        ap.error(f"unknown project(s): {', '.join(unknown)}")
    t0 = time.perf_counter()
    inputs = [_nccl_input() if name == "nccl" else _source_input(name, args.fetch) for name in args.projects]
    coverage = write(inputs, args.out, log=lambda s: print(s, flush=True))
    for name, cov in coverage.items():
        print(f"{name}: {len(cov['releases'])} releases, {cov['formats']} formats, {cov['entries']} entries")
    print(f"done in {time.perf_counter() - t0:.0f} s -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
