"""publishDiagnostics for log documents, over real stdio."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient

from helpers import open_document, wait_for_diagnostics


class PublishCounter(dict):
    """Stands in for the client's diagnostics store and counts how often each URI is published."""

    def __init__(self) -> None:
        super().__init__()
        self.count: Counter[str] = Counter()

    def __setitem__(self, uri, diagnostics) -> None:
        self.count[uri] += 1
        super().__setitem__(uri, diagnostics)


async def test_torchrun_crash_diagnostics(client: LanguageClient, workspace: Path):
    log = workspace / "logs" / "torchrun_python_exception.log"
    scenario = json.loads((workspace / "logs" / "torchrun_python_exception.scenario.json").read_text())
    uri = open_document(client, log)
    diagnostics = await wait_for_diagnostics(client, uri)
    assert diagnostics, "a crashed torchrun run must produce diagnostics"
    lines = log.read_text().splitlines()
    for d in diagnostics:
        assert d.source == "mltriage"
        assert isinstance(d.code, str) and d.code
        assert d.code_description.href.startswith(f"mltriage-entry:/{d.code}.md")
        assert d.data["signature"] == d.code
        assert isinstance(d.data["env"], dict) and isinstance(d.data["facts"], dict)
        # the range lies on a real line of the document and inside it
        assert 0 <= d.range.start.line < len(lines)
        assert d.range.end.character <= len(lines[d.range.start.line])
    roots = [d for d in diagnostics if d.severity == types.DiagnosticSeverity.Error]
    assert roots, "the root cause is an Error"
    # the initiating rank's traceback (rank 2 raised IndexError) is among the root-cause lines
    first = scenario["initiating_rank"]
    assert any(f"[rank{first}]" in lines[d.range.start.line] for d in roots)


async def test_collateral_points_to_initiating_rank(client: LanguageClient, workspace: Path):
    log = workspace / "logs" / "torchrun_sigkill.log"
    uri = open_document(client, log)
    diagnostics = await wait_for_diagnostics(client, uri)
    collateral = [d for d in diagnostics if d.data["role"] == "collateral"]
    # rank 1 was SIGKILLed: the other ranks' gloo errors and torchrun's SIGTERMs are its consequences
    assert len(collateral) >= 2, [(d.code, d.data["role"]) for d in diagnostics]
    assert sum(d.data["role"] == "root-cause" for d in diagnostics) >= 1
    for d in collateral:
        assert d.severity == types.DiagnosticSeverity.Information
        assert d.related_information, "collateral findings point at the initiating failure"
        target = d.related_information[0].location
        assert target.uri == uri
        assert any(r.range == target.range and r.data["role"] == "root-cause" for r in diagnostics)


async def test_non_log_documents_are_left_alone(client: LanguageClient, workspace: Path):
    script = workspace / "scripts" / "launch.sh"
    open_document(client, script, language_id="shellscript")
    log = workspace / "logs" / "torchrun_sigkill.log"
    uri = open_document(client, log)
    await wait_for_diagnostics(client, uri)
    assert script.as_uri() not in client.diagnostics


async def test_edit_is_debounced_and_rediagnosed(client: LanguageClient, workspace: Path):
    log = workspace / "logs" / "torchrun_python_exception.log"
    uri = open_document(client, log)
    assert await wait_for_diagnostics(client, uri)
    # replace the whole log with a healthy line: a burst of edits ends in one (empty) result
    client.diagnostics = published = PublishCounter()
    for version, text in enumerate(["step 1 loss 0.5\n", "step 2 loss 0.4\n", "training finished\n"], start=2):
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
    assert list(await wait_for_diagnostics(client, uri)) == []
    await asyncio.sleep(0.3)  # several debounce periods: no further run may publish
    assert published.count[uri] == 1


async def test_close_clears_diagnostics(client: LanguageClient, workspace: Path):
    log = workspace / "logs" / "torchrun_python_exception.log"
    uri = open_document(client, log)
    assert await wait_for_diagnostics(client, uri)
    client.diagnostics.pop(uri)
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    assert list(await wait_for_diagnostics(client, uri)) == []


async def test_rank_comes_from_a_per_rank_file_name(client: LanguageClient, workspace: Path):
    # the log itself names no rank; saved as rank5.log (as `torchrun --log-dir` or srun -o %t do),
    # the file name says which rank it is, exactly as when the CLI reads a directory of rank logs
    text = (workspace / "logs" / "cuda_illegal_address.log").read_text()
    named = workspace / "job" / "rank5.log"
    named.parent.mkdir()
    named.write_text(text)
    anonymous = workspace / "job" / "train.log"
    anonymous.write_text(text)
    ranked = await wait_for_diagnostics(client, open_document(client, named))
    plain = await wait_for_diagnostics(client, open_document(client, anonymous))
    assert [d.data["rank"] for d in ranked if d.data["role"] == "root-cause"] == [5]
    assert ranked[0].message.startswith("rank 5: ")
    assert all(d.data["rank"] is None for d in plain)


async def test_severity_in_problems_follows_the_verdict(client: LanguageClient, workspace: Path):
    """Issue 22.4: the root cause triage chose is the one Error; what the verdict files as collateral
    is Information and as context at most a Warning (the view's sections say the same)."""
    severity = {"root": {types.DiagnosticSeverity.Error}, "collateral": {types.DiagnosticSeverity.Information},
                "context": {types.DiagnosticSeverity.Warning, types.DiagnosticSeverity.Hint}}
    for log in sorted((workspace / "logs").glob("*.log")):
        uri = open_document(client, log)
        diagnostics = await wait_for_diagnostics(client, uri)
        answer = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="mltriage.diagnoseText", arguments=[{"uri": uri}]))
        view = answer["view"]
        filed = {item["index"]: where for where in ("collateral", "context") for item in view[where]}
        if view["root"] is not None:
            filed[view["root"]["index"]] = "root"
        assert len(diagnostics) == len(answer["findings"]) == len(filed), log.name
        for index, d in enumerate(diagnostics):  # one diagnostic per finding, in order
            assert d.severity in severity[filed[index]], (log.name, d.code, filed[index], d.severity)
            assert d.data["filed"] == filed[index]
        errors = [d.code for d in diagnostics if d.severity == types.DiagnosticSeverity.Error]
        assert len(errors) == (view["root"] is not None), (log.name, errors)
    # the case of the issue: vLLM's P2P self-test crash is the error, the child's CUDA error under it is context
    vllm = {d.code: d.severity for d in client.diagnostics[(workspace / "logs" / "vllm_p2p_batch_test.log").as_uri()]}
    assert vllm["vllm-p2p-access-test-crashed"] == types.DiagnosticSeverity.Error
    assert vllm["cuda-initialization-error"] == types.DiagnosticSeverity.Warning
