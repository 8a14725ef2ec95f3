"""Quick fixes: the fix's exports go into the launch script as a versioned WorkspaceEdit."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient

from conftest import config, server_env, start
from helpers import RawServer, open_document, wait_for_diagnostics

FIX_LOG = "torchrun_collective_mismatch.log"  # rank 1 all_reduces another shape; the fix sets TORCH_DISTRIBUTED_DEBUG


async def root_cause_with_env(client: LanguageClient, workspace: Path) -> tuple[str, types.Diagnostic]:
    log = workspace / "logs" / FIX_LOG
    uri = open_document(client, log)
    diagnostics = await wait_for_diagnostics(client, uri)
    scenario = json.loads((workspace / "logs" / "torchrun_collective_mismatch.scenario.json").read_text())
    roots = [d for d in diagnostics if d.data["role"] == "root-cause" and d.data["env"]]
    assert roots, [d.code for d in diagnostics]
    assert roots[0].data["rank"] == scenario["initiating_rank"]
    return uri, roots[0]


async def code_actions(client: LanguageClient, uri: str, diagnostic: types.Diagnostic, only=None):
    return await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic], only=only),
        )
    )


def apply(text: str, edit: types.TextEdit) -> str:
    lines = text.split("\n")
    start, end = edit.range.start, edit.range.end
    offset = sum(len(line) + 1 for line in lines[: start.line]) + start.character
    stop = sum(len(line) + 1 for line in lines[: end.line]) + end.character
    return text[:offset] + edit.new_text + text[stop:]


async def test_export_fix_is_offered_for_each_launch_script(client: LanguageClient, workspace: Path):
    uri, diagnostic = await root_cause_with_env(client, workspace)
    actions = await code_actions(client, uri, diagnostic)
    titles = [a.title for a in actions]
    script_actions = [a for a in actions if isinstance(a, types.CodeAction) and a.data and "script" in a.data]
    assert {Path(a.data["script"]).name for a in script_actions} == {"train.slurm", "launch.sh"}, titles
    assert all(a.kind == types.CodeActionKind.QuickFix for a in script_actions)
    assert script_actions[0].is_preferred
    assert all("TORCH_DISTRIBUTED_DEBUG" in a.title for a in script_actions)
    # the non-edit actions: pick a script, copy, open the entry (commands run by the client)
    assert any("copy the fix's exports" in t for t in titles)
    assert any(f"open the entry for {diagnostic.code}" in t for t in titles)
    # nothing was written: only offered
    assert "TORCH_DISTRIBUTED_DEBUG" not in (workspace / "train.slurm").read_text()


async def test_resolved_edit_goes_after_the_sbatch_header(client: LanguageClient, workspace: Path):
    uri, diagnostic = await root_cause_with_env(client, workspace)
    actions = await code_actions(client, uri, diagnostic)
    slurm = next(a for a in actions if isinstance(a, types.CodeAction) and a.data and a.data.get("script", "").endswith("train.slurm"))
    assert slurm.edit is None, "VS Code resolves edits lazily"
    resolved = await client.code_action_resolve_async(slurm)
    change = resolved.edit.document_changes[0]
    assert isinstance(change, types.TextDocumentEdit)
    assert change.text_document.uri == (workspace / "train.slurm").as_uri()
    assert change.text_document.version is None  # not open in the editor: the file on disk
    script = (workspace / "train.slurm").read_text()
    after = apply(script, change.edits[0]).split("\n")
    header_end = after.index("# Fine-tune on two nodes.")
    assert after[header_end + 1].startswith("# mltriage fix for torch-collective-mismatch")
    assert after[header_end + 2] == "export TORCH_DISTRIBUTED_DEBUG=DETAIL"
    assert after[header_end + 3] == ""  # the blank line before `set -euo pipefail` is kept
    assert after[: header_end + 1] == script.split("\n")[: header_end + 1]  # every #SBATCH line stays on top


async def test_open_script_edit_carries_its_version(client: LanguageClient, workspace: Path):
    script = workspace / "scripts" / "launch.sh"
    script_uri = open_document(client, script, language_id="shellscript")
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=script_uri, version=7),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=script.read_text() + "# edited, unsaved\n")],
        )
    )
    uri, diagnostic = await root_cause_with_env(client, workspace)
    actions = await code_actions(client, uri, diagnostic)
    launch = next(a for a in actions if isinstance(a, types.CodeAction) and a.data and a.data.get("script") == script_uri)
    change = (await client.code_action_resolve_async(launch)).edit.document_changes[0]
    assert change.text_document.version == 7
    assert change.edits[0].range.start == types.Position(line=2, character=0)  # after shebang + comment


async def test_no_offer_when_the_script_already_exports_it(client: LanguageClient, workspace: Path):
    slurm = workspace / "train.slurm"
    slurm.write_text(slurm.read_text().replace("set -euo", "export TORCH_DISTRIBUTED_DEBUG=DETAIL\nset -euo"))
    uri, diagnostic = await root_cause_with_env(client, workspace)
    actions = await code_actions(client, uri, diagnostic)
    scripts = [Path(a.data["script"]).name for a in actions if isinstance(a, types.CodeAction) and a.data and "script" in a.data]
    assert scripts == ["launch.sh"]


async def test_only_filter_and_foreign_diagnostics(client: LanguageClient, workspace: Path):
    uri, diagnostic = await root_cause_with_env(client, workspace)
    assert await code_actions(client, uri, diagnostic, only=[types.CodeActionKind.Refactor]) is None
    foreign = types.Diagnostic(range=diagnostic.range, message="not ours", source="pylint", code="E1101", data={"signature": "cuda-oom"})
    assert await code_actions(client, uri, foreign) is None


async def test_insert_exports_command_applies_through_the_client(client: LanguageClient, workspace: Path):
    script_uri = (workspace / "scripts" / "launch.sh").as_uri()
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="mltriage.insertExports",
            arguments=[{"script": script_uri, "env": {"NCCL_P2P_DISABLE": "1"}, "signature": "nccl-p2p-ipc-failure", "title": "P2P"}],
        )
    )
    assert result == {"applied": True, "reason": None}
    (edit,) = client.applied_edits
    new_text = edit.document_changes[0].edits[0].new_text
    assert "export NCCL_P2P_DISABLE=1\n" in new_text


async def test_hostile_workspace_scripts_neither_hang_nor_exhaust_the_server(client: LanguageClient, workspace: Path):
    # issue 13: a train.sh symlinked to /dev/zero drove the server to 2.7 GB; a FIFO run.sh hung it
    (workspace / "train.sh").symlink_to("/dev/zero")
    os.mkfifo(workspace / "run.sh")
    (workspace / "scripts" / "tty.sh").symlink_to("/dev/tty")
    started = time.monotonic()
    uri, diagnostic = await root_cause_with_env(client, workspace)
    actions = await code_actions(client, uri, diagnostic)
    scripts = {Path(a.data["script"]).name for a in actions if isinstance(a, types.CodeAction) and a.data and "script" in a.data}
    assert scripts == {"train.slurm", "launch.sh"}
    listed = await client.workspace_execute_command_async(types.ExecuteCommandParams(command="mltriage.launchScripts", arguments=[]))
    assert {Path(s["path"]).name for s in listed} == {"train.slurm", "launch.sh"}
    assert time.monotonic() - started < 20
    with pytest.raises(JsonRpcInvalidParams, match="not a readable regular file"):
        await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command="mltriage.insertExports",
            arguments=[{"script": (workspace / "train.sh").as_uri(), "env": {"NCCL_P2P_DISABLE": "1"}}]))


@pytest_lsp.fixture(config=config())
async def untrusted(lsp_client: LanguageClient, workspace: Path):
    await start(lsp_client, workspace, trusted=False)
    yield
    await lsp_client.shutdown_session()


async def test_untrusted_workspace_reads_no_file_beyond_the_open_documents(untrusted: LanguageClient, workspace: Path):
    launch = workspace / "scripts" / "launch.sh"
    launch_uri = open_document(untrusted, launch, language_id="shellscript")
    uri, diagnostic = await root_cause_with_env(untrusted, workspace)
    actions = await code_actions(untrusted, uri, diagnostic)
    scripts = [a.data["script"] for a in actions if isinstance(a, types.CodeAction) and a.data and "script" in a.data]
    assert scripts == [launch_uri]  # train.slurm is on disk but not open: not read, not offered
    with pytest.raises(JsonRpcInvalidParams, match="not trusted"):
        await untrusted.workspace_execute_command_async(types.ExecuteCommandParams(
            command="mltriage.scriptEdit",
            arguments=[{"script": (workspace / "train.slurm").as_uri(), "env": {"NCCL_P2P_DISABLE": "1"}}]))


async def test_fix_is_applied_by_the_client_which_shows_it_unsaved(workspace: Path):
    # raw JSON-RPC: the client library would read a CodeAction that carries a command as a Command
    server = await RawServer.start(*config().server_command, env=server_env())
    try:
        await server.initialize(workspace, {"revealEdits": True, "debounceMs": 50})
        log = workspace / "logs" / FIX_LOG
        diagnostics = await server.diagnostics_for(log)
        root = next(d for d in diagnostics if d["data"]["role"] == "root-cause" and d["data"]["env"])
        actions = (await server.request("textDocument/codeAction", {
            "textDocument": {"uri": log.as_uri()}, "range": root["range"], "context": {"diagnostics": [root]}}))["result"]
        slurm = next(a for a in actions if a.get("data", {}).get("script", "").endswith("train.slurm"))
        # no edit for the editor to apply (and auto-save): a client command that opens and reveals it
        assert "edit" not in slurm or slurm["edit"] is None
        assert slurm["command"]["command"] == "mltriage.applyExports"
        (fix,) = slurm["command"]["arguments"]
        answer = (await server.request("workspace/executeCommand", {"command": "mltriage.scriptEdit", "arguments": [fix]}))["result"]
        lines = (workspace / "train.slurm").read_text().split("\n")
        assert answer["line"] == lines.index("# Fine-tune on two nodes.") + 1
        assert answer["text"].splitlines()[1] == "export TORCH_DISTRIBUTED_DEBUG=DETAIL"
        assert answer["version"] is None
        assert "TORCH_DISTRIBUTED_DEBUG" not in "\n".join(lines)  # nothing written
    finally:
        await server.stop()
