"""Turn whatever the user hands us into clean, bounded text chunks.

Inputs are a file, a directory of per-rank logs, stdin or an in-memory string. Bytes are read in
large blocks cut at line ends (a line longer than a block is cut into block-sized pieces), so
memory stays bounded whatever the size of the log. Binary files are refused or skipped with a
reason; ANSI colour codes, CR progress bars, NUL bytes and invalid UTF-8 are cleaned per line.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from mltriage.engine.flight_recorder import PICKLE_MAGIC
from mltriage.numbers import parse_int

BLOCK_SIZE = 4 * 1024 * 1024
SNIFF_SIZE = 64 * 1024

# CSI sequences (colours, cursor moves), OSC sequences (titles, VS Code's 633 shell integration)
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class InputError(Exception):
    """A problem with the input that the user must fix (exit code 2)."""


@dataclass(slots=True)
class Source:
    """One stream of log lines: a file, stdin or a text; rank/host come from its name when known."""

    name: str
    path: Path | None = None
    rank: int | None = None
    host: str | None = None
    size: int | None = None


def clean_line(raw: bytes | str) -> str:
    """Decode and strip terminal decoration, keeping what a human would have seen."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "\r" in text:
        # A progress bar rewrites the line with CR; what stays on screen is the last non-empty part.
        parts = [p for p in text.split("\r") if p.strip()]
        text = parts[-1] if parts else ""
    if "\x00" in text or _CONTROL.search(text):
        text = _CONTROL.sub("", text)
    return text


def looks_binary(head: bytes) -> bool:
    """True for content no log would contain: many NULs or mostly undecodable bytes."""
    if not head:
        return False
    if head.count(b"\x00") > len(head) // 100 + 1:
        # NUL-padded regions happen in logs truncated by a crash; real text still dominates there.
        stripped = head.replace(b"\x00", b"")
        if len(stripped) < len(head) // 2:
            return True
        head = stripped
    if head.startswith((b"\x7fELF", b"PK\x03\x04", b"\x1f\x8b", b"\x89PNG", b"\x80\x04", b"\x80\x05", b"BZh")):
        return True
    text = head.decode("utf-8", "replace")
    bad = text.count("\ufffd")
    printable = sum(1 for ch in text[:4096] if ch.isprintable() or ch in "\n\r\t\x1b")
    return bad > len(text) // 10 or printable < min(len(text), 4096) * 0.7


def iter_blocks(stream: BinaryIO, block_size: int = BLOCK_SIZE) -> Iterator[bytes]:
    """Yield byte blocks that end at a line end (except a line longer than one block)."""
    carry = b""
    while True:
        data = stream.read(block_size)
        if not data:
            if carry:
                yield carry
            return
        data = carry + data if carry else data
        cut = data.rfind(b"\n")
        if cut == -1:
            if len(data) >= block_size:
                yield data  # a monster line: hand it over in pieces
                carry = b""
            else:
                carry = data
            continue
        yield data[: cut + 1]
        carry = data[cut + 1 :]


_RANK_IN_NAME = (
    re.compile(r"(?:^|[/_.-])rank[_-]?(\d{1,6})(?:\D|$)", re.IGNORECASE),
    re.compile(r"attempt_\d+/(\d{1,6})/(?:stdout|stderr|error)\.(?:log|json)$"),  # torchrun --log-dir
    re.compile(r"(?:^|/)(?:slurm|job|task|worker|proc|process)[_-](?:\d+[_-])?(\d{1,6})\.(?:out|err|log|txt)$", re.IGNORECASE),
)
_HOST_IN_NAME = re.compile(r"(?:^|[/_.-])(?:node|host)[_-]?([A-Za-z0-9][\w-]{0,62}?)(?:[/_.]|$)", re.IGNORECASE)
_LOG_SUFFIXES = {".log", ".txt", ".out", ".err", ".json", ""}


def source_for_path(path: Path, relative: str) -> Source:
    rank = host = None
    for pattern in _RANK_IN_NAME:
        m = pattern.search(relative)
        if m:
            rank = parse_int(m.group(1))
            break
    hm = _HOST_IN_NAME.search(relative)
    if hm:
        host = hm.group(1)
    try:
        size = path.stat().st_size
    except OSError:
        size = None
    return Source(name=str(path), path=path, rank=rank, host=host, size=size)


@dataclass(slots=True)
class Skipped:
    name: str
    reason: str


def _sniff(path: Path) -> str:
    """One read of a file's head decides what it is: "pickle" (maybe a Flight Recorder dump) or
    "text"; anything unreadable or binary raises ``InputError`` with the reason."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(SNIFF_SIZE)
    except PermissionError:
        raise InputError(f"permission denied: {path}") from None
    except IsADirectoryError:
        raise InputError(f"is a directory: {path}") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    if head[:2] in PICKLE_MAGIC:
        return "pickle"
    if looks_binary(head):
        raise InputError(f"{path} looks like a binary file, not a log (use a text log or a directory of logs)")
    return "text"


def collect_sources(target: Path) -> tuple[list[Source], list[Skipped], list[Source]]:
    """The readable log files under ``target`` (a file or directory), those skipped (with why),
    and pickles that may be Flight Recorder dumps."""
    if not target.exists():
        raise InputError(f"no such file or directory: {target}")
    if target.is_file():
        if _sniff(target) == "pickle":
            return [], [], [source_for_path(target, target.name)]
        return [source_for_path(target, target.name)], [], []
    if not target.is_dir():
        raise InputError(f"not a regular file or directory: {target}")
    sources: list[Source] = []
    skipped: list[Skipped] = []
    dumps: list[Source] = []
    for dirpath, dirnames, filenames in os.walk(target):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for filename in sorted(filenames):
            path = Path(dirpath) / filename
            relative = str(path.relative_to(target))
            if filename.startswith(".") or not path.is_file():
                continue
            try:
                kind = _sniff(path)
            except InputError as exc:
                skipped.append(Skipped(relative, str(exc)))
                continue
            (dumps if kind == "pickle" else sources).append(source_for_path(path, relative))
    if not sources and not dumps:
        detail = f" ({len(skipped)} skipped: {skipped[0].reason})" if skipped else ""
        raise InputError(f"no readable log files in {target}{detail}")
    return sources, skipped, dumps
