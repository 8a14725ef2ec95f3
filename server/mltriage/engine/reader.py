"""Turn whatever the user hands us into clean, bounded text chunks.

Inputs are a file, a directory of per-rank logs, stdin or an in-memory string. Bytes are read in
large blocks cut at line ends (a line longer than a block is cut into block-sized pieces), so
memory stays bounded whatever the size of the log. One look at an input's head (past a leading run
of NULs, what logrotate's copytruncate leaves) decides what it is (``classify``): log text, a
pickle (maybe a Flight Recorder dump), compressed (gzip, bzip2, xz: read as what it holds, see
``compressed``), or something no log is (an executable, an archive, random bytes), refused or
skipped with a reason that names it. The text itself is decoded region by region (``regions``:
UTF-8, UTF-16/32 of either byte order, NUL runs dropped), CR-only line ends become line ends
(``iter_blocks``), and ANSI colour codes, CR progress bars and invalid UTF-8 are cleaned per line.
A file is read to the size it had when it was opened: a log still being written is never chased.

What could not be read at all (permissions, I/O errors, symlink loops, a compressed stream cut
short, a decompression bomb) is kept apart from what was deliberately not read (binaries, FIFOs):
the first makes a diagnosis incomplete.
"""

from __future__ import annotations

import enum
import errno
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from mltriage.engine.compressed import SUFFIXES, Compression, Decompressed, compression_of
from mltriage.engine.regions import RegionDecoder, decode_all
from mltriage.lazy_pattern import lazy
from mltriage.numbers import parse_int

BLOCK_SIZE = 4 * 1024 * 1024
# pickle protocols 2-5: how a Flight Recorder dump begins (kept here, so that telling one apart from a
# log does not import the dump reader)
PICKLE_MAGIC = (b"\x80\x02", b"\x80\x03", b"\x80\x04", b"\x80\x05")
SNIFF_SIZE = 64 * 1024
STREAM_NUL_SKIP = 16 * 1024 * 1024  # leading NULs a pipe may hold before its head (a file seeks past them)
CR_LINES = 64 * 1024  # a stretch without a line feed this long is CR-ended lines, not one line

