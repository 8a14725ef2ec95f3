"""The server opens no network connection: every feature is exercised under an audit hook that
records (and refuses) any socket connect/bind/sendto or name lookup."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from conftest import GUARD, server_env
from helpers import open_document, wait_for_diagnostics


@pytest.fixture
def guard_log(tmp_path: Path) -> Path:
    return tmp_path / "netguard.log"


async def test_all_features_without_network(workspace: Path, guard_log: Path):
    env = server_env(MLTRIAGE_NETGUARD_LOG=str(guard_log))
    env["PYTHONPATH"] = f"{GUARD}:{env['PYTHONPATH']}"
    client = await ClientServerConfig(server_command=[sys.executable, "-m", "mltriage.server"], server_env=env).start()
    try:
        await client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities("visual-studio-code"),
                root_uri=workspace.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
                initialization_options={"debounceMs": 10, "progressLines": 10},
            )
        )
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
                    if action.data:
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
        await client.shutdown_session()
    finally:
        await client.stop()
    lines = guard_log.read_text().splitlines()
    assert lines and lines[0].startswith("armed"), "the audit hook must have been active in the server"
    assert [line for line in lines if line.startswith("VIOLATION")] == []
