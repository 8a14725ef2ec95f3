"""Regenerate the error catalogue: ``python -m mltriage.catalogue.generate [--fetch] [PROJECT ...]``.

Reads every covered release of each project named (all by default: git mirrors under
$MLTRIAGE_MIRRORS, wheels and Debian source tarballs cached under $MLTRIAGE_CATALOGUE_SOURCES;
``--fetch`` downloads missing ones first) and rewrites that project's folder of
``server/mltriage/catalogue/data``; the other projects' folders stay as they are.

``--check`` regenerates into a temporary folder and compares with the shipped data byte for byte
(exit 1 on any difference). ``--from-data`` rebuilds the projects named from the entries the data
already holds, with the release lists of today's sources (order, dates): for a change of the entry
layout where a project's sources are not at hand. See ../README.md for what each project covers.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import sys
import tempfile
import time
from pathlib import Path

from mltriage.catalogue.generate.build import (ProjectInput, builders_from_data, releases_in_data, sites_of_files, write,
                                              write_project)
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
    ap.add_argument("--check", action="store_true", help="regenerate into a temporary folder and compare with --out")
    ap.add_argument("--from-data", action="store_true", help="rebuild from the entries --out already holds")
    args = ap.parse_args(argv)
    unknown = [p for p in args.projects if p not in ALL]
    if unknown:
        ap.error(f"unknown project(s): {', '.join(unknown)}")
    t0 = time.perf_counter()
    if args.check and not args.fetch:  # a release whose source is not cached would be left out, not compared
        uncached = {name: SOURCES[name].missing() for name in args.projects if hasattr(SOURCES.get(name), "missing")}
        uncached = {name: versions for name, versions in uncached.items() if versions}
        if uncached:
            for name, versions in uncached.items():
                print(f"{name}: the sources of {', '.join(versions)} are not cached here (add --fetch)", file=sys.stderr)
            return 2
    inputs = [_nccl_input() if name == "nccl" else _source_input(name, args.fetch) for name in args.projects]
    out = Path(tempfile.mkdtemp(prefix="catalogue-check-")) if args.check else args.out
    try:
        if args.from_data:
            coverage = {}
            for project in inputs:
                if not project.releases:  # sources not cached here: the releases the data names
                    project = dataclasses.replace(project, releases=releases_in_data(project.name, args.out))
                builders, figures = builders_from_data(project.name, args.out, project.releases)
                coverage[project.name] = write_project(project, builders, figures, out)
        else:
            coverage = write(inputs, out, log=lambda s: print(s, flush=True))
        for name, cov in coverage.items():
            print(f"{name}: {len(cov['releases'])} releases, {cov['formats']} formats, {cov['entries']} entries")
        if args.check:
            differ = [name for name in args.projects if not _same_folder(out / name, args.out / name)]
            print("identical" if not differ else f"DIFFERENT: {', '.join(differ)}")
            return 1 if differ else 0
    finally:
        if args.check:
            shutil.rmtree(out, ignore_errors=True)
    print(f"done in {time.perf_counter() - t0:.0f} s -> {out}")
    return 0


def _same_folder(a: Path, b: Path) -> bool:
    names = sorted(p.name for p in a.iterdir()) if a.is_dir() else []
    return b.is_dir() and names == sorted(p.name for p in b.iterdir()) and \
        all((a / n).read_bytes() == (b / n).read_bytes() for n in names)


if __name__ == "__main__":
    sys.exit(main())