# CSI sequences (colours, cursor moves), OSC sequences (titles, VS Code's 633 shell integration)
_ANSI = lazy(re.compile, r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
ANSI_BYTES = lazy(re.compile, _ANSI.pattern.encode("ascii"))  # the same sequences in a block of bytes
_CONTROL = lazy(re.compile, r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


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
    compression: Compression | None = None  # what ``classify`` found: the file is read as what it holds
    start: int = 0  # where its text begins: past a leading run of NULs (copytruncate)


def clean_line(raw: bytes | str) -> str:
    """Decode and strip terminal decoration, keeping what a human would have seen."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "\r" in text:
        # A progress bar rewrites the line with CR; what stays on screen is the last non-empty part.
        parts = [p for p in text.split("\r") if p.strip()]
        text = parts[-1] if parts else ""
    # (isprintable is one C pass and False for every control character: most lines skip the regex)
    if not text.isprintable() and _CONTROL.search(text):
        text = _CONTROL.sub("", text)
    return text


MARGIN_SAMPLE = 40  # non-blank lines a pasted block's shared indentation is read from
_MARGIN_CHARS = b" \t>"  # indentation, and the "> " of a quoted reply (Markdown, e-mail)


def common_margin(block: bytes) -> bytes:
    """The indentation (spaces, tabs and a quote's ``>``) that every one of a source's first non-blank
    lines shares (two at least): a log pasted as an indented block (a Markdown code block) or quoted in a reply is read
    as the log behind it, so a traceback's own indentation still tells its frames from its exception."""
    margin: bytes | None = None
    seen = 0
    for line in block.split(b"\n", 4 * MARGIN_SAMPLE)[: 4 * MARGIN_SAMPLE]:
        body = line.rstrip(b"\r")
        if not body.strip():
            continue
        lead = body[: len(body) - len(body.lstrip(_MARGIN_CHARS))]
        if margin is None:
            margin = lead
        else:
            n = 0
            while n < len(margin) and n < len(lead) and margin[n] == lead[n]:
                n += 1
            margin = margin[:n]
        if not margin:
            return b""
        seen += 1
        if seen >= MARGIN_SAMPLE:
            break
    if margin and seen == 1 and margin.strip() == b">":
        return margin  # a one-line paste quoted in a reply: "> " is a quote's, whatever one line's spaces say
    return margin if margin and seen >= 2 else b""  # one line's indentation is its own (a py-spy frame)


class Kind(enum.Enum):
    TEXT = "text"
    PICKLE = "pickle"  # maybe a Flight Recorder dump


# What a file's first bytes say it is, for the formats a log directory often holds and no log is.
_MAGIC = (
    (b"PK\x03\x04", "a zip archive (unpack it and diagnose the folder)"),
    (b"\x7fELF", "an executable (ELF)"),
    (b"\x89PNG", "a PNG image"),
)


def classify(head: bytes) -> Kind:
    """What an uncompressed input is, from its first bytes (past any leading NULs). Anything but log
    text or a pickle raises ``InputError`` with what it looks like (the caller prefixes its name)."""
    if head[:2] in PICKLE_MAGIC:
        return Kind.PICKLE
    for magic, what in _MAGIC:
        if head.startswith(magic):
            raise InputError(f"is {what}, not a log")
    if looks_binary(decode_all(head) if b"\x00" in head else head):
        raise InputError("looks like binary data, not a log (use a text log or a directory of logs)")
    return Kind.TEXT


def looks_binary(text: bytes) -> bool:
    """True for content no log would contain: mostly undecodable or unprintable bytes (``text`` is
    the head as decoded, NUL-free)."""
    if not text:
        return False
    decoded = text.decode("utf-8", "replace")
    bad = decoded.count("\ufffd")
    sample = decoded[:4096]
    printable = sum(map(str.isprintable, sample)) + sum(map(sample.count, "\n\r\t\x1b"))  # (C loops)
    return bad > len(decoded) // 10 or printable < min(len(decoded), 4096) * 0.7


class _UpTo:
    """A file read up to the size it had when it was opened: a log still being written is read to
    that point, never chased (at 20 MB/s a reader would never reach its end)."""

    def __init__(self, fh: BinaryIO, size: int) -> None:
        self._fh, self._size = fh, size
        self._left = size - fh.tell()

    def read(self, size: int = -1) -> bytes:
        if self._left <= 0:
            return b""
        data = self._fh.read(self._left if size < 0 else min(size, self._left))
        self._left -= len(data)
        return data

    def grown(self) -> str | None:
        """What to say when the file grew while it was read."""
        try:
            now = os.fstat(self._fh.fileno()).st_size
        except OSError:
            return None
        if now <= self._size:
            return None
        return (f"was still growing while it was read: read to its size when opened ({self._size:,} bytes), "
                f"{now - self._size:,} bytes written since were not (run mltriage again for them)")


class LogStream:
    """One input as the scanner reads it: UTF-8 text without NUL bytes, whatever its compression and
    encodings; ``unread()``: why part of it could not be read (the diagnosis is then incomplete);
    ``warnings()``: what else the reading found (a file still growing)."""

    def __init__(self, raw: BinaryIO, decompressed: Decompressed | None = None, limit: _UpTo | None = None,
                 closes: BinaryIO | None = None) -> None:
        self._text = RegionDecoder(raw)
        self._decompressed, self._limit, self._closes = decompressed, limit, closes

    def read(self, size: int = -1) -> bytes:
        return self._text.read(size)

    def unread(self) -> list[str]:
        return [self._decompressed.unread] if self._decompressed is not None and self._decompressed.unread else []

    def warnings(self) -> list[str]:
        grown = self._limit.grown() if self._limit is not None else None
        return [grown] if grown else []

    def close(self) -> None:
        if self._closes is not None:
            self._closes.close()

    def __enter__(self) -> LogStream:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


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


def _stream_head(stream: BinaryIO) -> bytes:
    """A stream's first ``SNIFF_SIZE`` bytes past a leading run of NULs (dropped: no text; up to
    ``STREAM_NUL_SKIP`` of them, after which the text decoder drops the rest as it reads)."""
    skipped = 0
    while True:
        head = stream.read(SNIFF_SIZE) or b""
        text = head.lstrip(b"\x00")
        if text or not head or skipped >= STREAM_NUL_SKIP:
            return text
        skipped += len(head)


def _uncompressed(kind: Compression, name: str) -> None:
    if not kind.readable:
        raise UnreadableInput(f"{name} is {kind.label}-compressed data and this Python has no {kind.label} decompressor "
                              f"(decompress it first: {kind.cat} FILE | mltriage diagnose -)")


def open_stream(stream: BinaryIO, name: str) -> LogStream:
    """A stream (stdin, a pipe) classified like a file: its log text, or ``InputError``."""
    try:
        head = _stream_head(stream)
        decompressed = None
        kind = compression_of(head)
        if kind is not None:
            _uncompressed(kind, name)
            decompressed = Decompressed(_HeadThenRest(head, stream), kind)  # type: ignore[arg-type]
            stream, head = decompressed, _stream_head(decompressed)  # type: ignore[assignment]
            if compression_of(head) is not None:
                raise InputError(f"{name} holds {kind.label}-compressed data that is compressed again: decompress it first")
    except OSError as exc:
        raise UnreadableInput(os_error_reason(name, exc)) from None
    try:
        if classify(head) is Kind.PICKLE:
            raise InputError("is a pickle: give Flight Recorder dumps as files or a directory, not on a pipe")
    except InputError as exc:
        raise InputError(f"{name} {exc}") from None
    return LogStream(_HeadThenRest(head, stream), decompressed)  # type: ignore[arg-type]


def open_log(source: Source) -> LogStream:
    """A file found by ``collect_sources``, read to the size it had when opened (``OSError`` if it
    cannot be opened)."""
    fh = open(source.path, "rb")
    try:
        size = os.fstat(fh.fileno()).st_size
        if source.compression is None:
            fh.seek(source.start)
        limit = _UpTo(fh, size)
        decompressed = Decompressed(limit, source.compression) if source.compression is not None else None
    except OSError:
        fh.close()
        raise
    return LogStream(decompressed or limit, decompressed, limit, closes=fh)  # type: ignore[arg-type]


def _cr_line_ends(data: bytes, continuing: bool) -> tuple[bytes, bool]:
    """``data`` with the bare CRs of CR-ended stretches (``CR_LINES`` bytes or more without a line
    feed; with ``continuing``, also the first stretch) made line feeds; and whether its last stretch
    is one (the next block's first stretch continues it)."""
    n, half = len(data), CR_LINES // 2
    spans: list[tuple[int, int]] = []
    at = 0
    if continuing:
        lf = data.find(b"\n")
        at = n if lf == -1 else lf
        spans.append((0, at))
    # a stretch of CR_LINES bytes without a line feed holds a whole aligned window of half that
    k = -(-at // half) * half
    while k + half <= n:
        if data.find(b"\n", k, k + half) != -1:
            k += half
            continue
        a = data.rfind(b"\n", 0, k) + 1
        b = data.find(b"\n", k + half)
        b = n if b == -1 else b
        if b - a >= CR_LINES and (not spans or a >= spans[-1][1]):
            spans.append((a, b))
        k = (b // half + 1) * half
    if not spans:
        return data, False
    pieces, done = [], 0
    for a, b in spans:
        # a CR before the line feed that ends the stretch is a CRLF; one at the very end of the block
        # may be one too (its LF in the next block): both stay
        stop = b - 1 if data[b - 1 : b] == b"\r" else b
        pieces += [data[done:a], data[a:stop].replace(b"\r", b"\n")]
        done = stop
    pieces.append(data[done:])
    return b"".join(pieces), spans[-1][1] == n


def iter_blocks(stream: BinaryIO, block_size: int = BLOCK_SIZE) -> Iterator[bytes]:
    """Yield byte blocks that end at a line end (except a line longer than one block). A bare CR is
    a line end in an input without any line feed and in a stretch of ``CR_LINES`` bytes or more
    without one (CR-ended lines: old Mac tools, some Windows captures); elsewhere it is a progress
    bar's rewrite within its line, as a terminal shows it (``clean_line`` keeps the last)."""
    carry = b""
    cr_lines = False  # the carry continues a CR-ended stretch
    seen_lf = False
    while True:
        data = stream.read(block_size)
        if not data:
            if carry:
                if (cr_lines or not seen_lf) and b"\r" in carry:
                    carry = carry.replace(b"\r", b"\n")
                yield carry
            return
        data = carry + data if carry else data
        if not seen_lf:
            seen_lf = b"\n" in data
        if b"\r" in data:
            data, cr_lines = _cr_line_ends(data, cr_lines)
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
_HOST_IN_NAME = lazy(re.compile, r"(?:^|[/_.-])(?:node|host)[_-]?([A-Za-z0-9][\w-]{0,62}?)(?:[/_.]|$)", re.IGNORECASE)
_LOG_SUFFIXES = {".log", ".txt", ".out", ".err", ".json", ""}


def source_for_path(path: Path, relative: str) -> Source:
    rank = host = None
    for suffix in SUFFIXES:  # stderr.log.gz names a rank's stderr.log
        relative = relative.removesuffix(suffix)
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


def _text_start(fh: BinaryIO) -> int:
    """Where a file's text begins: past a leading run of NULs (logrotate's copytruncate leaves one
    as long as the log was; the hole it usually is is skipped without being read)."""
    pos = 0
    while True:
        try:
            pos = os.lseek(fh.fileno(), pos, os.SEEK_DATA)
        except OSError:  # no data past pos (ENXIO), or no SEEK_DATA here: read on
            pass
        fh.seek(pos)
        chunk = fh.read(1024 * 1024)
        text = chunk.lstrip(b"\x00")
        if text or not chunk:
            return pos + len(chunk) - len(text)
        pos += len(chunk)


def _sniff(path: Path) -> tuple[Kind, Compression | None, int]:
    """One look at a file's head decides what it is: (what it is, its compression, where its text
    begins). ``UnreadableInput`` if it cannot be read, ``InputError`` for no log, with the reason."""
    try:
        with open(path, "rb") as fh:
            start = _text_start(fh)
            fh.seek(start)
            head = fh.read(SNIFF_SIZE)
            kind = compression_of(head)
            if kind is not None:
                _uncompressed(kind, str(path))
                fh.seek(0)
                inner = Decompressed(fh, kind)
                head = _stream_head(inner)
                if not head and inner.unread:
                    raise UnreadableInput(f"{path}: {inner.unread}")
                if compression_of(head) is not None:
                    raise InputError(f"{path} holds {kind.label}-compressed data that is compressed again: decompress it first")
                start = 0
            elif not head and start:
                raise InputError(f"{path} holds only NUL bytes: no text, not a log")
    except IsADirectoryError:
        raise InputError(f"is a directory: {path}") from None
    except OSError as exc:
        raise UnreadableInput(os_error_reason(path, exc)) from None
    try:
        what = classify(head)
    except InputError as exc:
        raise InputError(f"{path} {exc}") from None
    if what is Kind.PICKLE and kind is not None:
        raise UnreadableInput(f"{path} is a {kind.label}-compressed pickle (decompress it to read it as a Flight Recorder dump)")
    return what, kind, start


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
        what, compression, start = _sniff(target)
        source = source_for_path(target, target.name)
        if what is Kind.PICKLE:
            return [], [], [source]
        source.compression, source.start = compression, start
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
                what, compression, start = _sniff(path)
            except UnreadableInput as exc:
                skipped.append(Skipped(relative, str(exc), unread=True))
                continue
            except InputError as exc:
                skipped.append(Skipped(relative, str(exc)))
                continue
            source = source_for_path(path, relative)
            if what is Kind.PICKLE:
                dumps.append(source)
            else:
                source.compression, source.start = compression, start
                sources.append(source)
    if not sources and not dumps:
        detail = f" ({len(skipped)} skipped: {skipped[0].reason})" if skipped else ""
        raise InputError(f"no readable log files in {target}{detail}")
    return sources, skipped, dumps
