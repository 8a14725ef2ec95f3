"""NCCL's releases and their C/C++ source, read from the git mirror, and the message sites of each.

Every ``v2.x.y-z`` tag is a release (v1.x, ``nccl4py-*``, ``nccl-ep-*``, ``inc_*`` are not), ordered
by commit date (``sources.release_order``: tag names do not sort, v2.3.5 came out before v2.10.3). Files are read through one
``git cat-file --batch`` per release, and a file whose blob is unchanged since an earlier release
is not parsed again: a release changes a tenth of its files, so the 62 releases cost about as
much as eight.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

from mltriage.catalogue.generate.c_sites import extract_c
from mltriage.catalogue.generate.sites import SourceSite
from mltriage.catalogue.generate.sources import C_SUFFIXES, Release, _cat_blobs, release_order

RELEASE_TAG = re.compile(r"v2\.\d+\.\d+-\d+")
SOURCE_ROOT = "src"


def nccl_releases(git_dir: str) -> list[tuple[str, str, str]]:
    """(tag, commit, ISO commit date) of every v2.x release tag, oldest first."""
    out = _git(git_dir, "for-each-ref", "--format=%(refname:strip=2)%09%(objectname)%09%(*objectname)%09"
               "%(committerdate:iso-strict)%09%(*committerdate:iso-strict)", "refs/tags")
    releases = []
    for row in out.splitlines():
        tag, obj, peeled, date, peeled_date = row.split("\t")
        if RELEASE_TAG.fullmatch(tag):
            releases.append((tag, peeled or obj, peeled_date or date))  # annotated tags: the commit's own
    ordered = release_order([Release(tag, tag, commit, date) for tag, commit, date in releases])
    return [(r.name, r.commit, r.date) for r in ordered]


def nccl_files(git_dir: str, commit: str) -> Iterator[tuple[str, str]]:
    """(path, text) of every C/C++ source file under ``src/`` at ``commit``."""
    for path, _sha, text in _source_blobs(git_dir, commit, skip=set()):
        yield path, text


def iter_nccl_sites(git_dir: str) -> Iterator[tuple[str, str, str, list[SourceSite]]]:
    """(tag, commit, date, every message site of that release), release by release, oldest first."""
    for tag, commit, date in nccl_releases(git_dir):
        yield tag, commit, date, sites_at(git_dir, commit)


# (git dir, path, blob) → the file's sites: a file unchanged since an earlier release is not parsed again
_SITES_BY_BLOB: dict[tuple[str, str, str], list[SourceSite]] = {}


def sites_at(git_dir: str, commit: str) -> list[SourceSite]:
    """Every message site of the C/C++ files under ``src/`` at ``commit``, in path order."""
    listing = _listing(git_dir, commit)
    known = {(path, sha) for g, path, sha in _SITES_BY_BLOB if g == git_dir}
    for path, sha, text in _source_blobs(git_dir, commit, skip=known, listing=listing):
        _SITES_BY_BLOB[(git_dir, path, sha)] = extract_c(path, text, "nccl")
    return [site for path, sha in listing for site in _SITES_BY_BLOB.get((git_dir, path, sha), ())]


def _listing(git_dir: str, commit: str) -> list[tuple[str, str]]:
    """(path, blob sha) of the release's C/C++ files, in path order."""
    out = _git(git_dir, "ls-tree", "-r", "-z", commit, "--", SOURCE_ROOT)
    files = []
    for row in out.split("\0"):
        if not row:
            continue
        meta, path = row.split("\t", 1)
        _mode, kind, sha = meta.split()
        if kind == "blob" and path.endswith(C_SUFFIXES):
            files.append((path, sha))
    return files


def _source_blobs(git_dir: str, commit: str, skip: set[tuple[str, str]],
                  listing: list[tuple[str, str]] | None = None) -> Iterator[tuple[str, str, str]]:
    wanted = [(sha, path) for path, sha in (listing if listing is not None else _listing(git_dir, commit))
              if (path, sha) not in skip]
    sha_of = {path: sha for sha, path in wanted}
    for path, text in _cat_blobs(Path(git_dir), wanted):  # blobs absent from the mirror are left out
        yield path, sha_of[path], text


def _git(git_dir: str, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True, text=True, check=True).stdout
