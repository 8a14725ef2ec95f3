"""JSON-RPC over stdio: every message either reaches pygls or is answered with a clean error.

pygls leaves some malformed requests unanswered (the client waits forever) and answers others with
its own traceback in ``error.data``. Here, before pygls sees a message:

- a body that is not JSON gets Parse error (-32700, id null);
- one that is not a JSON-RPC 2.0 request, notification or response gets Invalid request (-32600);
- a request whose params do not fit its method gets Invalid params (-32602) naming the field;
- a request after ``shutdown`` gets Invalid request (the LSP rule), a notification is logged;
- a message nested deeper than `MAX_DEPTH` gets Invalid request with its id when one can be found
  (``json`` raises RecursionError near 1,000 levels, and deep values would recurse in cattrs and in
  the handlers: 2 KB of brackets ended the process);

and an internal error reaches the client as one line while its traceback goes to the log (stderr).
Whatever goes wrong with one message costs that message only: the loop serves the next.
Framing (headers, lengths) is `framing.FrameReader`'s job.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO

from cattrs import transform_error
from cattrs.errors import BaseValidationError
from lsprotocol.types import ResponseError
from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter
from pygls.protocol import LanguageServerProtocol

from mltriage.lsp.document_sync import DocumentSyncProtocol
from mltriage.lsp.encode import frame
from mltriage.lsp.framing import DaemonThread, FrameReader
from mltriage.lsp.large_text import LARGE_BODY, Prepared, adopt, prepare

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INTERNAL_ERROR = -32603
_MAX_MESSAGE = 300
# LSP's own messages nest about 10 levels (capabilities, a code action's diagnostics and their data)
MAX_DEPTH = 64
_ID_SCAN_LIMIT = 1_000_000  # brackets and quotes looked at to find a too-deep message's id


class EncodedJSON(bytes):
    """A request's result already encoded as JSON (by the engine process): sent as it is."""


class MltriageProtocol(DocumentSyncProtocol):
    def _send_response(self, msg_id: Any, result: Any = None, error: ResponseError | None = None) -> None:
        if error is None and isinstance(result, EncodedJSON):
            self._result_types.pop(msg_id, None)
            head = json.dumps({"jsonrpc": "2.0", "id": msg_id}).encode()[:-1]  # without its closing brace
            send_encoded(self, frame(head + b', "result": ' + result + b"}"))
            return
        if error is not None and isinstance(error.data, dict) and "traceback" in error.data:
            # pygls logged the traceback where it caught the exception; the client gets one line
            error = ResponseError(code=error.code, message=f"mltriage internal error: {_short(error.message)} (details in the server log)")
        super()._send_response(msg_id, result, error)


def send_encoded(protocol: LanguageServerProtocol, message: bytes) -> None:
    """Write an encoded message (`encode.encode_message`) on the event loop, between pygls's own writes."""
    if protocol.writer is not None:
        protocol.writer.write(message)


def _short(text: str) -> str:
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 1] + "…"


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def shape_problem(data: Any) -> str:
    """What keeps ``data`` from being a JSON-RPC 2.0 message, or "" when nothing does."""
    if not isinstance(data, dict):
        return f"a message must be a JSON object, not {type(data).__name__} (batches are not part of LSP)"
    if data.get("jsonrpc") != "2.0":
        return "'jsonrpc' must be \"2.0\""
    if "method" in data and not isinstance(data["method"], str):
        return "'method' must be a string"
    if "method" in data and "id" in data and not _valid_id(data["id"]):
        return "a request's 'id' must be an integer or a string"
    if "method" not in data and "id" not in data:
        return "a message needs a 'method' (request, notification) or an 'id' (response)"
    if data.get("params") is not None and not isinstance(data["params"], (dict, list)):
        return "'params' must be an object or an array"
    return ""


