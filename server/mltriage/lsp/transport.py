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
import re
from typing import TYPE_CHECKING, Any, BinaryIO

from cattrs import transform_error
from cattrs.errors import BaseValidationError
from lsprotocol.types import ResponseError
from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter
from pygls.protocol import LanguageServerProtocol

from mltriage.lsp.document_sync import DocumentSyncProtocol
from mltriage.lsp.encode import frame
from mltriage.lsp.framing import FrameReader

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


class Dispatcher:
    """Checks each message body and hands the good ones to the pygls protocol."""

    def __init__(self, protocol: LanguageServerProtocol) -> None:
        self.protocol = protocol
        self.shutting_down = False
        self._request_id: Any = None  # the id of the request being dispatched, once known

    def error(self, msg_id: Any, code: int, message: str) -> None:
        self.protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})

    def dispatch(self, body: bytes, reader: FrameReader) -> None:
        """Handle one message body; whatever fails, the message's request (if it is one) is answered."""
        self._request_id = None
        try:
            self._dispatch(body, reader)
        except BrokenPipeError:  # the client is gone: the server ends (`serve_stdio`)
            raise
        except Exception as exc:  # noqa: BLE001 - one bad message must not end the server
            log.exception("could not handle a message: %r", body[:200])
            if self._request_id is not None:
                self.error(self._request_id, INTERNAL_ERROR, f"mltriage internal error: {_short(str(exc))} (details in the server log)")

    def _too_deep(self, body: bytes) -> None:
        data = top_level(body)
        is_request = isinstance(data, dict) and isinstance(data.get("method"), str) and _valid_id(data.get("id"))
        message = f"Invalid request: nested deeper than {MAX_DEPTH} arrays or objects"
        log.error("%s (%s): %r", message, data.get("method") if isinstance(data, dict) else "not an object", body[:200])
        if is_request:
            self.error(data["id"], INVALID_REQUEST, f"{message} ({data['method']})")
        elif not (isinstance(data, dict) and ("method" in data or "id" in data)):
            self.error(None, INVALID_REQUEST, message)  # nothing says what it was: answered with id null

    def _dispatch(self, body: bytes, reader: FrameReader) -> None:
        try:
            data = json.loads(body)
        except RecursionError:
            self._too_deep(body)
            return
        except ValueError as exc:  # also a body that is not UTF-8
            log.error("a message body is not JSON (%s): %r", exc, body[:200])
            if not reader.reread(body):
                self.error(None, PARSE_ERROR, f"Parse error: {exc}")
            return
        if too_deep(data):
            self._too_deep(body)
            return
        problem = shape_problem(data)
        msg_id = data.get("id") if isinstance(data, dict) and _valid_id(data.get("id")) else None
        if problem:
            log.error("invalid JSON-RPC message (%s): %r", problem, body[:200])
            if not (isinstance(data, dict) and "method" not in data and "id" in data):  # a bad response gets no answer
                self.error(msg_id, INVALID_REQUEST, f"Invalid request: {problem}")
            return
        method = data.get("method")
        is_request = method is not None and "id" in data
        self._request_id = msg_id if is_request else None  # answered by `dispatch` if what follows fails
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
        self.protocol.handle_message(message)  # pygls answers its handlers' errors; its own fail in `dispatch`


async def _serve(reader: FrameReader, dispatcher: Dispatcher) -> None:
    while (body := await reader.next_body()) is not None:
        dispatcher.dispatch(body, reader)
    log.info("the client closed the server's input")


def serve_stdio(server: LanguageServer, stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Serve until the input ends or the client sends ``exit``; the process exit code."""
    server.protocol.set_writer(StdoutWriter(stdout))
    code = 0
    try:
        asyncio.run(_serve(FrameReader(stdin), Dispatcher(server.protocol)))
    except BrokenPipeError:
        log.error("the client closed the server's output")
    except SystemExit as exc:  # `exit`: 0 after `shutdown`, 1 without (pygls decides)
        code = exc.code if isinstance(exc.code, int) else 0
    finally:
        server.shutdown()
    return code
