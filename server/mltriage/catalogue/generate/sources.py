"""Where each project's source comes from, release by release: git mirrors with every tag, the
Python files of released wheels (fetched once with pip into a local cache, the wheel deleted), or
the files of Debian's upstream ("orig") source tarballs (fetched once from deb.debian.org, checked
against the checksum Debian publishes, only the subtrees needed kept, the tarball deleted).

Each project yields ``Release``s in release order, and for a release its (path, text) files. The
generator never needs the network except to fetch a missing release (``fetch``).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

MIRRORS = Path(os.environ.get("MLTRIAGE_MIRRORS", "/work/.mirror"))
CACHE = Path(os.environ.get("MLTRIAGE_CATALOGUE_SOURCES", Path.home() / ".cache" / "mltriage-catalogue" / "sources"))
DEBIAN = os.environ.get("MLTRIAGE_DEBIAN_MIRROR", "https://deb.debian.org/debian/")
C_SUFFIXES = (".cc", ".cu", ".h", ".cpp", ".cuh", ".hpp")
# Linux x86-64 wheels for CPython 3.11, newest platform tag first (pip picks the first that exists; vLLM 0.21.0's
# only Linux x86-64 wheels are cp38-abi3-manylinux_2_24)
LINUX_PLATFORMS = ("manylinux_2_35_x86_64", "manylinux_2_34_x86_64", "manylinux_2_31_x86_64", "manylinux_2_28_x86_64",
                   "manylinux_2_24_x86_64", "manylinux2014_x86_64", "manylinux1_x86_64", "any")


@dataclass(frozen=True, slots=True)
class Release:
    name: str  # the version users see (``0.6.3``, ``2.21.5-1``)
    ref: str  # the git tag the link points at
    commit: str | None  # pinned commit, where known
    date: str | None  # ISO date, where known


@dataclass(frozen=True, slots=True)
class PypiRelease:
    """A release on PyPI that the mirror has no tag of (the mirror's snapshot is older): its package's
    Python files, from the wheel or the sdist, kept under ``CACHE/name/version`` at their repository paths."""

    version: str
    date: str  # ISO date of the release (its files' build time in the archive): where it sorts
    archive: str  # "wheel" or "sdist"


@dataclass(frozen=True, slots=True)
class GitProject:
    """A project read from a git mirror: every release tag, Python files under ``roots``; and releases
    newer than the mirror's tags from PyPI (``pypi``)."""

    name: str
    repo: str  # owner/name on GitHub
    roots: tuple[str, ...]
    tag: str  # regex a release tag matches; group 1 is the version
    exclude: str | None = None  # regex of paths left out
    pypi: tuple[PypiRelease, ...] = ()
    package: str = ""  # the PyPI name, for ``pypi``
    repo_prefix: str = ""  # where a wheel's package lives in the repository (``src/`` for accelerate)
    pypi_exclude: str | None = None  # regex of paths a build adds to the archive (copies of files outside ``roots``)
    c_roots: tuple[str, ...] = ()  # C/C++/CUDA files under these are read too, as ``c_project``'s
    c_project: str | None = None  # which of c_sites.PROJECTS reads them

    @property
    def git_dir(self) -> Path:
        return MIRRORS / self.repo.replace("/", "+") / "repo"

    @property
    def source(self) -> str:
        c_side = f" (and the C/C++/CUDA of {', '.join(f'`{r}`' for r in self.c_roots)})" if self.c_roots else ""
        return f"git tags of github.com/{self.repo}{c_side}"

    def _wanted(self, path: str) -> bool:
        """A file this project's sites are read from: Python under ``roots``, C/C++ under ``c_roots``."""
        return path.endswith(".py") and path.startswith(self.roots) or \
            bool(self.c_roots) and path.endswith(C_SUFFIXES) and path.startswith(self.c_roots)

    def releases(self) -> list[Release]:
        # the tagged commit's date: an annotated tag's own date can be years later (Megatron-LM re-tagged
        # core_v0.8.0 ... core_v0.12.0 on one day in 2025)
        out = subprocess.run(
            ["git", f"--git-dir={self.git_dir}", "for-each-ref", "--format=%(refname:strip=2)%09%(objectname)%09"
             "%(*objectname)%09%(committerdate:short)%09%(*committerdate:short)", "refs/tags"],
            capture_output=True, text=True, check=True).stdout
        releases = []
        for row in out.splitlines():
            tag, obj, peeled, date, peeled_date = row.split("\t")
            m = re.fullmatch(self.tag, tag)
            if m:
                version = next(g for g in m.groups() if g)
                releases.append(Release(version, tag, peeled or obj, peeled_date or date))
        tagged = {r.name for r in releases}
        releases += [Release(p.version, f"v{p.version}", None, p.date) for p in self.pypi
                     if p.version not in tagged and (CACHE / self.name / p.version).is_dir()]
        return release_order(releases)

    def missing(self) -> list[str]:
        return _missing(self.name, tuple(p.version for p in self.pypi))

    def fetch(self, version: str) -> str | None:
        """Download one PyPI release (``pypi``), keep its Python files under ``roots`` at their repository
        paths, delete the archive. None when done, else why not."""
        target = CACHE / self.name / version
        if target.is_dir():
            return None
        release = next(p for p in self.pypi if p.version == version)
        # an sdist's metadata is prepared by its setup.py, which may import torch: the running Python's
        binary = ["--only-binary", ":all:"] if release.archive == "wheel" else ["--no-binary", ":all:", "--no-build-isolation"]
        with tempfile.TemporaryDirectory() as tmp:
            done = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", *binary,
                                   f"{self.package}=={version}", "-d", tmp], capture_output=True, text=True,
                                  env={**os.environ, "PIP_CONSTRAINT": os.devnull})
            archives = [p for p in Path(tmp).iterdir() if p.is_file()]
            if done.returncode or not archives:
                return f"pip download {self.package}=={version} ({release.archive}): {done.stderr.strip()[-300:]}"
            with _filling(target) as partial:
                for rel, data in _archive_files(archives[0], release.archive):
                    rel = self.repo_prefix + rel
                    if self._wanted(rel) and ".." not in rel.split("/"):
                        _write_file(partial, rel, data)
        return None

    def files(self, release: Release) -> Iterator[tuple[str, str]]:
        if release.commit is None:  # a PyPI release
            for rel, text in _cached_files(CACHE / self.name / release.name, (".py", *C_SUFFIXES)):
                if not self._wanted(rel):  # (a cache filled before c_roots were read holds Python only)
                    continue
                if not (self.exclude and re.search(self.exclude, rel)) and \
                        not (self.pypi_exclude and re.search(self.pypi_exclude, rel)):
                    yield rel, text
            return
        listing = subprocess.run(["git", f"--git-dir={self.git_dir}", "ls-tree", "-r", release.ref, "--", *self.roots,
                                  *self.c_roots], capture_output=True, text=True, check=True).stdout
        wanted = []
        for row in listing.splitlines():
            meta, path = row.split("\t", 1)
            _, kind, sha = meta.split()
            if kind == "blob" and self._wanted(path) and not (self.exclude and re.search(self.exclude, path)):
                wanted.append((sha, path))
        yield from _cat_blobs(self.git_dir, wanted)


