"""Find the shell script that launched a run, and where a fix's exports belong in it.

Exports go after the shebang and the leading comment block: `#SBATCH` directives must stay at the
top (sbatch stops reading them at the first command) and a comment header stays a header.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from mltriage.model import Fix

SCRIPT_SUFFIXES = (".sh", ".slurm", ".sbatch", ".bash")
_LAUNCHERS = re.compile(r"\b(torchrun|srun|deepspeed|vllm|mpirun|accelerate\s+launch|python3?(?:\.\d+)?)\b")
_STRONG = re.compile(r"\b(torchrun|srun|deepspeed|vllm|mpirun|accelerate\s+launch)\b")
_SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache", ".tox", "site-packages"})
_MAX_FILES = 5000
_MAX_BYTES = 256 * 1024


@dataclass(frozen=True)
class Candidate:
    path: Path
    strong: bool  # mentions a distributed launcher, not just python
    mtime: float


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
                try:
                    if path.stat().st_size > _MAX_BYTES:
                        continue
                    text = path.read_text(encoding="utf-8", errors="replace")
                    mtime = path.stat().st_mtime
                except OSError:
                    continue
                code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
                if _LAUNCHERS.search(code):
                    found.append(Candidate(path, bool(_STRONG.search(code)), mtime))
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
