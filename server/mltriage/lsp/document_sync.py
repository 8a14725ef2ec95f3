"""Open documents kept as chunks of lines, so that a keystroke costs the edit, not the document.

pygls 2.1 keeps a document as one string and applies a ranged change by re-splitting it with
``str.splitlines`` and joining it again: 0.3-0.4 s per keystroke in a 1-million-line log, and the
split also breaks lines at form feeds, ``\\x1c``-``\\x1e``, NEL and U+2028/9, where the editor does not
(an edit after one of them landed on the wrong line). Here a document is a list of chunks of about
16 K characters, each ending with a line break (except the last; a CRLF is never split), with the
number of line breaks in each: an edit finds its chunk by line (a binary search over the running
counts), resolves its columns in the negotiated position encoding within that chunk, and rebuilds
that chunk alone. Lines break at CRLF, CR and LF only; positions outside the text are clamped as
VS Code clamps them. A diagnosis takes the chunks as they are (`ChunkedText.pieces`); the whole
text is joined only when something asks for it (`ChunkedText.text`, a launch script's source).
"""

from __future__ import annotations

import bisect
import itertools
import logging
from collections.abc import Generator
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.protocol.language_server import LanguageServerProtocol, lsp_method
from pygls.workspace import PositionCodec, TextDocument

log = logging.getLogger(__name__)

UTF8, UTF32 = types.PositionEncodingKind.Utf8, types.PositionEncodingKind.Utf32
CHUNK = 1 << 14  # characters a chunk is cut at (at the next line break after it)
_COUNT = 1 << 12  # characters counted per str.count call while looking for a line in a chunk
_STEP = 256  # below this, breaks are found one by one

Position = tuple[int, int]  # (line, character) in client units


def _breaks(text: str, start: int, end: int, has_cr: bool) -> int:
    found = text.count("\n", start, end)
    if has_cr:
        found += text.count("\r", start, end) - text.count("\r\n", start, end)
    return found


def _next_break(text: str, pos: int, has_cr: bool, limit: int) -> tuple[int, int]:
    """Where the first line break at or after ``pos`` starts and ends; ``(limit, limit)`` if none."""
    lf = text.find("\n", pos, limit)
    lf = limit if lf < 0 else lf
    if has_cr and (cr := text.find("\r", pos, lf)) >= 0:
        return cr, cr + 2 if text.startswith("\n", cr + 1) else cr + 1
    return lf, min(lf + 1, limit)


def _line_start(text: str, line: int, has_cr: bool) -> int | None:
    """Offset where ``line`` (0-based) of ``text`` begins; None past its last line."""
    pos, remaining, size, length = 0, line, _COUNT, len(text)
    while remaining:
        if pos >= length:
            return None
        end = min(pos + size, length)
        if has_cr and text.startswith("\r\n", end - 1):
            end += 1  # a CRLF is one break: never count its halves in two pieces
        found = _breaks(text, pos, end, has_cr)
        if found < remaining:
            remaining, pos = remaining - found, end
        elif size > _STEP:
            size //= 16
        else:
            pos = _next_break(text, pos, has_cr, end)[1]
            remaining -= 1
    return pos


def _ends_line(chunk: str, has_cr: bool) -> bool:
    return chunk.endswith("\n") or (has_cr and chunk.endswith("\r"))


def _cut(text: str, has_cr: bool, size: int = CHUNK) -> list[str]:
    """``text`` (which starts a line) as chunks of about ``size`` characters, each ending a line;
    a line longer than that is one chunk of its own."""
    chunks, at, length = [], 0, len(text)
    while length - at > size:
        cut = _next_break(text, at + size - 1, has_cr, length)[1]
        if has_cr and text.startswith("\n", cut) and text.startswith("\r", cut - 1):
            cut += 1
        chunks.append(text[at:cut])
        at = cut
    if at < length or not chunks:
        chunks.append(text[at:])
    return chunks


def _code_points(line: str, units: int, encoding: str | None) -> int:
    """Code points in ``line`` covered by its first ``units`` client units; a unit count that ends
    inside a character stops before it."""
    prefix = line[: max(0, units)]
    if prefix.isascii() or encoding == UTF32:
        return len(prefix)
    if encoding == UTF8:
        data = prefix.encode("utf-8", "surrogatepass")
        cut = min(units, len(data))
        while cut < len(data) and data[cut] & 0xC0 == 0x80:  # inside a multi-byte sequence
            cut -= 1
        return len(data[:cut].decode("utf-8", "surrogatepass"))
    covered = prefix.encode("utf-16-le", "surrogatepass")[: 2 * units].decode("utf-16-le", "surrogatepass")
    if covered and covered[-1] != prefix[len(covered) - 1]:
        return len(covered) - 1  # it ends with the high half of a surrogate pair
    return len(covered)