def release_order(releases: list[Release]) -> list[Release]:
    """Releases by date, not by number: tag schemes mix (Megatron-LM's v2.6, 23.04, core_v0.4.0) and
    numbers do not sort across them. A release line (the first two numbers: NCCL 2.18, Megatron-LM
    0.12) sits where its first release does, and a maintenance release of an older line stays with
    its line (NCCL 2.18.6-1 came out after 2.19.3-1), so a range reads as it does upstream."""
    first_of: dict[tuple[int, ...], str] = {}
    for r in releases:
        line = _numbers(r.name)[:2]
        first_of[line] = min(first_of.get(line, r.date or ""), r.date or "")
    return sorted(releases, key=lambda r: (first_of[_numbers(r.name)[:2]], _numbers(r.name)[:2], _numbers(r.name), r.name))


def _numbers(name: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", name)[:6])


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
    platforms: tuple[str, ...] = LINUX_PLATFORMS  # wheel platform tags pip may take, best first
    pythons: tuple[str, ...] = ("3.11",)  # CPython versions tried in turn (old releases have no 3.11 wheel)
    note: str = ""  # said after the source in the README and the data

    @property
    def source(self) -> str:
        return f"the Python files of the {self.package} wheels on PyPI{self.note}"

    def releases(self) -> list[Release]:
        return [Release(v, f"{self.tag_prefix}{v}", _cached_commit(CACHE / self.name / v), None)
                for v in self.versions if (CACHE / self.name / v).is_dir()]

    def missing(self) -> list[str]:
        return _missing(self.name, self.versions)

    def files(self, release: Release) -> Iterator[tuple[str, str]]:
        for rel, text in _cached_files(CACHE / self.name / release.name, (".py",)):
            if self.exclude and re.search(self.exclude, rel) or rel.endswith(("_version.py", "commit_id.py")):
                continue
            yield self.repo_prefix + rel, text

    def fetch(self, version: str) -> str | None:
        """Download one release's wheel, keep its Python files under ``roots``, delete the wheel.
        None when done, else why not."""
        target = CACHE / self.name / version
        if target.is_dir():
            return None
        wheel = next((Path(p) for pattern in self.local_wheels for p in sorted(Path("/").glob(pattern.lstrip("/")))
                      if f"-{version}-" in p.name or f"-{version}+" in p.name), None)
        with tempfile.TemporaryDirectory() as tmp:
            if wheel is None:
                platforms = [arg for platform in self.platforms for arg in ("--platform", platform)]
                # an exact release with --no-deps: this machine's pip constraints (torch<=2.14.1) say what may
                # be installed, not which source may be read
                env = {**os.environ, "PIP_CONSTRAINT": os.devnull}
                for python in self.pythons:
                    done = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary",
                                           ":all:", "--python-version", python, *platforms,
                                           f"{self.package}=={version}", "-d", tmp], capture_output=True, text=True, env=env)
                    wheels = list(Path(tmp).glob("*.whl"))
                    if not done.returncode and wheels:
                        wheel = wheels[0]
                        break
                else:
                    return f"pip found no wheel for {', '.join(self.pythons)} on {', '.join(self.platforms)}"
            with _filling(target) as partial, zipfile.ZipFile(wheel) as zf:
                for info in zf.infolist():
                    name = info.filename
                    if name.endswith(".py") and name.startswith(self.roots) or name.endswith(("_version.py", "commit_id.py")):
                        _write_file(partial, name, zf.read(info), CACHE / self.name / _OBJECTS)
        return None


