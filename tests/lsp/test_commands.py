"""workspace/executeCommand: diagnoseText, explain, runProbe, launchScripts; bad calls get clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient

from helpers import line_of, wait_for_diagnostics


async def execute(client: LanguageClient, command: str, *arguments):
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(command=command, arguments=list(arguments)))


async def test_commands_are_advertised(client: LanguageClient):
    provider = client.initialize_result.capabilities.execute_command_provider
    assert {"mltriage.diagnoseText", "mltriage.runProbe", "mltriage.explain"} <= set(provider.commands)


async def test_diagnose_text_returns_the_diagnosis_json(client: LanguageClient, workspace: Path):
    text = (workspace / "logs" / "torchrun_python_exception.log").read_text()
    result = await execute(client, "mltriage.diagnoseText", text)
    assert result["schema"] == "mltriage.diagnosis/v1"
    assert result["status"] == "failure"
    assert result["findings"]
    assert json.dumps(result)  # plain JSON all the way down


async def test_diagnose_selection_publishes_on_a_non_log_document(client: LanguageClient, workspace: Path):
    # a terminal transcript pasted into a plain-text note: the user selects the traceback
    log = workspace / "logs" / "torchrun_python_exception.log"
    note = workspace / "notes.txt"
    text = "notes from last night\n\n" + log.read_text()
    note.write_text(text)
    uri = note.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(uri=uri, language_id="plaintext", version=1, text=text))
    )
    first, last = line_of(note, "[rank2]: Traceback"), line_of(note, "[rank2]: IndexError")
    selection = "\n".join(text.splitlines()[first : last + 1]) + "\n"
    result = await execute(client, "mltriage.diagnoseText", {"text": selection, "uri": uri, "startLine": first})
    assert result["status"] == "failure"
    diagnostics = await wait_for_diagnostics(client, uri)
    assert diagnostics
    assert all(first <= d.range.start.line <= last for d in diagnostics)
    # every line number the answer cites is a line of the document, not of the selection
    assert sorted(d.range.start.line for d in diagnostics) == sorted(f["line"] - 1 for f in result["findings"])
    root = result["view"]["root"]
    assert root["line"] == first + 1, root  # the traceback starts on the selection's first line
    assert f"line {first + 1}" in root["where"]
    assert f"notes.txt:{first + 1}" in result["explanation"], result["explanation"]
    assert all(first < r["first_line"] <= last + 1 for r in result["ranks"] if r["first_line"])


async def test_diagnose_whole_document_opts_it_in(client: LanguageClient, workspace: Path):
    note = workspace / "transcript.txt"
    note.write_text((workspace / "logs" / "torchrun_sigkill.log").read_text())
    uri = note.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(uri=uri, language_id="plaintext", version=1, text=note.read_text()))
    )
    result = await execute(client, "mltriage.diagnoseText", {"uri": uri})
    assert result["status"] == "failure"
    assert await wait_for_diagnostics(client, uri)


async def test_explain_renders_markdown(client: LanguageClient, workspace: Path):
    text = (workspace / "logs" / "torchrun_python_exception.log").read_text()
    signature = (await execute(client, "mltriage.diagnoseText", text))["findings"][0]["signature"]
    markdown = await execute(client, "mltriage.explain", signature, {})
    assert isinstance(markdown, str) and markdown.startswith("#")


async def test_explain_unknown_id_is_a_clear_error(client: LanguageClient):
    with pytest.raises(JsonRpcInvalidParams, match="unknown signature id 'no-such-thing'"):
        await execute(client, "mltriage.explain", "no-such-thing")


async def test_bad_arguments_are_clear_errors(client: LanguageClient):
    with pytest.raises(JsonRpcInvalidParams, match="'text' must be a string"):
        await execute(client, "mltriage.diagnoseText", {"text": 42})
    with pytest.raises(JsonRpcInvalidParams, match="expects a signature id"):
        await execute(client, "mltriage.explain")
    with pytest.raises(JsonRpcInvalidParams, match="'script' must be a URI"):
        await execute(client, "mltriage.insertExports", {"env": {}})


async def test_run_probe_answers_with_json_without_gpus(client: LanguageClient):
    # this machine has no GPU: the probe must say so in words, never fail with a traceback
    result = await execute(client, "mltriage.runProbe")
    assert result["schema"] == "mltriage.probe/v1"
    assert result["machine_verdict"] == "NO_GPU", result.get("message")
    assert "Traceback" not in json.dumps(result)


async def test_launch_scripts_found_distributed_first(client: LanguageClient, workspace: Path):
    scripts = await execute(client, "mltriage.launchScripts")
    names = [Path(s["path"]).name for s in scripts]
    assert set(names) == {"train.slurm", "launch.sh"}, names  # setup_env.sh launches nothing
    assert all(s["distributed"] for s in scripts)
