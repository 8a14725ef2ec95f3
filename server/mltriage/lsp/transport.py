"""JSON-RPC over stdio: every message either reaches pygls or is answered with a clean error.

pygls leaves some malformed requests unanswered (the client waits forever) and answers others with
its own traceback in ``error.data``. Here, before pygls sees a message:

- a body that is not JSON gets Parse error (-32700, id null);
- one that is not a JSON-RPC 2.0 request, notification or response gets Invalid request (-32600);
- a request whose params do not fit its method gets Invalid params (-32602) naming the field;
- a request after ``shutdown`` gets Invalid request (the LSP rule), a notification is logged;

and an internal error reaches the client as one line while its traceback goes to the log (stderr).
Framing (headers, lengths) is `framing.FrameReader`'s job.
"""

from __future__ import annotations

import asyncio
import json
import logging
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

    def error(self, msg_id: Any, code: int, message: str) -> None:
        self.protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})

    def dispatch(self, body: bytes, reader: FrameReader) -> None:
        try:
            data = json.loads(body)
        except ValueError as exc:  # also a body that is not UTF-8
            log.error("a message body is not JSON (%s): %r", exc, body[:200])
            if not reader.reread(body):
                self.error(None, PARSE_ERROR, f"Parse error: {exc}")
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
        try:
            self.protocol.handle_message(message)
        except Exception as exc:  # pygls answers handler errors itself; this is its own dispatch failing
            log.exception("could not handle %s", method or "a response")
            if is_request:
                self.error(msg_id, INTERNAL_ERROR, f"mltriage internal error: {_short(str(exc))} (details in the server log)")


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
