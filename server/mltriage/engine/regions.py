"""Log bytes to UTF-8 text without NUL bytes, the encoding told region by region.

A log is not always one encoding from start to end. A Windows shell appends UTF-16 to a UTF-8 log
(PowerShell 5's ``>>``), a tool writes UTF-32, logrotate's ``copytruncate`` leaves a run of NUL
bytes where the file began (the writer goes on at its old offset), a crashed writer a NUL-padded
tail, a stray NUL lands inside a phrase (``NCCL WA\\0RN``). UTF-8 text holds no NUL byte, and
mostly-ASCII UTF-16/32 text holds one in every other (every 4th..) byte, so the NULs say it all:

- UTF-8 passes through untouched until a NUL byte (plain logs: one ``in`` test per block);
- at a NUL, the bytes around it are looked at (``WINDOW``): a run of 4 or more NULs is padding
  (dropped); NULs where UTF-16 or UTF-32 of either byte order puts them, in most units of the
  window, start a region of that encoding (a byte-order mark before it is dropped); anything else
  is a stray NUL (dropped, so the phrase around it reads whole);
- a UTF-16/32 region lasts until a unit of NULs (U+0000: padding, or text of another encoding) or
  until its units stop looking like it (``end_units`` units in a row without a NUL where it puts
  them: ASCII text read as UTF-16), and then UTF-8 resumes.

Text a region decodes to loses its NUL characters and byte-order marks too. Nothing here depends on
where blocks are cut: a decision that needs bytes past the end of a block waits for the next one.
"""

from __future__ import annotations

import codecs
import enum
import io
import re
from typing import BinaryIO

from mltriage.lazy_pattern import lazy

WINDOW = 256  # bytes looked at after a NUL to tell what follows
MIN_UNITS = 4  # fewer units than this are too few to call an encoding: the NULs are strays


class Wide(enum.Enum):
    """The encodings told by where their NULs fall: (codec, bytes per unit, index of the byte that
    is NUL for ASCII and Latin-1, the byte that holds the character, the byte-order mark)."""

    UTF32BE = ("utf-32-be", 4, 1, 3, b"\x00\x00\xfe\xff")
    UTF16BE = ("utf-16-be", 2, 0, 1, b"\xfe\xff")
    UTF32LE = ("utf-32-le", 4, 2, 0, b"\xff\xfe\x00\x00")
    UTF16LE = ("utf-16-le", 2, 1, 0, b"\xff\xfe")

    def __init__(self, codec: str, unit: int, zero: int, char: int, bom: bytes) -> None:
        self.codec, self.unit, self.zero, self.char, self.bom = codec, unit, zero, char, bom

    def looks_like(self, window: bytes) -> bool:
        """Most units of ``window`` (from a unit start) have their NUL and their character where
        this encoding puts them (a UTF-32 unit's two high bytes are NUL)."""
        units = len(window) // self.unit
        nul = window.find(self.nul)
        while nul != -1 and nul % self.unit:
            nul = window.find(self.nul, nul + 1)
        if nul != -1:  # what follows a unit of NULs is padding or another region: not this one
            units = nul // self.unit
        utf8 = _UTF8_RUN[self.unit].search(window[self.zero : units * self.unit : self.unit])
        if utf8 is not None:  # nor what follows a run of units without their NUL (UTF-8 text)
            units = utf8.start()
        if units < MIN_UNITS:
            return False
        window = window[: units * self.unit]
        zero = window[self.zero :: self.unit].count(0)
        if self.unit == 4:
            zero = min(zero, window[3 - self.char :: 4].count(0))  # the plane byte, NUL below U+10000
        return zero * 2 >= units and units - window[self.char :: self.unit].count(0) >= units * 0.8

    @property
    def nul(self) -> bytes:
        """U+0000 in this encoding: no text holds it, padding (or another encoding) does."""
        return b"\x00" * self.unit

    @property
    def end_units(self) -> int:
        return 64 if self.unit == 2 else 16


