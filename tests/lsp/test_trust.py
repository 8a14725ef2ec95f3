"""Workspace Trust: in an untrusted workspace the client says so and the probe (which runs GPU code)
is neither offered nor run; everything else keeps working."""

from __future__ import annotations

from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from conftest import config, server_env, start
from helpers import RawServer, open_document, wait_for_diagnostics


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



async def test_restricted_mode_offers_what_is_safe_and_says_trust_enables_the_rest(workspace: Path):
    """Issue 22.2: with no script open, an untrusted folder still gets: copy the exports, add the
    exports / the flag to a launch script the user opens, and one action that says trusting the
    folder finds its scripts (VS Code's Workspace Trust editor)."""
    # raw JSON-RPC: the client library would read a CodeAction that carries a command as a Command
    server = await RawServer.start(*config().server_command, env=server_env())
    try:
        await server.initialize(workspace, {"trusted": False, "revealEdits": True, "debounceMs": 50})
        log = workspace / "logs" / "vllm_p2p_batch_test.log"
        diagnostics = await server.diagnostics_for(log)
        root = next(d for d in diagnostics if d["code"] == "vllm-p2p-access-test-crashed")
        actions = (await server.request("textDocument/codeAction", {
            "textDocument": {"uri": log.as_uri()}, "range": root["range"], "context": {"diagnostics": [root]}}))["result"]
        by_title = {a["title"]: a["command"] for a in actions}
        assert not any("script" in (a.get("data") or {}) for a in actions), "no workspace script read or offered"
        assert by_title["mltriage: copy the fix's exports"]["arguments"] == ["export NCCL_P2P_DISABLE=1\n"]
        opened = by_title["mltriage: add the exports to a launch script you open…"]
        assert opened["command"] == "mltriage.pickLaunchScript" and opened["arguments"][0] == {"NCCL_P2P_DISABLE": "1"}
        flag = by_title["mltriage: add `--disable-custom-all-reduce` to `vllm serve` in a launch script you open…"]
        assert flag["command"] == "mltriage.pickScriptForFlag" and flag["arguments"][0]["flag"] == "--disable-custom-all-reduce"
        trust = [t for t in by_title if "trust this folder" in t]
        assert trust == ["mltriage: trust this folder to have its launch scripts found and the P2P probe run (Restricted Mode)"], list(by_title)
        assert by_title[trust[0]]["command"] == "workbench.trust.manage"
        assert "mltriage: run the GPU peer-to-peer probe" not in by_title
        # the script the user opens is then edited like any open document
        script = workspace / "scripts" / "serve.sh"
        script.write_text("#!/bin/bash\nvllm serve meta-llama/Llama-3.1-8B --tensor-parallel-size 2\n")
        server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": script.as_uri(), "languageId": "shellscript", "version": 1, "text": script.read_text()}}})
        edit = (await server.request("workspace/executeCommand", {
            "command": "mltriage.flagEdit", "arguments": [{"script": script.as_uri(), "flag": flag["arguments"][0]}]}))["result"]
        assert [e["text"] for e in edit["edits"]] == [" --disable-custom-all-reduce"], edit
    finally:
        await server.stop()
