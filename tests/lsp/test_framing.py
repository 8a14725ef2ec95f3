"""Malformed input on the wire, written as raw bytes to a real `python -m mltriage.server` over stdio:
the server logs what was wrong, answers what it can with a clean JSON-RPC error (never a Python
traceback) and keeps answering the messages that follow."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from conftest import server_env
from helpers import RawServer

OK_REQUEST = {"jsonrpc": "2.0", "method": "workspace/executeCommand", "params": {"command": "mltriage.launchScripts", "arguments": []}}


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class Wire(RawServer):
    """RawServer plus raw writes and a drained stderr (a full pipe would block the server)."""

    @classmethod
    async def open(cls) -> "Wire":
        server = await cls.start(sys.executable, "-m", "mltriage.server", env=server_env())
        server.log = bytearray()
        server._drain = asyncio.ensure_future(server._read_stderr())
        await server.initialize()
        return server

    async def _read_stderr(self) -> None:
        while chunk := await self.process.stderr.read(65536):
            self.log += chunk

    def write(self, raw: bytes) -> None:
        self.process.stdin.write(raw)

    async def answer(self, message: dict, timeout: float = 20) -> dict:
        self._next += 1
        self.write(frame(json.dumps({**message, "id": self._next}).encode()))
        return await asyncio.wait_for(self.receive(lambda m: m.get("id") == self._next and "method" not in m), timeout)

    async def still_answers(self) -> None:
        answer = await self.answer(OK_REQUEST)
        assert answer.get("result") == [], answer

    async def close(self) -> int:
        try:
            return await self.stop()
        finally:
            self._drain.cancel()

    def stderr_text(self) -> str:
        return self.log.decode(errors="replace")


def assert_clean(error: dict) -> None:
    assert set(error) <= {"code", "message"}, error  # no `data` carrying a traceback
    assert "Traceback" not in error["message"] and "File \"" not in error["message"], error
    assert "\n" not in error["message"], error


BAD_HEADERS = {
    "missing": b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n",
    "non-numeric": b"Content-Length: abc\r\n\r\n",
    "negative": b"Content-Length: -12\r\n\r\n",
    "over the limit": b"Content-Length: 99999999999999\r\n\r\n",
    "superscript digit": "Content-Length: ²\r\n\r\n".encode(),
    "empty": b"\r\n\r\n",
}


async def test_a_bad_header_costs_only_its_own_message():
    server = await Wire.open()
    try:
        for name, header in BAD_HEADERS.items():
            lost = json.dumps({"jsonrpc": "2.0", "id": f"lost-{name}", "method": "shutdown"}).encode()
            server.write(header + lost)
            await server.still_answers()
        # bytes that are no header at all, then a good message right after them
        server.write(b"\x00\xff garbage without a blank line " * 2000)
        await server.still_answers()
        assert await server.close() == 0  # the lost `shutdown`s were never run: this one is the first
    finally:
        if server.process.returncode is None:
            server.process.kill()
    log = server.stderr_text()
    assert log.count("skipped a message with a bad header") >= len(BAD_HEADERS), log[-3000:]
    assert "no Content-Length header" in log and "'abc' is not a non-negative whole number" in log
    assert "'-12' is not a non-negative whole number" in log and "over the 1,073,741,824-byte limit" in log


async def test_a_length_longer_than_its_body_recovers_at_the_next_header():
    server = await Wire.open()
    try:
        server.write(b"Content-Length: 400\r\n\r\n{}")  # swallows the next message(s) as its body
        for _ in range(8):  # (a client that sends nothing more waits: the length is what it said)
            server.write(frame(json.dumps({"jsonrpc": "2.0", "method": "$/noop", "params": {}}).encode()))
        await server.still_answers()
        assert await server.close() == 0
    finally:
        if server.process.returncode is None:
            server.process.kill()
    assert "held a Content-Length header" in server.stderr_text()


MALFORMED = [
    ("not JSON", b"{not json", -32700),
    ("not UTF-8", b'{"jsonrpc": "2.0", "id": 1, "method": "x\xff"}', -32700),
    ("a batch", b"[1, 2]", -32600),
    ("a number", b"42", -32600),
    ("no jsonrpc", json.dumps({"id": 5, "method": "textDocument/hover", "params": {}}).encode(), -32600),
    ("jsonrpc 1.0", json.dumps({"jsonrpc": "1.0", "id": 6, "method": "shutdown"}).encode(), -32600),
    ("object id", json.dumps({"jsonrpc": "2.0", "id": {"x": 1}, "method": "shutdown"}).encode(), -32600),
    ("method not a string", json.dumps({"jsonrpc": "2.0", "id": 7, "method": 3}).encode(), -32600),
    ("params a string", json.dumps({"jsonrpc": "2.0", "id": 8, "method": "textDocument/hover", "params": "x"}).encode(), -32600),
    ("wrong param types", json.dumps({"jsonrpc": "2.0", "id": 9, "method": "textDocument/hover",
                                      "params": {"textDocument": 5, "position": {"line": "a"}}}).encode(), -32602),
    ("no params", json.dumps({"jsonrpc": "2.0", "id": 10, "method": "textDocument/hover"}).encode(), -32602),
    ("unknown method", json.dumps({"jsonrpc": "2.0", "id": 11, "method": "mltriage/nothing"}).encode(), -32601),
    ("unknown command", json.dumps({"jsonrpc": "2.0", "id": 12, "method": "workspace/executeCommand",
                                    "params": {"command": "nope", "arguments": []}}).encode(), -32602),
    ("command arguments not a list", json.dumps({"jsonrpc": "2.0", "id": 13, "method": "workspace/executeCommand",
                                                 "params": {"command": "mltriage.diagnoseText", "arguments": "text"}}).encode(), -32602),
    ("explain without a signature", json.dumps({"jsonrpc": "2.0", "id": 14, "method": "workspace/executeCommand",
                                                "params": {"command": "mltriage.explain", "arguments": [{"a": 1}]}}).encode(), -32602),
    ("a probe report nested 100,000 deep", json.dumps({"jsonrpc": "2.0", "id": 17, "method": "workspace/executeCommand", "params": {
        "command": "mltriage.probeView", "arguments": [{"text": "[" * 100_000 + "]" * 100_000}]}}).encode(), -32602),
    ("resolve with data missing its fields", json.dumps({"jsonrpc": "2.0", "id": 15, "method": "codeAction/resolve",
                                                         "params": {"title": "x", "data": {"script": "file:///x.sh"}}}).encode(), None),
    ("code action whose diagnostic data has the wrong types", json.dumps({"jsonrpc": "2.0", "id": 16, "method": "textDocument/codeAction", "params": {
        "textDocument": {"uri": "file:///a.log"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
        "context": {"diagnostics": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                                     "message": "m", "source": "mltriage", "data": {"signature": "x", "env": [1, 2], "facts": "z"}}]}}}).encode(), None),
]


@pytest.mark.parametrize("body,code", [(body, code) for _, body, code in MALFORMED], ids=[name for name, _, _ in MALFORMED])
async def test_a_malformed_message_gets_a_clean_error_and_the_server_goes_on(body: bytes, code: int | None):
    server = await Wire.open()
    try:
        server.write(frame(body))
        error_answer = await asyncio.wait_for(server.receive(lambda m: "error" in m), 20)
        error = error_answer["error"]
        assert_clean(error)
        if code is not None:
            assert error["code"] == code, error
        else:  # the handler failed on data it did not expect: an error, in one line, not a traceback
            assert error["code"] in (-32602, -32603), error
        sent = json.loads(body) if code not in (-32700,) and body.startswith(b"{") else None
        expected_id = sent.get("id") if isinstance(sent, dict) and isinstance(sent.get("id"), (int, str)) else None
        assert error_answer["id"] == expected_id, error_answer
        await server.still_answers()
        assert await server.close() == 0
    finally:
        if server.process.returncode is None:
            server.process.kill()


async def test_requests_after_shutdown_are_refused_and_exit_ends_the_process():
    server = await Wire.open()
    try:
        assert (await server.answer({"jsonrpc": "2.0", "method": "shutdown"}))["result"] is None
        refused = await server.answer(OK_REQUEST)
        assert refused["error"]["code"] == -32600 and "shutting down" in refused["error"]["message"], refused
        hover = await server.answer({"jsonrpc": "2.0", "method": "textDocument/hover", "params": {
            "textDocument": {"uri": "file:///a.log"}, "position": {"line": 0, "character": 0}}})
        assert hover["error"]["code"] == -32600, hover
        server.send({"jsonrpc": "2.0", "method": "exit"})
        assert await asyncio.wait_for(server.process.wait(), 20) == 0
    finally:
        if server.process.returncode is None:
            server.process.kill()


async def test_exit_without_shutdown_exits_1():
    server = await Wire.open()
    try:
        server.send({"jsonrpc": "2.0", "method": "exit"})
        assert await asyncio.wait_for(server.process.wait(), 20) == 1
    finally:
        if server.process.returncode is None:
            server.process.kill()


async def test_input_closed_mid_message_ends_the_server():
    server = await Wire.open()
    try:
        server.write(b"Content-Length: 500\r\n\r\n{\"jsonrpc\": ")
        server.process.stdin.close()
        assert await asyncio.wait_for(server.process.wait(), 20) == 0
    finally:
        if server.process.returncode is None:
            server.process.kill()
    assert "input ended 12 bytes into a 500-byte message body" in server.stderr_text()


# ---- hostile nesting: one message of brackets ended the process (exit 1, RecursionError) -------
def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


DEEP = [
    # (what, body, the id the error must carry)
    ("1,000 arrays as a request's params (2 KB)",
     '{"jsonrpc": "2.0", "id": 41, "method": "textDocument/hover", "params": ' + nested(1000) + "}", 41),
    ("100,000 arrays, the id after them",
     '{"jsonrpc": "2.0", "method": "workspace/executeCommand", "params": {"command": "mltriage.explain", "arguments": '
     + nested(100_000) + '}, "id": "after"}', "after"),
    ("objects, and strings with brackets, quotes and backslashes before the id",
     '{"jsonrpc": "2.0", "method": "textDocument/hover", "params": {"a": "]]}\\\\\\"[[{\\\\", "b": '
     + '{"x": ' * 5000 + "1" + "}" * 5000 + '}, "id": 42}', 42),
    ("deep enough for cattrs and the handlers, not for json (200 levels)",
     '{"jsonrpc": "2.0", "id": 43, "method": "workspace/executeCommand", "params": {"command": "mltriage.explain", "arguments": ["cuda-oom", '
     + nested(200) + "]}}", 43),
    ("a top-level array of arrays (no id to find)", nested(3000), None),
]


@pytest.mark.parametrize("body,expected_id", [(body, i) for _, body, i in DEEP], ids=[name for name, _, _ in DEEP])
async def test_deep_nesting_gets_an_error_with_its_id_and_the_server_lives_on(body: str, expected_id):
    server = await Wire.open()
    try:
        server.write(frame(body.encode()))
        answer = await asyncio.wait_for(server.receive(lambda m: "error" in m), 20)
        assert_clean(answer["error"])
        assert answer["error"]["code"] == -32600 and "nested deeper than 64" in answer["error"]["message"], answer
        assert answer["id"] == expected_id, answer
        await server.still_answers()
        assert await server.close() == 0
    finally:
        if server.process.returncode is None:
            server.process.kill()


async def test_a_deep_notification_is_logged_and_costs_nothing_else():
    server = await Wire.open()
    try:
        server.write(frame(('{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": ' + nested(2000) + "}").encode()))
        await server.still_answers()  # no answer to a notification, and the next request is served
        assert await server.close() == 0
    finally:
        if server.process.returncode is None:
            server.process.kill()
    assert "nested deeper than 64" in server.stderr_text()


async def test_a_lying_length_allocates_only_what_was_sent():
    """A header announcing 1 GB followed by a few bytes: the server waits for the rest without
    holding a gigabyte, and ends cleanly when the input closes."""
    server = await Wire.open()
    try:
        server.write(b"Content-Length: 1000000000\r\n\r\n" + b'{"jsonrpc": "2.0", ' + b" " * 3_000_000)
        await server.process.stdin.drain()
        await asyncio.sleep(1.0)  # it has read what was sent
        status = (Path("/proc") / str(server.process.pid) / "status").read_text()
        rss_mb = int(next(line for line in status.splitlines() if line.startswith("VmRSS:")).split()[1]) / 1024
        assert rss_mb < 300, f"{rss_mb:.0f} MB resident after a 1 GB header and 3 MB of body"
        server.process.stdin.close()
        assert await asyncio.wait_for(server.process.wait(), 20) == 0
    finally:
        if server.process.returncode is None:
            server.process.kill()