def too_deep(data: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``data`` (parsed JSON) nests more than ``limit`` arrays and objects; no recursion."""
    stack = [(data, 1)] if isinstance(data, (dict, list)) else []
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            return True
        for item in value.values() if isinstance(value, dict) else value:
            if isinstance(item, (dict, list)):
                stack.append((item, depth + 1))
    return False


_STRUCTURE = re.compile(rb'[][{}"\\]')


def top_level(body: bytes) -> Any:
    """A message too deep to parse, with each container inside its top-level object replaced by
    null: enough to read its ``id`` and ``method``. None when that cannot be made out (not an object,
    not JSON, or more than `_ID_SCAN_LIMIT` brackets and quotes to look at)."""
    kept, depth, in_string, skip_to, cut = bytearray(), 0, False, 0, 0
    for seen, found in enumerate(_STRUCTURE.finditer(body)):
        at = found.start()
        if seen > _ID_SCAN_LIMIT:
            return None
        if at < skip_to:  # the character after a backslash
            continue
        char = body[at]
        if char == 0x5C:  # backslash
            skip_to = at + 2
        elif char == 0x22:  # quote
            in_string = not in_string
        elif in_string:
            continue
        elif char in b"[{":
            depth += 1
            if depth == 2:
                kept += body[cut:at] + b"null"
        else:
            depth -= 1
            if depth == 1:
                cut = at + 1
            elif depth == 0:
                kept += body[cut:]
                cut = len(body)
                break
    if depth != 0 or cut != len(body):
        return None
    try:
        data = json.loads(kept)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def describe(exc: BaseException | None) -> str:
    """A validation error as 'what @ where' lines, without a traceback."""
    if isinstance(exc, BaseValidationError):
        return _short("; ".join(transform_error(exc, path="$")))
    return _short(f"{type(exc).__name__}: {exc}") if exc else "unknown error"


_HANDLED = object()  # `Dispatcher.parse`: the body was answered (or re-read) already
# what a hover may be answered before: none of them changes what a hover reads (a finished diagnosis);
# didClose does (it drops the document's), so a hover waits for it
_DOCUMENT_NOTIFICATIONS = frozenset({"textDocument/didOpen", "textDocument/didChange", "textDocument/didSave"})


class Dispatcher:
    """Checks each message body and hands the good ones to the pygls protocol."""

    def __init__(self, protocol: LanguageServerProtocol) -> None:
        self.protocol = protocol
        self.shutting_down = False
        self._request_id: Any = None  # the id of the request being dispatched, once known

    def error(self, msg_id: Any, code: int, message: str) -> None:
        self.protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})

    def _guarded(self, body: bytes, call: Any, *args: Any) -> Any:
        """``call(*args)``; whatever fails, the message's request (if it is one) is answered."""
        self._request_id = None
        try:
            return call(*args)
        except BrokenPipeError:  # the client is gone: the server ends (`serve_stdio`)
            raise
        except Exception as exc:  # noqa: BLE001 - one bad message must not end the server
            log.exception("could not handle a message: %r", bytes(body[:200]))
            if self._request_id is not None:
                self.error(self._request_id, INTERNAL_ERROR, f"mltriage internal error: {_short(str(exc))} (details in the server log)")
            return _HANDLED
        finally:
            self.protocol.pending_texts.clear()  # a text no handler took is not kept

    def dispatch(self, body: bytes, reader: FrameReader, prepared: Prepared | None = None) -> None:
        """Handle one message body (``prepared``: its document texts already read, `large_text`)."""
        data = adopt(prepared) if prepared is not None else None
        if data is not None:
            self.handle(data, body, prepared.texts)
        elif (data := self.parse(body, reader)) is not _HANDLED:
            self.handle(data, body)

    def parse(self, body: bytes, reader: FrameReader) -> Any:
        """The message in ``body``, or `_HANDLED` when it is not one (answered, or read again)."""
        return self._guarded(body, self._parse, body, reader)

    def handle(self, data: Any, body: bytes, texts: dict[str, Any] | None = None) -> None:
        """Hand a parsed message to pygls (``texts``: its document texts read off the loop)."""
        if texts:
            self.protocol.pending_texts.update(texts)
        self._guarded(body, self._handle, data, body)

    def _too_deep(self, body: bytes) -> None:
        data = top_level(body)
        is_request = isinstance(data, dict) and isinstance(data.get("method"), str) and _valid_id(data.get("id"))
        message = f"Invalid request: nested deeper than {MAX_DEPTH} arrays or objects"
        log.error("%s (%s): %r", message, data.get("method") if isinstance(data, dict) else "not an object", bytes(body[:200]))
        if is_request:
            self.error(data["id"], INVALID_REQUEST, f"{message} ({data['method']})")
        elif not (isinstance(data, dict) and ("method" in data or "id" in data)):
            self.error(None, INVALID_REQUEST, message)  # nothing says what it was: answered with id null

    def _parse(self, body: bytes, reader: FrameReader) -> Any:
        try:
            data = json.loads(body)
        except RecursionError:
            self._too_deep(body)
            return _HANDLED
        except ValueError as exc:  # also a body that is not UTF-8
            log.error("a message body is not JSON (%s): %r", exc, bytes(body[:200]))
            if not reader.reread(body):
                self.error(None, PARSE_ERROR, f"Parse error: {exc}")
            return _HANDLED
        if too_deep(data):
            self._too_deep(body)
            return _HANDLED
        return data

    def _handle(self, data: Any, body: bytes) -> None:
        problem = shape_problem(data)
        msg_id = data.get("id") if isinstance(data, dict) and _valid_id(data.get("id")) else None
        if problem:
            log.error("invalid JSON-RPC message (%s): %r", problem, bytes(body[:200]))
            if not (isinstance(data, dict) and "method" not in data and "id" in data):  # a bad response gets no answer
                self.error(msg_id, INVALID_REQUEST, f"Invalid request: {problem}")
            return
        method = data.get("method")
        is_request = method is not None and "id" in data
        self._request_id = msg_id if is_request else None  # answered by `_guarded` if what follows fails
        if self.shutting_down and method is not None and method != "exit":
            if is_request:
                self.error(msg_id, INVALID_REQUEST, f"Invalid request: the server is shutting down; '{method}' is refused, only 'exit' is accepted")
            else:
                log.warning("ignored the %s notification after shutdown", method)
            return
        if method is not None and "params" not in data:
            data["params"] = None  # JSON-RPC makes params optional; pygls's message types need the key
        try:
            message = self.protocol.structure_message(data)
        except JsonRpcException as exc:
            detail = describe(exc.__cause__)
            if is_request:
                self.error(msg_id, exc.code, f"{exc.message} for {method}: {detail}")
            else:
                log.error("ignored a %s message: %s: %s", method or "response", exc.message, detail)
            return
        if is_request and method == "shutdown":
            self.shutting_down = True
        self.protocol.handle_message(message)  # pygls answers its handlers' errors; its own fail in `_guarded`


def is_document_notification(data: Any) -> bool:
    return isinstance(data, dict) and data.get("method") in _DOCUMENT_NOTIFICATIONS and "id" not in data


def is_hover(data: Any) -> bool:
    return isinstance(data, dict) and data.get("method") == "textDocument/hover" and "id" in data


_CLAIMS_TEXT = re.compile(rb'"method"\s*:\s*"textDocument/did(?:Open|Change)"')


def claims_text(body: bytes | bytearray) -> bool:
    """Whether a large body says, where a message's method stands (its start or its end), that it
    is a didOpen or didChange: then its text is read off the loop (`large_text`)."""
    return bool(_CLAIMS_TEXT.search(body, 0, 512) or _CLAIMS_TEXT.search(body, max(0, len(body) - 512)))


@dataclass
class _Incoming:
    body: bytes | bytearray
    data: Any = None  # parsed on arrival (small bodies)
    prepared: asyncio.Future[Prepared | None] | None = None  # being read on the text thread (large ones)
    document: bool = False  # a document notification: what a hover reads does not depend on it


async def _read(reader: FrameReader, dispatcher: Dispatcher, inbox: deque[_Incoming | None], arrived: asyncio.Event) -> None:
    """Read messages as they arrive into ``inbox`` (None at the end). A large didOpen or didChange has
    its text decoded on a thread of its own (`large_text`), and reading goes on meanwhile. A hover
    behind nothing but document notifications is answered at once: it reads only what finished
    diagnoses found, which no document message changes (a diagnosis ends on its own time anyway)."""
    texts = DaemonThread("mltriage-text")
    try:
        while (body := await reader.next_body()) is not None:
            if len(body) >= LARGE_BODY:
                claims = claims_text(body)
                prepared = texts.run(prepare, body) if claims else None
                inbox.append(_Incoming(body, prepared=prepared, document=claims))
            elif (data := dispatcher.parse(body, reader)) is _HANDLED:
                continue
            elif is_hover(data) and all(item is not None and item.document for item in inbox):
                dispatcher.handle(data, body)
                continue
            else:
                inbox.append(_Incoming(body, data=data, document=is_document_notification(data)))
            arrived.set()
    finally:
        inbox.append(None)
        arrived.set()


async def _serve(reader: FrameReader, dispatcher: Dispatcher) -> None:
    """Handle the messages in the order they came (but for the hovers `_read` answers)."""
    inbox: deque[_Incoming | None] = deque()
    arrived = asyncio.Event()
    reading = asyncio.ensure_future(_read(reader, dispatcher, inbox, arrived))
    try:
        while True:
            if not inbox:
                arrived.clear()
                await arrived.wait()
                continue
            item = inbox[0]
            if item is None:
                break
            prepared = None
            if item.prepared is not None:
                try:
                    prepared = await item.prepared
                except Exception:  # noqa: BLE001 - then the body is parsed whole, as any other
                    log.exception("could not read a large message's text in pieces")
            inbox.popleft()
            if item.prepared is None and item.data is not None:
                dispatcher.handle(item.data, item.body)
            else:
                dispatcher.dispatch(item.body, reader, prepared)
    finally:
        if not reading.done():
            reading.cancel()
    await reading  # its own error (a closed output), if it had one
    log.info("the client closed the server's input")


def _unbuffered(stream: BinaryIO) -> BinaryIO:
    """The stream's file without Python's buffer: the reader thread, blocked in a read when the
    server exits, would hold the buffer's lock, and the interpreter aborts at exit on that lock."""
    try:
        return open(os.dup(stream.fileno()), "rb", buffering=0)  # noqa: SIM115 - lives as long as the server
    except (AttributeError, OSError, ValueError):  # not a file (a test's BytesIO)
        return stream


def serve_stdio(server: LanguageServer, stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Serve until the input ends or the client sends ``exit``; the process exit code."""
    server.protocol.set_writer(StdoutWriter(stdout))
    code = 0
    try:
        asyncio.run(_serve(FrameReader(_unbuffered(stdin)), Dispatcher(server.protocol)))
    except BrokenPipeError:
        log.error("the client closed the server's output")
    except SystemExit as exc:  # `exit`: 0 after `shutdown`, 1 without (pygls decides)
        code = exc.code if isinstance(exc.code, int) else 0
    finally:
        server.shutdown()
    return code
