"""Quick fixes whose step is a flag on the launch command: an edit of the script's `vllm serve` or
`torchrun` line, offered beside the exports, over the real server on stdio."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from conftest import DATA, config, server_env, start
from helpers import RawServer, open_document, wait_for_diagnostics
from test_code_actions import apply, code_actions

VLLM_LOG = "vllm_p2p_batch_test.log"  # vLLM's P2P self-test crashed: NCCL_P2P_DISABLE=1 and --disable-custom-all-reduce
ORDINAL_LOG = Path(__file__).resolve().parents[2] / "corpus" / "gpu" / "set_device_local_rank.log"  # 4 ranks on 2 GPUs


def with_serve_script(workspace: Path) -> Path:
    script = workspace / "scripts" / "serve.sh"
    shutil.copy(DATA / "vllm" / "serve.sh", script)
    return script


async def vllm_root(client: LanguageClient, log: Path) -> tuple[str, types.Diagnostic]:
    uri = open_document(client, log)
    diagnostics = await wait_for_diagnostics(client, uri)
    (root,) = [d for d in diagnostics if d.code == "vllm-p2p-access-test-crashed"]
    return uri, root


async def test_flag_fix_edits_the_vllm_serve_line_beside_the_exports(client: LanguageClient, workspace: Path):
    script = with_serve_script(workspace)
    before = script.read_text()
    uri, root = await vllm_root(client, workspace / "logs" / VLLM_LOG)
    assert [f["argument"] for f in root.data["flags"]] == ["--disable-custom-all-reduce"]
    actions = await code_actions(client, uri, root)
    titles = [a.title for a in actions]
    flag_actions = [a for a in actions if isinstance(a, types.CodeAction) and a.data and "flag" in a.data]
    # only the script that runs `vllm serve` (the torchrun scripts get the exports, not the flag)
    assert [Path(a.data["script"]).name for a in flag_actions] == ["serve.sh"], titles
    assert flag_actions[0].title == "mltriage: add `--disable-custom-all-reduce` to `vllm serve` in scripts/serve.sh"
    # beside the exports: after the scripts' export actions, before choosing another script
    exports = [i for i, t in enumerate(titles) if "`export NCCL_P2P_DISABLE`" in t]
    flag_at = titles.index(flag_actions[0].title)
    assert exports and max(exports) < flag_at < titles.index("mltriage: add the exports to a script you choose…")
    assert not flag_actions[0].is_preferred  # the exports' first script stays the preferred fix

    resolved = await client.code_action_resolve_async(flag_actions[0])
    (change,) = resolved.edit.document_changes
    assert change.text_document.uri == script.as_uri() and change.text_document.version is None
    (edit,) = change.edits
    after = apply(before, edit)
    # the flag ends the command (continuation lines included), before its redirection and pipe
    assert after.split("\n")[7] == "  --port 8000 --disable-custom-all-reduce 2>&1 | tee vllm.log"
    assert after.replace(" --disable-custom-all-reduce", "") == before
    assert script.read_text() == before  # offered and resolved, never written by the server


async def test_no_flag_offer_when_the_command_has_it(client: LanguageClient, workspace: Path):
    script = with_serve_script(workspace)
    script.write_text(script.read_text().replace("--port 8000", "--port 8000 --disable_custom_all_reduce"))
    uri, root = await vllm_root(client, workspace / "logs" / VLLM_LOG)
    actions = await code_actions(client, uri, root)
    assert not [a for a in actions if isinstance(a, types.CodeAction) and a.data and "flag" in a.data]
    assert any("`export NCCL_P2P_DISABLE`" in a.title for a in actions)  # the exports are still offered


async def test_the_log_s_own_command_is_offered_with_the_flag_to_copy(workspace: Path):
    # a terminal transcript: the command as typed at the prompt, then vLLM's output
    log = workspace / "logs" / "serve_session.log"
    log.write_text("user@gpu-node:~$ vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 2\n"
                   + (workspace / "logs" / VLLM_LOG).read_text())
    # raw JSON-RPC: the client library reads an action that only carries a command as a bare Command
    server = await RawServer.start(*config().server_command, env=server_env())
    try:
        await server.initialize(workspace, {"debounceMs": 50})
        diagnostics = await server.diagnostics_for(log)
        root = next(d for d in diagnostics if d["code"] == "vllm-p2p-access-test-crashed")
        relaunch = "vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 2 --disable-custom-all-reduce"
        assert root["data"]["relaunch"] == relaunch
        actions = (await server.request("textDocument/codeAction", {
            "textDocument": {"uri": log.as_uri()}, "range": root["range"], "context": {"diagnostics": [root]}}))["result"]
        (copy,) = [a for a in actions if a["title"] == "mltriage: copy this run's command with `--disable-custom-all-reduce`"]
        assert copy["command"]["command"] == "mltriage.copyExports"
        assert copy["command"]["arguments"] == [relaunch + "\n", "the command"]
    finally:
        await server.stop()


async def test_torchrun_value_is_replaced_in_place(client: LanguageClient, workspace: Path):
    # 4 ranks on a 2-GPU host: the fix sets one worker per visible GPU on the torchrun line
    log = workspace / "logs" / "rank_ordinal.log"
    shutil.copy(ORDINAL_LOG, log)
    uri = open_document(client, log)
    diagnostics = await wait_for_diagnostics(client, uri)
    root = next(d for d in diagnostics if d.code == "cuda-invalid-device-ordinal" and d.data["role"] == "root-cause")
    actions = await code_actions(client, uri, root)
    flag_actions = {Path(a.data["script"]).name: a for a in actions if isinstance(a, types.CodeAction) and a.data and "flag" in a.data}
    assert set(flag_actions) == {"train.slurm", "launch.sh"}
    for name, path in (("launch.sh", workspace / "scripts" / "launch.sh"), ("train.slurm", workspace / "train.slurm")):
        (change,) = (await client.code_action_resolve_async(flag_actions[name])).edit.document_changes
        (edit,) = change.edits
        text = path.read_text()
        after = apply(text, edit)
        assert edit.new_text == "gpu" and text[len("\n".join(text.split("\n")[: edit.range.start.line])) + 1:].startswith(("torchrun", "srun"))
        assert after == text.replace("--nproc-per-node 4", "--nproc-per-node gpu").replace("--nproc-per-node 8", "--nproc-per-node gpu")


async def test_flag_edit_command_for_a_revealing_client(workspace: Path):
    # raw JSON-RPC, as VS Code does it: the action is the client's command, which asks the server for
    # the edits (with the open document's version) and applies them unsaved
    script = with_serve_script(workspace)
    server = await RawServer.start(*config().server_command, env=server_env())
    try:
        await server.initialize(workspace, {"revealEdits": True, "debounceMs": 50})
        log = workspace / "logs" / VLLM_LOG
        diagnostics = await server.diagnostics_for(log)
        root = next(d for d in diagnostics if d["code"] == "vllm-p2p-access-test-crashed")
        actions = (await server.request("textDocument/codeAction", {
            "textDocument": {"uri": log.as_uri()}, "range": root["range"], "context": {"diagnostics": [root]}}))["result"]
        (action,) = [a for a in actions if "flag" in (a.get("data") or {})]
        assert action.get("edit") is None and action["command"]["command"] == "mltriage.applyFlag"
        (fix,) = action["command"]["arguments"]
        # the script is open in the editor with an unsaved change: the edit is computed on that text
        edited = script.read_text().replace("--port 8000", "--port 9000")
        server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": script.as_uri(), "languageId": "shellscript", "version": 7, "text": edited}}})
        answer = (await server.request("workspace/executeCommand", {"command": "mltriage.flagEdit", "arguments": [fix]}))["result"]
        assert answer["version"] == 7
        line = edited.split("\n")[7]
        assert answer["edits"] == [{"line": 7, "character": len("  --port 9000"), "end_line": 7,
                                    "end_character": len("  --port 9000"), "text": " --disable-custom-all-reduce"}], line
        bad = await server.request("workspace/executeCommand", {"command": "mltriage.flagEdit", "arguments": [{"script": script.as_uri()}]})
        assert bad["error"]["code"] == -32602 and "'flag'" in bad["error"]["message"]
    finally:
        await server.stop()


@pytest_lsp.fixture(config=config())
async def untrusted(lsp_client: LanguageClient, workspace: Path):
    await start(lsp_client, workspace, trusted=False)
    yield
    await lsp_client.shutdown_session()


async def test_untrusted_workspace_edits_only_open_scripts(untrusted: LanguageClient, workspace: Path):
    script = with_serve_script(workspace)
    uri, root = await vllm_root(untrusted, workspace / "logs" / VLLM_LOG)
    flag_actions = lambda actions: [a for a in actions if isinstance(a, types.CodeAction) and a.data and "flag" in a.data]  # noqa: E731
    assert not flag_actions(await code_actions(untrusted, uri, root))  # serve.sh is not open: not read
    open_document(untrusted, script, language_id="shellscript")
    (action,) = flag_actions(await code_actions(untrusted, uri, root))
    assert action.data["script"] == script.as_uri()
