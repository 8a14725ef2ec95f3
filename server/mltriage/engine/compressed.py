"""Compressed logs (``stderr.log.gz``, logrotate's ``.1.gz``, ``.bz2``, ``.xz``) read as what they hold.

The decompressors are the standard library's, fed in small pieces with a cap on each output, so
memory stays bounded whatever the ratio; concatenated streams (``gzip -c a >> b``) are read one
after the other. A decompression bomb is stopped by the ratio: past ``EXPANSION_FLOOR`` of output,
a stream may give at most ``MAX_EXPANSION`` times the compressed bytes read so far (a real log
compresses 5 to 50 times; gzip of one repeated byte reaches about 1,000). The limit is a function
of the input, never of time. What stops early (a bomb, a stream cut short, corrupt data) is said in
``unread``: the diagnosis is then incomplete. zstd needs Python 3.14's ``compression.zstd``; where
it is missing a ``.zst`` log is reported as not read.
"""

from __future__ import annotations

import enum
import zlib
from typing import BinaryIO

MAX_EXPANSION = 250
EXPANSION_FLOOR = 256 * 1024 * 1024
INPUT_PIECE = 64 * 1024


class Compression(enum.Enum):
    GZIP = ("gzip", b"\x1f\x8b", "zcat")
    BZIP2 = ("bzip2", b"BZh", "bzcat")
    XZ = ("xz", b"\xfd7zXZ\x00", "xzcat")
    ZSTD = ("zstd", b"\x28\xb5\x2f\xfd", "zstdcat")

    def __init__(self, label: str, magic: bytes, cat: str) -> None:
        self.label, self.magic, self.cat = label, magic, cat

    @property
    def readable(self) -> bool:
        return _decompressor(self) is not None


SUFFIXES = (".gz", ".bz2", ".xz", ".zst")  # left off a name before its rank or kind is read from it


def compression_of(head: bytes) -> Compression | None:
    return next((c for c in Compression if head.startswith(c.magic)), None)


def _decompressor(kind: Compression):
    if kind is Compression.GZIP:
        return zlib.decompressobj(wbits=31)
    if kind is Compression.BZIP2:
        import bz2

        return bz2.BZ2Decompressor()
    if kind is Compression.XZ:
        import lzma

        return lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
    try:  # Python >= 3.14
        from compression import zstd  # type: ignore[import-not-found]
    except ImportError:
        return None
    return zstd.ZstdDecompressor()


_ERRORS = (OSError, EOFError, ValueError, zlib.error)


def _lzma_error() -> type[Exception]:
    import lzma  # (imported where used: most runs read no compressed log)

    return lzma.LZMAError


class Decompressed:
    """What a compressed stream holds, read block by block. ``unread``: why it stopped before the
    end of the data, or ``None``."""

    def __init__(self, raw: BinaryIO, kind: Compression) -> None:
        self._raw, self._kind = raw, kind
        self._dec = _decompressor(kind)
        self._errors = _ERRORS + (_lzma_error(),) if kind is Compression.XZ else _ERRORS  # what corrupt data raises
        self._input = b""  # compressed bytes read and not yet given to the decompressor
        self._read_in = self._given_out = 0
        self._done = False
        self.unread: str | None = None

    def _stop(self, why: str | None) -> None:
        self._done, self.unread = True, why

    def _more_input(self) -> bool:
        data = self._raw.read(INPUT_PIECE)
        self._read_in += len(data)
        self._input += data
        return bool(data)

    def _next_stream(self) -> bool:
        """After one stream's end: start the next one (True), or stop at the end of the data."""
        rest, self._input = self._dec.unused_data + self._input, b""
        while not rest.strip(b"\x00"):  # nothing but NUL padding so far (gzip allows it)
            if not self._more_input():
                self._stop(None)
                return False
            rest, self._input = self._input, b""
        rest = rest.lstrip(b"\x00")
        if not rest.startswith(self._kind.magic):
            self._stop(f"the bytes after the end of the {self._kind.label} data are no {self._kind.label} stream: not read")
            return False
        self._dec, self._input = _decompressor(self._kind), rest
        return True

    def read(self, size: int = -1) -> bytes:
        want = size if size > 0 else 4 * 1024 * 1024
        out: list[bytes] = []
        got = 0
        while got < want and not self._done:
            if self._dec.eof:
                if not self._next_stream():
                    break
                continue
            # zlib hands back the input it had no room to use; the others keep it inside
            data, self._input = getattr(self._dec, "unconsumed_tail", b"") + self._input, b""
            try:
                piece = self._dec.decompress(data, want - got)
            except self._errors as exc:
                self._stop(f"the {self._kind.label} data is corrupt part-way ({exc}): what came before it was read")
                break
            bound = max(EXPANSION_FLOOR, MAX_EXPANSION * self._read_in)
            if self._given_out + got + len(piece) > bound:
                piece = piece[: bound - self._given_out - got]
                self._stop(f"decompresses to more than {MAX_EXPANSION} times its compressed size (a decompression "
                           f"bomb?): the first {bound // 2**20:,} MiB were read")
            out.append(piece)
            got += len(piece)
            if not piece and not self._dec.eof and not self._more_input():
                self._stop(f"the {self._kind.label} data ends part-way (cut short while it was written or copied?): "
                           "what came before it was read")
        self._given_out += got
        return b"".join(out)
