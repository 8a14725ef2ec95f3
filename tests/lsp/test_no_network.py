"""The server opens no network connection: every feature is exercised under an audit hook that
records (and refuses) any socket connect/bind/sendto or name lookup."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from conftest import GUARD, server_env, start
from helpers import open_document, wait_for_diagnostics


GUARD_LOG = Path(tempfile.mkdtemp(prefix="mltriage-netguard-")) / "netguard.log"
_ENV = server_env(MLTRIAGE_NETGUARD_LOG=str(GUARD_LOG))
_ENV["PYTHONPATH"] = f"{GUARD}{os.pathsep}{_ENV['PYTHONPATH']}"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "mltriage.server"], server_env=_ENV))
async def guarded(lsp_client: LanguageClient, workspace: Path):
    await start(lsp_client, workspace, debounceMs=10, progressLines=10)
    yield
    await lsp_client.shutdown_session()


async def test_all_features_without_network(guarded: LanguageClient, workspace: Path):
    client = guarded
    uris = []
    for log in sorted((workspace / "logs").glob("*.log")):
        uris.append(open_document(client, log))
    for uri in uris:
        diagnostics = await wait_for_diagnostics(client, uri)
        for d in diagnostics:
            await client.text_document_hover_async(
                types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=d.range.start)
            )
            actions = await client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    range=d.range,
                    context=types.CodeActionContext(diagnostics=[d]),
                )
            )
            for action in actions or []:
                # (lsprotocol parses any action that carries a command as a Command: no data there)
                if getattr(action, "data", None):
                    await client.code_action_resolve_async(action)
            await client.workspace_execute_command_async(
                types.ExecuteCommandParams(command="mltriage.explain", arguments=[d.code, d.data["facts"]])
            )
    text = (workspace / "logs" / "torchrun_sigkill.log").read_text()
    for command, arguments in [
        ("mltriage.diagnoseText", [text]),
        ("mltriage.runProbe", []),
        ("mltriage.launchScripts", []),
        ("mltriage.insertExports", [{"script": (workspace / "scripts" / "launch.sh").as_uri(), "env": {"NCCL_DEBUG": "INFO"}}]),
    ]:
        await client.workspace_execute_command_async(types.ExecuteCommandParams(command=command, arguments=arguments))
    lines = GUARD_LOG.read_text().splitlines()
    assert lines and lines[0].startswith("armed"), "the audit hook must have been active in the server"
    assert [line for line in lines if line.startswith("VIOLATION")] == []