@dataclass(frozen=True, slots=True)
class DebianTarball:
    """One release's upstream source as a Debian source package ships it (its ``.orig.tar.*``)."""

    version: str  # the upstream release (``2.6.0``)
    pool_path: str  # under the archive root: ``pool/main/p/pytorch/pytorch_2.6.0+dfsg.orig.tar.xz``
    sha256: str  # from the Checksums-Sha256 of the suite's Sources entry
    suite: str  # the suite whose Sources listed it (``trixie``)


@dataclass(frozen=True, slots=True)
class DebianProject:
    """A project read from Debian's orig tarballs: the C/C++ files under ``roots``, kept under
    ``CACHE/name/version``. The tarball's top directory (``pytorch-v2.6.0/``) is left off, so
    paths are the repository's."""

    name: str
    repo: str
    package: str  # the Debian source package
    roots: tuple[str, ...]  # path prefixes kept
    tarballs: tuple[DebianTarball, ...]  # the releases covered, oldest first
    c_project: str  # which of c_sites.PROJECTS reads its C/C++ files
    tag_prefix: str = "v"
    sampled: bool = True  # the releases Debian happens to ship, with upstream's others between them

    @property
    def source(self) -> str:
        return f"the C/C++ files of Debian's {self.package} source packages (orig tarballs, deb.debian.org)"

    @property
    def versions(self) -> tuple[str, ...]:
        return tuple(t.version for t in self.tarballs)

    def releases(self) -> list[Release]:
        return [Release(v, f"{self.tag_prefix}{v}", None, None) for v in self.versions if (CACHE / self.name / v).is_dir()]

    def missing(self) -> list[str]:
        return _missing(self.name, self.versions)

    def files(self, release: Release) -> Iterator[tuple[str, str]]:
        yield from _cached_files(CACHE / self.name / release.name, C_SUFFIXES)

    def fetch(self, version: str) -> str | None:
        """Download one release's tarball, check it, keep the files under ``roots``, delete it.
        None when done, else why not."""
        target = CACHE / self.name / version
        if target.is_dir():
            return None
        tarball = next(t for t in self.tarballs if t.version == version)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / tarball.pool_path.rsplit("/", 1)[-1]
            digest = hashlib.sha256()
            try:
                with urllib.request.urlopen(DEBIAN + tarball.pool_path, timeout=120) as response, open(path, "wb") as out:
                    while chunk := response.read(1 << 20):
                        digest.update(chunk)
                        out.write(chunk)
            except OSError as e:  # URLError and HTTPError are OSErrors
                return f"{DEBIAN}{tarball.pool_path}: {e}"
            if digest.hexdigest() != tarball.sha256:
                return f"{tarball.pool_path}: sha256 {digest.hexdigest()} is not the {tarball.sha256} of {tarball.suite}'s Sources"
            with _filling(target) as partial, tarfile.open(path) as tar:
                for member in tar:
                    rel = member.name.split("/", 1)[1] if "/" in member.name else ""
                    if member.isfile() and rel.startswith(self.roots) and rel.endswith(C_SUFFIXES) \
                            and ".." not in rel.split("/"):
                        _write_file(partial, rel, tar.extractfile(member).read())
        return None


