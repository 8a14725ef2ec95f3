"""Workspace Trust: in an untrusted workspace the client says so and the probe (which runs GPU code)
is neither offered nor run; everything else keeps working."""

from __future__ import annotations

from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from conftest import config, start
from helpers import open_document, wait_for_diagnostics


@pytest_lsp.fixture(config=config())
async def untrusted(lsp_client: LanguageClient, workspace: Path):
    await start(lsp_client, workspace, trusted=False)
    yield
    await lsp_client.shutdown_session()


async def test_probe_refused_when_untrusted(untrusted: LanguageClient, workspace: Path):
    result = await untrusted.workspace_execute_command_async(types.ExecuteCommandParams(command="mltriage.runProbe", arguments=[]))
    assert result == {"status": "unavailable", "error": "The P2P probe is disabled in untrusted workspaces."}
    uri = open_document(untrusted, workspace / "logs" / "torchrun_python_exception.log")
    assert await wait_for_diagnostics(untrusted, uri)  # diagnostics still work