_NOT_NUL = lazy(re.compile, rb"[^\x00]")
_END_RUN = {w: re.compile(rb"[^\x00]{%d}" % w.end_units) for w in Wide}
# UTF-8 text read as units of 2 (4) bytes: 8 (4) units in a row without their NUL
_UTF8_RUN = {2: re.compile(rb"[^\x00]{8}"), 4: re.compile(rb"[^\x00]{4}")}
# ... just before the region's end (wide text ends its lines with a newline unit, NUL where it puts one)
_UTF8_BEFORE_END = {2: re.compile(rb"[^\x00]{8,}\Z"), 4: re.compile(rb"[^\x00]{4,}\Z")}
_SHIFTED = lazy(re.compile, rb"\x00{4}")  # 4 units in a row without their character byte: no text


def _candidates(buf: bytes, a: int, b: int, pos: int, first: bool) -> list[tuple[Wide, int]]:
    """Where a wide region may start around the NUL run ``buf[a:b]``: (encoding, first byte). For
    little-endian text the character before the first NUL is the region's first; ``first``: no
    byte came before ``buf[pos]`` (the input's start), so a run there begins big-endian text."""
    run = b - a
    if run >= 4:  # padding: what follows it may be wide text, a big-endian unit's NULs in the run
        # (little-endian first: big-endian text read from its first character byte is the same text)
        return [(Wide.UTF32LE, b), (Wide.UTF16LE, b), (Wide.UTF32BE, b - 3), (Wide.UTF16BE, b - 1)]
    found = []
    if run == 2 and buf[a - 2 : a] == b"\xff\xfe":
        found.append((Wide.UTF32LE, a + 2))
    if run == 2 and buf[b : b + 2] == b"\xfe\xff":
        found.append((Wide.UTF32BE, b + 2))
    before = {1: Wide.UTF16LE, 2: Wide.UTF32LE, 3: Wide.UTF32LE}[run]
    found += [(before, a - (4 - run if before.unit == 4 else 1)), (Wide.UTF32BE if run > 1 else Wide.UTF16BE, a)]
    # a unit whose first byte was already passed on as UTF-8 (an ASCII character: the same text)
    return [(w, s if s >= pos else s + w.unit) for w, s in found if s >= pos or not first]


def decode_all(data: bytes) -> bytes:
    """``data`` (a whole input, or the head of one) as UTF-8 log text."""
    decoder, out = RegionDecoder(io.BytesIO(data)), []
    while piece := decoder.read(len(data) + 1):
        out.append(piece)
    return b"".join(out)


