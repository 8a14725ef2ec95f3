"""Documents no log should be: binary junk, monster lines, odd line breaks. The server answers, in
words, and keeps serving."""

from __future__ import annotations

import random
from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient

from helpers import open_document, wait_for_diagnostics


async def still_serving(client: LanguageClient, workspace: Path) -> None:
    uri = open_document(client, workspace / "logs" / "torchrun_sigkill.log")
    assert await wait_for_diagnostics(client, uri)


async def test_binary_junk(client: LanguageClient, workspace: Path):
    rng = random.Random(4)
    junk = bytes(rng.randrange(256) for _ in range(200_000)).decode("latin-1")  # NULs, escapes, C1 controls
    path = workspace / "core.log"
    uri = open_document(client, path, text=junk)
    diagnostics = await wait_for_diagnostics(client, uri)
    assert list(diagnostics) == []
    assert not [m for m in client.messages if m.type == types.MessageType.Error]
    await still_serving(client, workspace)


async def test_monster_line(client: LanguageClient, workspace: Path):
    # 8 MB on one line, then a real traceback line: the finding is still found and placed right
    real = (workspace / "logs" / "torchrun_python_exception.log").read_text()
    text = "x" * 8_000_000 + "\n" + real
    uri = open_document(client, workspace / "huge-line.log", text=text)
    diagnostics = await wait_for_diagnostics(client, uri, timeout=60)
    assert diagnostics and all(d.range.start.line >= 1 for d in diagnostics)
    lines = text.split("\n")
    for d in diagnostics:
        assert d.range.end.character <= len(lines[d.range.start.line])
    await still_serving(client, workspace)


async def test_line_breaks_agree_with_the_editor(client: LanguageClient, workspace: Path):
    # CRLF endings, progress-bar CRs and a form feed: VS Code counts CRLF, CR and LF as breaks only
    real = (workspace / "logs" / "torchrun_python_exception.log").read_text().split("\n")
    at = next(i for i, line in enumerate(real) if "[rank2]: IndexError" in line)
    head = "epoch 1 10%\repoch 1 50%\repoch 1 100%\r\n\x0cpage\r\n"
    text = head + "\r\n".join(real)
    uri = open_document(client, workspace / "crlf.log", text=text)
    diagnostics = await wait_for_diagnostics(client, uri)
    editor_lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    flagged = {editor_lines[d.range.start.line] for d in diagnostics}
    assert any("[rank2]" in line for line in flagged)
    assert all(d.range.start.line != 0 for d in diagnostics)
    assert editor_lines[at + 4] == real[at]  # 4 editor lines in the head


async def test_empty_and_unicode_documents(client: LanguageClient, workspace: Path):
    uri = open_document(client, workspace / "empty.log", text="")
    assert list(await wait_for_diagnostics(client, uri)) == []
    real = (workspace / "logs" / "torchrun_python_exception.log").read_text()
    text = "训练开始 🚀 \ud800 lone surrogate\n" + real
    uri = open_document(client, workspace / "unicode.log", text=text)
    assert await wait_for_diagnostics(client, uri)
