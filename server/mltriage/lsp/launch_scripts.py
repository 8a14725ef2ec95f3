"""Find the shell script that launched a run, and where a fix's exports belong in it.

Exports go after the shebang and the leading comment block: `#SBATCH` directives must stay at the
top (sbatch stops reading them at the first command) and a comment header stays a header.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from mltriage.model import Fix

SCRIPT_SUFFIXES = (".sh", ".slurm", ".sbatch", ".bash")
_LAUNCHERS = re.compile(r"\b(torchrun|srun|deepspeed|vllm|mpirun|accelerate\s+launch|python3?(?:\.\d+)?)\b")
_STRONG = re.compile(r"\b(torchrun|srun|deepspeed|vllm|mpirun|accelerate\s+launch)\b")
_SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache", ".tox", "site-packages"})
_MAX_FILES = 5000
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


def find_launch_scripts(roots: list[Path], limit: int = 20) -> list[Candidate]:
    """Scripts under ``roots`` that launch something; distributed launchers first, newest first."""
    found: list[Candidate] = []
    seen = 0
    for root in roots:
        for directory, subdirs, files in os.walk(root):
            subdirs[:] = sorted(d for d in subdirs if d not in _SKIP_DIRS and not d.startswith("."))
            for name in files:
                seen += 1
                if seen > _MAX_FILES:
                    break
                if not name.endswith(SCRIPT_SUFFIXES):
                    continue
                path = Path(directory, name)
                text = read_script(path)
                if text is None:
                    continue
                try:
                    mtime = path.stat().st_mtime
                except OSError:
                    continue
                launches, strong = launches_something(text)
                if launches:
                    found.append(Candidate(path, strong, mtime))
    found.sort(key=lambda c: (not c.strong, -c.mtime, str(c.path)))
    return found[:limit]


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
