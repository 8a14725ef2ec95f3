"""Find the shell script that launched a run, and where a fix's exports belong in it.

Exports go after the shebang and the leading comment block: `#SBATCH` directives must stay at the
top (sbatch stops reading them at the first command) and a comment header stays a header.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from mltriage.model import Fix

SCRIPT_SUFFIXES = (".sh", ".slurm", ".sbatch", ".bash")
_LAUNCHERS = re.compile(r"\b(torchrun|srun|deepspeed|vllm|mpirun|accelerate\s+launch|python3?(?:\.\d+)?)\b")
_STRONG = re.compile(r"\b(torchrun|srun|deepspeed|vllm|mpirun|accelerate\s+launch)\b")
_SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache", ".tox", "site-packages"})
MAX_SCRIPT_BYTES = 256 * 1024  # a launch script is a page of shell, not a data file


@dataclass(frozen=True)
class Candidate:
    path: Path
    strong: bool  # mentions a distributed launcher, not just python
    mtime: float


def read_script(path: Path | str, limit: int = MAX_SCRIPT_BYTES) -> str | None:
    """The text of a regular file of at most ``limit`` bytes, else None.

    A workspace can hold anything under a script's name: a symlink to ``/dev/zero`` (endless), a
    FIFO (blocks on open and on read), a device. The file is opened without blocking, checked on
    the open descriptor (no race with a rename) and read with a bound."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:  # grew while we read it
            return None
        return b"".join(chunks).decode("utf-8", errors="replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def launches_something(text: str) -> tuple[bool, bool]:
    """(launches anything, launches a distributed job), comments ignored."""
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    return bool(_LAUNCHERS.search(code)), bool(_STRONG.search(code))


# Directory entries one scan looks at: the scripts found are a function of the tree, never of time.
# Directories are read breadth first (a workspace's launch scripts sit near its top), so a deep
# tree (a dataset, a build) uses up the count only after everything above it was seen.
MAX_ENTRIES = 20_000
_RACY_NS = 2_000_000_000  # a directory or file changed this close to when it was read is read again


@dataclass(frozen=True)
class Scan:
    candidates: list[Candidate]  # distributed launchers first, newest first
    entries: int  # directory entries looked at
    listed: int  # directories read (new, changed, or too recently changed to trust)
    read: int  # scripts read (new or changed)
    complete: bool  # False: stopped at the entry count; scripts further down were not looked for


@dataclass(frozen=True)
class _Listing:
    mtime_ns: int
    trusted: bool  # its mtime was older than the read by more than _RACY_NS
    subdirs: tuple[str, ...]
    scripts: tuple[str, ...]
    entries: int


@dataclass(frozen=True)
class _Verdict:
    key: tuple[int, int, int, int]  # (mtime_ns, ctime_ns, size, inode)
    trusted: bool
    launches: bool
    strong: bool
    mtime: float


def _listing(directory: str, mtime_ns: int, budget: int) -> tuple[_Listing | None, int]:
    """A directory's subdirectories to descend and its script names, sorted; None when it has more
    than ``budget`` entries (the scan stops there). The entries counted are returned either way."""
    subdirs, scripts, entries = [], [], 0
    read_at = time.time_ns()
    try:
        with os.scandir(directory) as it:
            for entry in it:
                entries += 1
                if entries > budget:
                    return None, entries
                name = entry.name
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)  # a link to a directory is not followed
                except OSError:
                    continue
                if is_dir:
                    if name not in _SKIP_DIRS and not name.startswith("."):
                        subdirs.append(name)
                elif name.endswith(SCRIPT_SUFFIXES):
                    scripts.append(name)
    except OSError:
        return _Listing(mtime_ns, False, (), (), entries), entries
    listing = _Listing(mtime_ns, mtime_ns < read_at - _RACY_NS, tuple(sorted(subdirs)), tuple(sorted(scripts)), entries)
    return listing, entries


