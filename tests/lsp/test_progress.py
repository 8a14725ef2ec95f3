"""Large logs: $/progress with a Cancel button, cancellation of runs and requests, and a server that
keeps answering while it works."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient

import procs
from conftest import server_env
from helpers import open_document, wait_for_diagnostics

REPEAT = 600  # 600 copies of a real 167-line torchrun log: ~100,000 lines, ~7 MB, ~2 s to diagnose


def big_log(workspace: Path) -> Path:
    path = workspace / "logs" / "big.log"
    path.write_text((workspace / "logs" / "torchrun_python_exception.log").read_text() * REPEAT)
    return path


async def wait_for_progress(client: LanguageClient, kind: type, timeout: float = 30.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for token, reports in client.progress_reports.items():
            if any(isinstance(r, kind) for r in reports):
                return token, reports
        await asyncio.sleep(0.01)
    raise AssertionError(f"no {kind.__name__} progress within {timeout} s")


async def test_large_log_reports_progress(client: LanguageClient, workspace: Path):
    uri = open_document(client, big_log(workspace))
    diagnostics = await wait_for_diagnostics(client, uri, timeout=60)
    assert diagnostics
    token, reports = await wait_for_progress(client, types.WorkDoneProgressEnd)
    begin = reports[0]
    assert isinstance(begin, types.WorkDoneProgressBegin)
    assert begin.cancellable and "big.log" in begin.title and "100,200 lines" in begin.title
    assert "findings" in reports[-1].message


async def test_cancel_from_the_progress_notification(client: LanguageClient, workspace: Path):
    uri = open_document(client, big_log(workspace))
    token, _ = await wait_for_progress(client, types.WorkDoneProgressBegin)
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    _, reports = await wait_for_progress(client, types.WorkDoneProgressEnd)
    assert reports[-1].message == "Cancelled"
    await asyncio.sleep(4)  # longer than the whole run: its result must have been dropped
    assert uri not in client.diagnostics


async def test_hover_answers_while_a_large_log_is_diagnosed(client: LanguageClient, workspace: Path):
    small = workspace / "logs" / "torchrun_sigkill.log"
    small_uri = open_document(client, small)
    target = (await wait_for_diagnostics(client, small_uri))[0]
    big_uri = open_document(client, big_log(workspace))
    await wait_for_progress(client, types.WorkDoneProgressBegin)
    latencies = []
    for _ in range(5):
        started = time.perf_counter()
        hover = await client.text_document_hover_async(
            types.HoverParams(text_document=types.TextDocumentIdentifier(uri=small_uri), position=target.range.start)
        )
        latencies.append(time.perf_counter() - started)
        assert hover is not None
    assert big_uri not in client.diagnostics, "the large log must still be running for this test to mean anything"
    # a whole run takes ~2 s; an event loop blocked by it would answer in ~2 s
    assert sorted(latencies)[2] < 0.25 and max(latencies) < 1.0, latencies


async def test_cancel_request_waiting_behind_a_long_run(workspace: Path):
    # The engine works one job at a time: while a large log runs, a diagnoseText request waits and
    # the client gives up on it ($/cancelRequest). Spoken in raw JSON-RPC over the server's stdio,
    # because the test client's own writes can reach the server out of order with the cancel.
    server = await procs.start(  # its own process group, killed when the test ends
        sys.executable, "-m", "mltriage.server", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL, env=server_env(),
    )

    def send(message: dict) -> None:
        body = json.dumps(message).encode()
        server.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def receive(msg_id) -> dict:
        while True:
            length = 0
            while (line := await server.stdout.readline()).strip():
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            message = json.loads(await server.stdout.readexactly(length))
            if message.get("id") == msg_id:
                return message

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
        await receive(1)
        send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        big = big_log(workspace)
        send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": big.as_uri(), "languageId": "log", "version": 1, "text": big.read_text()}}})
        await asyncio.sleep(0.3)
        text = (workspace / "logs" / "torchrun_sigkill.log").read_text()
        send({"jsonrpc": "2.0", "id": "waiting", "method": "workspace/executeCommand",
              "params": {"command": "mltriage.diagnoseText", "arguments": [text]}})
        await asyncio.sleep(0.1)
        send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "waiting"}})
        answer = await asyncio.wait_for(receive("waiting"), 30)
        assert answer["error"]["code"] == -32800, answer  # RequestCancelled
        send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        await asyncio.wait_for(receive(2), 30)
        send({"jsonrpc": "2.0", "method": "exit"})
        await asyncio.wait_for(server.wait(), 30)
    finally:
        if server.returncode is None:
            server.kill()