class ChunkedText:
    """A document's text as chunks of whole lines; `edit` rebuilds only the chunks it touches."""

    def __init__(self, text: str = "", chunk: int = CHUNK) -> None:
        self.has_cr = "\r" in text  # False: LF is the only break, and one count finds them
        self._size = chunk
        self._chunks = _cut(text, self.has_cr, chunk)
        self._breaks = [_breaks(c, 0, len(c), self.has_cr) for c in self._chunks]
        self._starts: list[int] | None = None  # the line each chunk starts on, made when needed
        self._text: str | None = text  # the joined text, kept until the next edit
        self.length = len(text)

    @classmethod
    def from_pieces(cls, pieces: list[str], chunk: int = CHUNK) -> ChunkedText:
        """A text already in chunks: each piece but the last ends a line, no CRLF is split
        (`large_text` decodes a message's text so)."""
        self = cls.__new__(cls)
        self.has_cr = any("\r" in p for p in pieces)
        self._size = chunk
        self._chunks = list(pieces) or [""]
        self._breaks = [_breaks(c, 0, len(c), self.has_cr) for c in self._chunks]
        self._starts = self._text = None
        self.length = sum(map(len, self._chunks))
        return self

    def text(self) -> str:
        if self._text is None:
            self._text = "".join(self._chunks)
        return self._text

    def pieces(self) -> tuple[str, ...]:
        """The text as it is now, in pieces (a snapshot: later edits replace chunks, never change one)."""
        return tuple(self._chunks)

    @property
    def line_count(self) -> int:
        """Lines as the editor counts them (a text ending with a break has an empty last line)."""
        return sum(self._breaks) + 1

    @property
    def lines_of_text(self) -> int:
        """Lines as ``wc -l`` counts them, plus an unterminated last one."""
        return self.line_count - (not self.length or _ends_line(self._chunks[-1], self.has_cr))

    def _locate(self, position: Position, encoding: str | None) -> tuple[int, int]:
        """(chunk, offset in it) of a position in client units, clamped into the text."""
        line, character = max(0, position[0]), position[1]
        if self._starts is None:
            self._starts = list(itertools.accumulate(self._breaks[:-1], initial=0))
        index = bisect.bisect_right(self._starts, line) - 1
        chunk = self._chunks[index]
        start = _line_start(chunk, line - self._starts[index], self.has_cr)
        if start is None:
            return len(self._chunks) - 1, len(self._chunks[-1])  # past the last line: the end of the text
        end = _next_break(chunk, start, self.has_cr, len(chunk))[0]
        return index, start + _code_points(chunk[start : min(end, start + max(0, character))], character, encoding)

    def edit(self, start: Position, end: Position, new_text: str, encoding: str | None) -> None:
        """Replace the range ``start``-``end`` (a reversed range is taken in order) with ``new_text``."""
        here = self._locate(start, encoding)
        (first, a), (last, b) = sorted((here, here if end == start else self._locate(end, encoding)))
        chunks, has_cr = self._chunks, self.has_cr or "\r" in new_text
        merged = "".join((chunks[first][:a], new_text, chunks[last][b:]))
        breaks = None if has_cr else self._lf_breaks_after(first, a, last, b, new_text)
        low, high = first, last + 1
        if low > 0 and merged.startswith("\n") and chunks[low - 1].endswith("\r"):  # a CR now joined by an LF
            merged, low = chunks[low - 1] + merged, low - 1
        while high < len(chunks) and (not _ends_line(merged, has_cr) or (merged.endswith("\r") and chunks[high].startswith("\n"))):
            merged, high = merged + chunks[high], high + 1
            breaks = None if breaks is None else breaks + self._breaks[high - 1]
        pieces = _cut(merged, has_cr, self._size) if len(merged) > 2 * self._size else [merged]
        if not merged and (low > 0 or high < len(chunks)):
            pieces = []  # nothing left of these chunks, and others remain
        counts = [breaks] if breaks is not None and len(pieces) == 1 else [_breaks(p, 0, len(p), has_cr) for p in pieces]
        same_lines = high - low == len(pieces) == 1 and counts[0] == self._breaks[low]
        self.length += len(merged) - sum(len(c) for c in chunks[low:high])
        chunks[low:high] = pieces
        self.has_cr = has_cr  # from False to True: the text before had no CR, its counts stand
        self._breaks[low:high] = counts
        self._text = None
        if not same_lines:  # typing within a line leaves every chunk's first line where it was
            self._starts = None

    def _lf_breaks_after(self, first: int, a: int, last: int, b: int, new_text: str) -> int:
        """Line breaks of chunks ``first``..``last`` once ``a``..``b`` is replaced, in a text without
        CR (each LF one break, none joining another): those removed are counted, not the chunks."""
        chunks = self._chunks
        if first == last:
            removed = chunks[first].count("\n", a, b)
        else:
            removed = chunks[first].count("\n", a) + sum(self._breaks[first + 1:last]) + chunks[last].count("\n", 0, b)
        return sum(self._breaks[first:last + 1]) - removed + new_text.count("\n")


