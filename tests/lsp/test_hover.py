"""Hover on a matched line shows the encyclopedia entry with the line's facts."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import unquote

from lsprotocol import types
from pytest_lsp import LanguageClient

from helpers import line_of, open_document, wait_for_diagnostics


async def test_hover_on_flagged_line_shows_entry(client: LanguageClient, workspace: Path):
    log = workspace / "logs" / "torchrun_python_exception.log"
    uri = open_document(client, log)
    diagnostics = await wait_for_diagnostics(client, uri)
    target = diagnostics[0]
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=target.range.start)
    )
    assert hover is not None
    assert hover.contents.kind == types.MarkupKind.Markdown
    text = hover.contents.value
    assert f"`{target.code}`" in text
    assert "fix" in text.lower()
    assert hover.range == target.range
    # issue 22.3: VS Code shows the diagnostic's message above the hover; the hover does not say it again
    assert target.message not in text and target.message.split(": ", 1)[-1] not in text


async def test_hover_elsewhere_is_empty(client: LanguageClient, workspace: Path):
    log = workspace / "logs" / "torchrun_python_exception.log"
    uri = open_document(client, log)
    await wait_for_diagnostics(client, uri)
    quiet = line_of(log, "step 0 loss")
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=quiet, character=3))
    )
    assert hover is None


async def test_hover_on_unknown_document_is_empty(client: LanguageClient, workspace: Path):
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=(workspace / "nope.log").as_uri()),
            position=types.Position(line=0, character=0),
        )
    )
    assert hover is None


async def test_hover_first_screen_is_what_happened_the_fix_and_verify(client: LanguageClient, workspace: Path):
    log = workspace / "logs" / "torchrun_collective_mismatch.log"
    uri = open_document(client, log)
    diagnostics = await wait_for_diagnostics(client, uri)
    root = next(d for d in diagnostics if d.data["role"] == "root-cause" and d.data["env"])
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=root.range.start)
    )
    text = hover.contents.value
    assert len(text) < 2500, len(text)  # a first screen, not the 6 KB entry
    # issue 22.3: the first screen (before the rule) is the fix itself and the verify command, nothing else
    first, _, rest = text.partition("\n---\n")
    assert rest, text
    assert [line for line in first.splitlines() if line] == [
        "**Fix:**", "```sh", *[f"export {k}={v}" for k, v in root.data["env"].items()], "```", f"**Verify:** `{root.data['verify']}`"]
    assert "\n" not in root.message and "`" not in root.message, root.message  # one line of what broke, plain text
    # the exports in a code block, one line each, then how to verify
    exports = [f"export {k}={v}" for k, v in root.data["env"].items()]
    assert "```sh\n" + "\n".join(exports) + "\n```" in text
    assert text.index("```sh\nexport") < text.index("**Verify:**")
    # no sentence said twice
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if len(s.strip()) > 20]
    assert len(sentences) == len(set(sentences)), sentences
    # the full entry one click away: a command link to the entry document
    link = re.search(r"\[Open the full entry\]\(command:mltriage\.showEntry\?([^)]+)\)", text)
    assert link
    (target,) = json.loads(unquote(link.group(1)))
    assert target == root.code_description.href


async def test_vllm_p2p_batch_test_reads_as_gpu_pairs_and_the_childs_error_is_flagged(client: LanguageClient, workspace: Path):
    log = workspace / "logs" / "vllm_p2p_batch_test.log"
    uri = open_document(client, log)
    diagnostics = await wait_for_diagnostics(client, uri)
    batch = next(d for d in diagnostics if d.code == "vllm-p2p-access-test-crashed")
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=batch.range.start)
    )
    assert "0→0, 0→1, 1→0, 1→1" in hover.contents.value
    # the flag beside the exports on the first screen, before the rule
    first = hover.contents.value.partition("\n---\n")[0]
    assert "export NCCL_P2P_DISABLE=1" in first and "`--disable-custom-all-reduce`" in first and "**Verify:**" in first
    # the test child's own error, printed under it, has its own diagnostic on its own line
    child = line_of(log, "CUDART error: initialization error")
    flagged = [d for d in diagnostics if d.range.start.line == child]
    assert flagged, [(d.code, d.range.start.line) for d in diagnostics]
    assert flagged[0].code == "cuda-initialization-error"


async def test_hover_on_a_catalogued_line_shows_its_source_site_and_releases(client: LanguageClient, workspace: Path):
    from mltriage.catalogue.store import default_catalogue

    if not default_catalogue().available:
        import pytest

        pytest.skip("catalogue data not generated")
    # NCCL v2.22.3-1 src/misc/shmutils.cc ncclShmOpen: WARN("Error while %s shared memory segment %s (size %ld), error: %s (%d)", ...)
    log = workspace / "catalogued.log"
    log.write_text("node1:100:100 [0] misc/shmutils.cc:129 NCCL WARN Error while attaching to shared memory segment "
                   "/dev/shm/nccl-Q2rTbW (size 14156128), error: No such file or directory (2)\n")
    uri = open_document(client, log)
    diagnostics = await wait_for_diagnostics(client, uri)
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=diagnostics[0].range.start)
    )
    assert hover is not None
    assert "**Source:** `src/misc/shmutils.cc:128`" in hover.contents.value
    assert "NCCL 2.22.3-1–2.27.7-1" in hover.contents.value


async def test_diagnostic_messages_are_one_plain_line(client: LanguageClient, workspace: Path):
    """Issue 22.3: VS Code shows a diagnostic's message as plain text (Problems panel, hover): no
    Markdown backticks; the notes go to the hover."""
    seen = 0
    for log in sorted((workspace / "logs").glob("*.log")):
        uri = open_document(client, log)
        for d in await wait_for_diagnostics(client, uri):
            assert "`" not in d.message and "\n" not in d.message, (log.name, d.message)
            seen += 1
    assert seen > 20