class RegionDecoder:
    """A binary stream read as UTF-8 log text, region by region (see the module's docstring)."""

    def __init__(self, raw: BinaryIO) -> None:
        self._raw = raw
        self._buf = b""  # bytes read and not yet decided on
        self._eof = False
        self._wide: Wide | None = None  # the region's encoding; None: UTF-8
        self._decoder = None
        self._started = False  # bytes were passed on or dropped: the buffer's start is not the input's

    def read(self, size: int = -1) -> bytes:
        size = size if size > 0 else 4 * 1024 * 1024
        while True:
            if not self._buf:
                if self._eof:
                    return b""
                data = self._raw.read(size)
                if not data:
                    self._eof = True
                    return self._flush()
                if self._wide is None and b"\x00" not in data and max(data[-4:]) < 0xFE:
                    self._started = True
                    return data  # plain UTF-8: the common case, untouched
                self._buf = data
            out = self._decode()  # (at the end of the input it decides on all the buffer holds)
            if out:
                return out
            if not self._eof:  # a decision waits for bytes past the buffer's end
                data = self._raw.read(size)
                self._eof = not data
                self._buf += data

    def _flush(self) -> bytes:
        if self._wide is None:
            return b""
        text = self._decoder.decode(b"", final=True)
        self._wide = None
        return _utf8(text)

    def _decode(self) -> bytes:
        """Decide on as much of the buffer as can be decided now; what it decodes to."""
        buf, pos, out, final = self._buf, 0, [], self._eof
        while pos < len(buf):
            if self._wide is not None:
                pos = self._in_wide(buf, pos, final, out)
                if self._wide is not None:
                    break  # the region goes on past what is here
                continue
            a = buf.find(b"\x00", pos)
            if a == -1:
                # (0xFE and 0xFF are no UTF-8: near the end they may begin a byte-order mark)
                end = len(buf) if final or max(buf[-4:]) < 0xFE else max(pos, len(buf) - 4)
                out.append(buf[pos:end])
                pos = end
                break
            m = _NOT_NUL.search(buf, a)
            b = m.start() if m else len(buf)
            if not final and len(buf) - b < WINDOW:  # too little after the NULs to tell: wait for more
                if b == len(buf) and b - a >= 8:
                    # padding reaching the end is dropped as it comes, all but the NULs a big-endian
                    # region may begin with (4: so that what is left still reads as padding)
                    out.append(buf[pos:a])
                    pos = len(buf) - 4
                else:
                    keep = max(pos, a - 4)  # (a region may begin with the bytes before its first NUL)
                    out.append(buf[pos:keep])
                    pos = keep
                break
            for wide, start in _candidates(buf, a, b, pos, first=pos == 0 and not self._started):
                if start + wide.unit <= len(buf) and wide.looks_like(buf[start : start + WINDOW]):
                    cut = start - len(wide.bom) if buf[max(pos, start - len(wide.bom)) : start] == wide.bom else min(a, start)
                    out.append(buf[pos : max(pos, cut)])
                    self._wide, self._decoder = wide, codecs.getincrementaldecoder(wide.codec)(errors="replace")
                    pos = start + len(wide.bom) if buf.startswith(wide.bom, start) else start
                    break
            else:  # padding or strays: dropped
                out.append(buf[pos:a])
                pos = b
        self._buf = buf[pos:]
        self._started = self._started or pos > 0
        return b"".join(out)

    def _in_wide(self, buf: bytes, pos: int, final: bool, out: list[bytes]) -> int:
        """Decode the wide region from ``pos``; the position after what was decoded. The region
        ends (``self._wide`` is None again) at a unit of NULs, where its units stop looking like it
        (UTF-8 text: no NUL where it puts them) or where they are shifted (their character bytes NUL)."""
        wide = self._wide
        unit = wide.unit
        limit = len(buf) - (len(buf) - pos) % unit
        ends = []
        # a NUL unit (U+0000: no text holds it, padding does) or a byte-order mark (a new region)
        for mark in (wide.nul, wide.bom[:unit]):
            at = buf.find(mark, pos, limit)
            while at != -1 and (at - pos) % unit:
                at = buf.find(mark, at + 1, limit)
            if at != -1:
                ends.append(at)
        zeros = buf[pos + wide.zero : limit : unit]
        m = _END_RUN[wide].search(zeros)
        if m is None and final:
            m = _UTF8_BEFORE_END[unit].search(zeros)  # a short UTF-8 tail (the end of input tells it from a CJK run)
        if m is not None:
            ends.append(pos + m.start() * unit)
        m = _SHIFTED.search(buf[pos + wide.char : limit : unit])
        if m is not None:  # the units' bytes are off by one or more (a stray NUL between regions)
            ends.append(pos + m.start() * unit)
        if ends:
            end = min(ends)
            # UTF-8 text between the region and what ended it (padding, the end) is no part of it
            m = _UTF8_BEFORE_END[unit].search(buf[pos + wide.zero : end : unit])
            end = pos + m.start() * unit if m is not None else end
            out.append(_utf8(self._decoder.decode(buf[pos:end], final=True)))
            self._wide = None
            return end
        if final:
            out.append(_utf8(self._decoder.decode(buf[pos:limit], final=True)))
            # a last unit cut short: its bytes as they are (misread byte order at the start leaves one)
            out.append(buf[limit:].replace(b"\x00", b""))
            self._wide = None
            return len(buf)
        # keep the last units: an end (padding, a UTF-8 run) may begin in them
        stop = max(pos, limit - (wide.end_units + 2) * unit)
        out.append(_utf8(self._decoder.decode(buf[pos:stop])))
        return stop


def _utf8(text: str) -> bytes:
    if "\x00" in text or "\ufeff" in text:
        text = text.replace("\x00", "").replace("\ufeff", "")
    return text.encode("utf-8", "replace")
