"""Where each project's source comes from, release by release: git mirrors with every tag, or the
Python files of released wheels (fetched once with pip into a local cache, the wheel deleted).

Each project yields ``Release``s in release order, and for a release its (path, text) files. The
generator never needs the network except to fetch a missing release's wheel (``fetch``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

MIRRORS = Path(os.environ.get("MLTRIAGE_MIRRORS", "/work/.mirror"))
CACHE = Path(os.environ.get("MLTRIAGE_CATALOGUE_SOURCES", Path.home() / ".cache" / "mltriage-catalogue" / "sources"))


@dataclass(frozen=True, slots=True)
class Release:
    name: str  # the version users see (``0.6.3``, ``2.21.5-1``)
    ref: str  # the git tag the link points at
    commit: str | None  # pinned commit, where known
    date: str | None  # ISO date, where known


@dataclass(frozen=True, slots=True)
class GitProject:
    """A project read from a git mirror: every release tag, Python files under ``roots``."""

    name: str
    repo: str  # owner/name on GitHub
    roots: tuple[str, ...]
    tag: str  # regex a release tag matches; group 1 is the version
    exclude: str | None = None  # regex of paths left out

    @property
    def git_dir(self) -> Path:
        return MIRRORS / self.repo.replace("/", "+") / "repo"

    def releases(self) -> list[Release]:
        out = subprocess.run(
            ["git", f"--git-dir={self.git_dir}", "for-each-ref", "--sort=creatordate",
             "--format=%(refname:short)%09%(*objectname)%(objectname)%09%(creatordate:short)", "refs/tags"],
            capture_output=True, text=True, check=True).stdout
        releases = []
        for row in out.splitlines():
            tag, objects, date = row.split("\t")
            m = re.fullmatch(self.tag, tag)
            if m:
                # annotated tags print the tag object then the commit: the commit is the last 40 hex
                version = next(g for g in m.groups() if g)
                releases.append(Release(version, tag, _commit_of(self.git_dir, tag) or objects[-40:], date))
        return releases

    def files(self, release: Release) -> Iterator[tuple[str, str]]:
        listing = subprocess.run(["git", f"--git-dir={self.git_dir}", "ls-tree", "-r", release.ref, "--", *self.roots],
                                 capture_output=True, text=True, check=True).stdout
        wanted = []
        for row in listing.splitlines():
            meta, path = row.split("\t", 1)
            _, kind, sha = meta.split()
            if kind == "blob" and path.endswith(".py") and not (self.exclude and re.search(self.exclude, path)):
                wanted.append((sha, path))
        yield from _cat_blobs(self.git_dir, wanted)


def _commit_of(git_dir: Path, tag: str) -> str | None:
    out = subprocess.run(["git", f"--git-dir={git_dir}", "rev-parse", f"{tag}^{{commit}}"], capture_output=True, text=True)
    return out.stdout.strip() or None


def _cat_blobs(git_dir: Path, wanted: list[tuple[str, str]]) -> Iterator[tuple[str, str]]:
    """All blobs through one ``git cat-file --batch`` process (one process per file is 100x slower)."""
    if not wanted:
        return
    proc = subprocess.Popen(["git", f"--git-dir={git_dir}", "cat-file", "--batch"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)
    assert proc.stdin and proc.stdout
    proc.stdin.write("".join(f"{sha}\n" for sha, _ in wanted).encode())
    proc.stdin.close()
    for sha, path in wanted:
        header = proc.stdout.readline().split()
        if len(header) < 3 or header[1] == b"missing":
            continue
        data = proc.stdout.read(int(header[2]))
        proc.stdout.read(1)
        yield path, data.decode("utf-8", "replace")
    proc.wait()


@dataclass(frozen=True, slots=True)
class WheelProject:
    """A project read from released wheels on PyPI: their Python files, kept under ``CACHE/name/version``."""

    name: str
    repo: str
    package: str  # the PyPI name
    roots: tuple[str, ...]  # path prefixes kept from the wheel
    versions: tuple[str, ...]  # the releases covered, oldest first
    tag_prefix: str = "v"
    exclude: str | None = None
    local_wheels: tuple[str, ...] = ()  # wheels already on disk (glob patterns), used instead of downloading
    repo_prefix: str = ""  # where the package lives in the repository (``src/`` for transformers)

    def releases(self) -> list[Release]:
        return [Release(v, f"{self.tag_prefix}{v}", _cached_commit(CACHE / self.name / v), None)
                for v in self.versions if (CACHE / self.name / v).is_dir()]

    def missing(self) -> list[str]:
        return [v for v in self.versions if not (CACHE / self.name / v).is_dir()]

    def files(self, release: Release) -> Iterator[tuple[str, str]]:
        root = CACHE / self.name / release.name
        for path in sorted(root.rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if self.exclude and re.search(self.exclude, rel) or rel.endswith(("_version.py", "commit_id.py")):
                continue
            yield self.repo_prefix + rel, path.read_text("utf-8", "replace")

    def fetch(self, version: str) -> bool:
        """Download one release's wheel, keep its Python files under ``roots``, delete the wheel."""
        target = CACHE / self.name / version
        if target.is_dir():
            return True
        wheel = next((Path(p) for pattern in self.local_wheels for p in sorted(Path("/").glob(pattern.lstrip("/")))
                      if f"-{version}-" in p.name or f"-{version}+" in p.name), None)
        with tempfile.TemporaryDirectory() as tmp:
            if wheel is None:
                done = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:",
                                       "--python-version", "3.11", "--platform", "manylinux_2_35_x86_64", "--platform", "manylinux_2_34_x86_64",
                                       "--platform", "manylinux_2_31_x86_64", "--platform", "manylinux_2_28_x86_64",
                                       "--platform", "manylinux2014_x86_64", "--platform", "manylinux1_x86_64",
                                       "--platform", "any", f"{self.package}=={version}", "-d", tmp],
                                      capture_output=True, text=True)
                wheels = list(Path(tmp).glob("*.whl"))
                if done.returncode or not wheels:
                    return False
                wheel = wheels[0]
            partial = target.with_name(version + ".partial")
            shutil.rmtree(partial, ignore_errors=True)
            with zipfile.ZipFile(wheel) as zf:
                for info in zf.infolist():
                    name = info.filename
                    if name.endswith(".py") and name.startswith(self.roots) or name.endswith(("_version.py", "commit_id.py")):
                        out = partial / name
                        out.parent.mkdir(parents=True, exist_ok=True)
                        out.write_bytes(zf.read(info))
            partial.rename(target)
        return True


_COMMIT = re.compile(r"""(?:__commit__|__commit_id__|commit_id)\s*=\s*(?:commit_id\s*=\s*)?['"]g?([0-9a-f]{7,40})['"]""")


def _cached_commit(root: Path) -> str | None:
    """vLLM wheels name their commit (``vllm/commit_id.py``, or ``+g<sha>`` in ``_version.py``)."""
    for name in ("vllm/commit_id.py", "vllm/_version.py", "vllm/version.py"):
        path = root / name
        if path.is_file():
            m = _COMMIT.search(path.read_text("utf-8", "replace"))
            if m:
                return m.group(1)  # GitHub resolves a short commit id in a link
    return None