def apply_change(text: str, start: Position, end: Position, new_text: str, encoding: str | None) -> str:
    """``text`` with one ranged change applied, as a document applies it."""
    chunked = ChunkedText(text)
    chunked.edit(start, end, new_text, encoding)
    return chunked.text()


class LogDocument(TextDocument):
    """pygls's document with its text kept as a `ChunkedText` (pygls's own code reads ``source``)."""

    def __init__(self, uri: str, text: ChunkedText, version: int | None, language_id: str | None, position_codec: PositionCodec) -> None:
        super().__init__(uri, None, version, language_id, position_codec=position_codec)
        self.text = text

    @property
    def source(self) -> str:
        return self.text.text()

    def change(self, change: types.TextDocumentContentChangeEvent, text: str | ChunkedText) -> None:
        """Apply one ``didChange`` change whose text is ``text`` (read off the loop when large)."""
        if isinstance(change, types.TextDocumentContentChangePartial):
            span = change.range
            start, end = (span.start.line, span.start.character), (span.end.line, span.end.character)
            self.text.edit(start, end, text if isinstance(text, str) else text.text(), self.position_codec.encoding)
        else:
            self.text = text if isinstance(text, ChunkedText) else ChunkedText(text)


def text_of(document: TextDocument) -> tuple[tuple[str, ...], int, int]:
    """(pieces, lines of text, characters) of a document's text, without joining it."""
    text = document.text if isinstance(document, LogDocument) else ChunkedText(document.source)  # else: a notebook cell
    return text.pieces(), text.lines_of_text, text.length


class DocumentSyncProtocol(LanguageServerProtocol):
    """Replaces pygls's built-in ``didOpen`` and ``didChange`` (its ``lsp_method``s of those names):
    documents are `LogDocument`s. Makes ``initialize`` settle on UTF-16 positions."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # the texts of the message being handled that were read off the loop (`large_text`), by token
        self.pending_texts: dict[str, ChunkedText] = {}

    def _text(self, text: str) -> str | ChunkedText:
        """``text``, or the text read off the loop that it stands for (it is then a short token)."""
        return self.pending_texts.pop(text, text) if self.pending_texts else text

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Generator[Any, Any, types.InitializeResult]:
        """Positions are always counted in UTF-16, the one encoding every client must accept: pygls
        would take a client's first preference (UTF-8 for some), while the columns the server publishes
        and reads are UTF-16 or code points only (``LanguageServer.utf16``)."""
        general = params.capabilities.general
        if general is not None and general.position_encodings:
            general.position_encodings = [types.PositionEncodingKind.Utf16]
        return (yield from super().lsp_initialize(params))

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> Generator[Any, Any, None]:
        item = params.text_document
        text = self._text(item.text)
        text = text if isinstance(text, ChunkedText) else ChunkedText(text)
        document = LogDocument(item.uri, text, item.version, item.language_id, self.workspace.position_codec)
        self.workspace.text_documents[unquote(item.uri)] = document  # where pygls keeps them, by that key
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_OPEN)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Generator[Any, Any, None]:
        uri = params.text_document.uri
        if unquote(uri) not in self.workspace.text_documents:  # pygls keys them so
            log.warning("didChange for %s, which is not open: ignored", uri)
            return
        document = self.workspace.text_documents[unquote(uri)]
        for change in params.content_changes:
            if isinstance(document, LogDocument):
                document.change(change, self._text(change.text))
            else:  # a notebook cell: pygls's own document
                document.apply_change(change)
        document.version = params.text_document.version
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None
