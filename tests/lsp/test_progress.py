"""Large logs: $/progress with a Cancel button, cancellation of runs and requests, and a server that
keeps answering while it works."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled
from pytest_lsp import LanguageClient

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
    assert max(latencies) < 0.5, latencies


async def test_cancel_request_of_a_long_command(client: LanguageClient, workspace: Path):
    text = big_log(workspace).read_text()
    future = client.protocol.send_request_async(
        types.WORKSPACE_EXECUTE_COMMAND, types.ExecuteCommandParams(command="mltriage.diagnoseText", arguments=[text]), msg_id="long-one"
    )
    await asyncio.sleep(0.2)
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="long-one"))
    with pytest.raises(JsonRpcRequestCancelled):
        await asyncio.wait_for(future, 30)