def _archive_files(path: Path, archive: str) -> Iterator[tuple[str, bytes]]:
    """(path in the package, bytes) of a wheel's files, or of an sdist's with its top folder left off."""
    if archive == "wheel":
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                if not info.is_dir():
                    yield info.filename, zf.read(info)
        return
    with tarfile.open(path) as tar:
        for member in tar:
            if member.isfile() and "/" in member.name:
                yield member.name.split("/", 1)[1], tar.extractfile(member).read()


def _missing(name: str, versions: tuple[str, ...]) -> list[str]:
    return [v for v in versions if not (CACHE / name / v).is_dir()]


def _cached_files(root: Path, suffixes: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    """(path under ``root``, text) of a cached release's files, in path order."""
    for path in sorted(root.rglob("*")):
        if path.suffix in suffixes and path.is_file():
            yield path.relative_to(root).as_posix(), path.read_text("utf-8", "replace")


class _filling:
    """A release's cache folder written under a temporary name and renamed when complete, so an
    interrupted fetch never leaves a partial release that looks cached."""

    def __init__(self, target: Path) -> None:
        self.target = target
        self.partial = target.with_name(target.name + ".partial")

    def __enter__(self) -> Path:
        shutil.rmtree(self.partial, ignore_errors=True)
        self.partial.mkdir(parents=True)
        return self.partial

    def __exit__(self, kind, value, traceback) -> None:
        if kind is None:
            self.partial.rename(self.target)
        else:
            shutil.rmtree(self.partial, ignore_errors=True)


_OBJECTS = ".objects"  # a wheel project's files by content: a file unchanged between releases is stored once


def _write_file(root: Path, rel: str, data: bytes, objects: Path | None = None) -> None:
    """One file of a cached release; with ``objects``, a hard link to its content stored once there
    (transformers' 213 releases: 8.4 GB of files, 1.5 GB of distinct ones)."""
    out = root / rel
    out.parent.mkdir(parents=True, exist_ok=True)
    if objects is None:
        out.write_bytes(data)
        return
    digest = hashlib.sha256(data).hexdigest()
    stored = objects / digest[:2] / digest
    if not stored.is_file():
        stored.parent.mkdir(parents=True, exist_ok=True)
        partial = stored.with_name(digest + ".partial")
        partial.write_bytes(data)
        partial.rename(stored)
    os.link(stored, out)


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
