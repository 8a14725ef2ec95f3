"""Turn whatever the user hands us into clean, bounded text chunks.

Inputs are a file, a directory of per-rank logs, stdin or an in-memory string. Bytes are read in
large blocks cut at line ends (a line longer than a block is cut into block-sized pieces), so
memory stays bounded whatever the size of the log. One look at an input's head decides what it is
(``classify``): UTF-8 text, UTF-16 text (Windows tools write it, with or without a BOM; it is
transcoded as it is read), a pickle (maybe a Flight Recorder dump), or something no log is
(compressed, an executable, random bytes), refused or skipped with a reason that names it. NUL
padding (what a crashed writer leaves) is no reason to refuse a log. ANSI colour codes, CR
progress bars, NUL bytes and invalid UTF-8 are cleaned per line.

What could not be read at all (permissions, I/O errors, symlink loops) is kept apart from what
was deliberately not read (binaries, FIFOs): the first makes a diagnosis incomplete.
"""

from __future__ import annotations

import codecs
import errno
import os
import re
import stat
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
    encoding: str = "utf-8"  # what ``classify`` found; anything else is transcoded to UTF-8 on reading


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


# What a file's first bytes say it is, for the formats a log directory or a pipe often holds.
_MAGIC = (
    (b"\x1f\x8b", "gzip-compressed data (decompress it first: zcat FILE | mltriage diagnose -)"),
    (b"BZh", "bzip2-compressed data (decompress it first: bzcat FILE | mltriage diagnose -)"),
    (b"\xfd7zXZ\x00", "xz-compressed data (decompress it first: xzcat FILE | mltriage diagnose -)"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed data (decompress it first: zstdcat FILE | mltriage diagnose -)"),
    (b"PK\x03\x04", "a zip archive (unpack it and diagnose the folder)"),
    (b"\x7fELF", "an executable (ELF)"),
    (b"\x89PNG", "a PNG image"),
)
UTF16_BOMS = {codecs.BOM_UTF16_LE: "utf-16", codecs.BOM_UTF16_BE: "utf-16"}


def _utf16_without_bom(head: bytes) -> str | None:
    """UTF-16 text of mostly ASCII characters has a NUL in every other byte (odd ones for
    little-endian, even ones for big-endian) and almost none in the others."""
    sample = head.rstrip(b"\x00")[:4096]
    if len(sample) < 8:
        return None
    even, odd = sample[0::2], sample[1::2]
    even_nul, odd_nul = even.count(0) / len(even), odd.count(0) / len(odd)
    if odd_nul > 0.9 and even_nul < 0.1:
        return "utf-16-le"
    if even_nul > 0.9 and odd_nul < 0.1:
        return "utf-16-be"
    return None


def classify(head: bytes) -> str:
    """What an input is, from its first bytes: ``"pickle"``, or the text encoding to read it with
    (``"utf-8"``, ``"utf-16"`` with a BOM, ``"utf-16-le"``/``"utf-16-be"`` without one). Anything
    else raises ``InputError`` with what it looks like (the caller prefixes the input's name)."""
    if head[:2] in PICKLE_MAGIC:
        return "pickle"
    for bom, encoding in UTF16_BOMS.items():
        if head.startswith(bom):
            return encoding
    utf16 = _utf16_without_bom(head)
    if utf16 is not None:
        return utf16
    for magic, what in _MAGIC:
        if head.startswith(magic):
            raise InputError(f"is {what}, not a log")
    if looks_binary(head):
        raise InputError("looks like binary data, not a log (use a text log or a directory of logs)")
    return "utf-8"


def looks_binary(head: bytes) -> bool:
    """True for content no log would contain: mostly undecodable or unprintable bytes. NUL bytes
    do not count either way: a crashed writer leaves a NUL-padded tail (or hole) in a real log."""
    if b"\x00" in head:
        head = head.replace(b"\x00", b"")
        if not head:
            return True  # nothing but NULs: no text to read
    if not head:
        return False
    text = head.decode("utf-8", "replace")
    bad = text.count("\ufffd")
    sample = text[:4096]
    printable = sum(map(str.isprintable, sample)) + sum(map(sample.count, "\n\r\t\x1b"))  # (C loops)
    return bad > len(text) // 10 or printable < min(len(text), 4096) * 0.7


class TranscodedStream:
    """A binary stream of UTF-16 text read as UTF-8 bytes, block by block (bounded memory)."""

    def __init__(self, raw: BinaryIO, encoding: str) -> None:
        self._raw = raw
        self._decoder = codecs.getincrementaldecoder(encoding)(errors="replace")

    def read(self, size: int = -1) -> bytes:
        while True:
            data = self._raw.read(size)
            text = self._decoder.decode(data, final=not data)
            if text or not data:
                return text.encode("utf-8", "replace")


def as_utf8(stream: BinaryIO, encoding: str) -> BinaryIO:
    return stream if encoding == "utf-8" else TranscodedStream(stream, encoding)  # type: ignore[return-value]


class _HeadThenRest:
    """A stream whose first bytes were already read to classify it (a pipe cannot seek back)."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self._head, self._rest = head, rest

    def read(self, size: int = -1) -> bytes:
        if self._head:
            if size < 0:
                data, self._head = self._head + self._rest.read(), b""
                return data
            data, self._head = self._head[:size], self._head[size:]
            return data
        return self._rest.read(size)


def open_stream(stream: BinaryIO, name: str) -> BinaryIO:
    """A stream (stdin, a pipe) classified like a file: UTF-8 bytes out, or ``InputError``."""
    try:
        head = stream.read(SNIFF_SIZE) or b""
    except OSError as exc:
        raise UnreadableInput(os_error_reason(name, exc)) from None
    try:
        kind = classify(head)
    except InputError as exc:
        raise InputError(f"{name} {exc}") from None
    if kind == "pickle":
        raise InputError(f"{name} is a pickle: give Flight Recorder dumps as files or a directory, not on a pipe")
    return as_utf8(_HeadThenRest(head, stream), kind)  # type: ignore[arg-type]


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
    unread: bool = False  # it could not be read (the diagnosis is incomplete), not merely no log


class UnreadableInput(InputError):
    """An input that exists but could not be read (permissions, I/O error, a symlink loop)."""


def os_error_reason(path: Path | str, exc: OSError) -> str:
    """One wording for every way opening or reading a path fails."""
    if exc.errno == errno.ELOOP:
        return f"symbolic link loop: {path}"
    if exc.errno == errno.ENOENT:
        return f"no such file or directory: {path}"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"permission denied: {path}"
    return f"cannot read {path}: {exc.strerror or exc}"


def _not_regular(mode: int) -> str | None:
    """Why a path that is neither a regular file nor a directory is not read (reading a FIFO
    blocks until a writer comes; a device can be endless)."""
    for test, what in ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return f"not a regular file: {what}"
    return None if stat.S_ISREG(mode) or stat.S_ISDIR(mode) else "not a regular file"


def _sniff(path: Path) -> str:
    """One read of a file's head decides what it is: ``"pickle"`` (maybe a Flight Recorder dump) or
    the encoding of its text; ``UnreadableInput`` if it cannot be read, ``InputError`` for a
    binary with the reason."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(SNIFF_SIZE)
    except IsADirectoryError:
        raise InputError(f"is a directory: {path}") from None
    except OSError as exc:
        raise UnreadableInput(os_error_reason(path, exc)) from None
    try:
        return classify(head)
    except InputError as exc:
        raise InputError(f"{path} {exc}") from None


def _stat(target: Path) -> os.stat_result:
    try:
        return target.stat()
    except OSError as exc:
        raise (InputError if exc.errno == errno.ENOENT else UnreadableInput)(os_error_reason(target, exc)) from None


def collect_sources(target: Path) -> tuple[list[Source], list[Skipped], list[Source]]:
    """The readable log files under ``target`` (a file or directory), those skipped (with why;
    ``unread`` when they could not be read at all), and pickles that may be Flight Recorder dumps."""
    mode = _stat(target).st_mode
    if stat.S_ISREG(mode):
        kind = _sniff(target)
        if kind == "pickle":
            return [], [], [source_for_path(target, target.name)]
        source = source_for_path(target, target.name)
        source.encoding = kind
        return [source], [], []
    if not stat.S_ISDIR(mode):
        raise InputError(f"{_not_regular(mode)}: {target}")
    sources: list[Source] = []
    skipped: list[Skipped] = []
    dumps: list[Source] = []

    def unlisted(exc: OSError) -> None:  # a subdirectory os.walk could not list
        name = str(Path(exc.filename).relative_to(target)) if exc.filename else str(target)
        skipped.append(Skipped(name + "/", os_error_reason(exc.filename or target, exc), unread=True))

    for dirpath, dirnames, filenames in os.walk(target, onerror=unlisted):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for filename in sorted(filenames):
            path = Path(dirpath) / filename
            relative = str(path.relative_to(target))
            if filename.startswith("."):
                continue
            try:
                mode = path.stat().st_mode
            except OSError as exc:  # a dangling link or a link loop: meant to be a log, not readable
                dangling = exc.errno == errno.ENOENT and path.is_symlink()
                reason = f"broken symbolic link (its target is missing): {path}" if dangling else os_error_reason(path, exc)
                skipped.append(Skipped(relative, reason, unread=True))
                continue
            why_not = _not_regular(mode)
            if why_not is not None:
                skipped.append(Skipped(relative, why_not))
                continue
            try:
                kind = _sniff(path)
            except UnreadableInput as exc:
                skipped.append(Skipped(relative, str(exc), unread=True))
                continue
            except InputError as exc:
                skipped.append(Skipped(relative, str(exc)))
                continue
            if kind == "pickle":
                dumps.append(source_for_path(path, relative))
            else:
                source = source_for_path(path, relative)
                source.encoding = kind
                sources.append(source)
    if not sources and not dumps:
        detail = f" ({len(skipped)} skipped: {skipped[0].reason})" if skipped else ""
        raise InputError(f"no readable log files in {target}{detail}")
    return sources, skipped, dumps