class ScriptIndex:
    """Scans for launch scripts, keeping what each scan read for the next: a directory's listing
    under its mtime (a directory whose mtime did not change has the same entries), a script's
    verdict under its mtime, ctime, size and inode. A rescan of an unchanged tree reads no
    directory and no script; it stats each directory and script. Not thread-safe: one scan at a time."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._listings: dict[str, _Listing] = {}
        self._verdicts: dict[str, _Verdict] = {}

    def scan(self, roots: list[Path]) -> Scan:
        found: list[Candidate] = []
        listings: dict[str, _Listing] = {}
        verdicts: dict[str, _Verdict] = {}
        entries = listed = read = 0
        complete = True
        queue = deque(str(root) for root in roots)
        while queue:
            directory = queue.popleft()
            if directory in listings:  # nested workspace folders
                continue
            try:
                mtime_ns = os.stat(directory).st_mtime_ns
            except OSError:
                continue
            listing = self._listings.get(directory)
            if listing is None or not listing.trusted or listing.mtime_ns != mtime_ns:
                listing, counted = _listing(directory, mtime_ns, self.max_entries - entries)
                listed += 1
                if listing is None:
                    entries += counted - 1
                    complete = False
                    break
            if entries + listing.entries > self.max_entries:
                complete = False
                break
            entries += listing.entries
            listings[directory] = listing
            queue.extend(os.path.join(directory, name) for name in listing.subdirs)
            for name in listing.scripts:
                path = os.path.join(directory, name)
                verdict = self._verdicts.get(path)
                try:
                    info = os.stat(path)
                except OSError:
                    continue
                key = (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino)
                if verdict is None or not verdict.trusted or verdict.key != key:
                    verdict = _judge(path, key, info.st_mtime)
                    read += 1
                verdicts[path] = verdict
                if verdict.launches:
                    found.append(Candidate(Path(path), verdict.strong, verdict.mtime))
        if complete:  # forget what is gone; a partial scan keeps the rest for the next one
            self._listings, self._verdicts = listings, verdicts
        else:
            self._listings.update(listings)
            self._verdicts.update(verdicts)
        found.sort(key=lambda c: (not c.strong, -c.mtime, str(c.path)))
        return Scan(found, entries, listed, read, complete)


def _judge(path: str, key: tuple[int, int, int, int], mtime: float) -> _Verdict:
    text = read_script(path)
    launches, strong = launches_something(text) if text is not None else (False, False)
    return _Verdict(key, key[0] < time.time_ns() - _RACY_NS, launches, strong, mtime)


def find_launch_scripts(roots: list[Path], limit: int = 20, max_entries: int = MAX_ENTRIES) -> list[Candidate]:
    """Scripts under ``roots`` that launch something; distributed launchers first, newest first."""
    return ScriptIndex(max_entries).scan(roots).candidates[:limit]


def insertion_line(lines: list[str]) -> int:
    """0-based line before which exports go: right after the last line of the leading block of
    comments (shebang, `#SBATCH`, header) and blank lines."""
    index = 0
    last_header = -1
    while index < len(lines):
        stripped = lines[index].strip()
        if stripped.startswith("#"):
            last_header = index
        elif stripped:
            break
        index += 1
    return last_header + 1


def export_lines(env: dict[str, str]) -> list[str]:
    return Fix(env=env).exports()


def missing_exports(text: str, env: dict[str, str]) -> dict[str, str]:
    """The part of ``env`` the script does not already export with the same value."""
    missing = {}
    for name, value in env.items():
        pattern = re.compile(rf"^\s*export\s+{re.escape(name)}=(['\"]?){re.escape(value)}\1\s*(?:#.*)?$", re.M)
        if not pattern.search(text):
            missing[name] = value
    return missing


def insertion_text(env: dict[str, str], signature: str, title: str, eol: str = "\n") -> str:
    block = [f"# mltriage fix for {signature}: {title}", *export_lines(env)]
    return eol.join(block) + eol
