"""Log text that is Markdown stays text: a line of a log carrying an image, links and HTML reaches
the hover, the diagnosis view and the entry document, over stdio, and none of them renders a
request or a link that is not ours (CommonMark parsed by markdown-it, plus the GFM autolinks
VS Code's renderer adds: ``scheme://``, ``www.``, e-mail addresses)."""

from __future__ import annotations

import re
from pathlib import Path

from lsprotocol import types
from markdown_it import MarkdownIt
from pytest_lsp import LanguageClient

from helpers import open_document, wait_for_diagnostics

ATTACK = "![p](https://attacker.example/t.png) [login](https://attacker.example/login) <img src=x> www.attacker.example"
# NCCL v2.21.5-1 src/misc/socket.cc socketStartConnect: WARN("socketStartConnect: Connect to %s failed : %s", ...),
# its %s reason being the log's text (here what an attacker put into it)
SOCKET_LINE = f"node1:123:456 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.0.0.2<43345> failed : {ATTACK}"
RENDERER = MarkdownIt("commonmark")
GFM_AUTOLINK = re.compile(r"(?i)\b(?:https?|ftp)://|\bwww\.|[\w.+-]+@[\w-]+\.")
OURS = ("command:mltriage.showEntry?", "https://github.com/")


def outside_code(markdown: str) -> str:
    """The Markdown with its code blocks and code spans removed (a renderer makes no links there)."""
    lines = markdown.splitlines()
    for token in RENDERER.parse(markdown):
        if token.type in ("fence", "code_block") and token.map:
            for i in range(*token.map):
                lines[i] = ""
    return re.sub(r"(`+).*?\1", "", "\n".join(lines))


def assert_inert(markdown: str) -> None:
    """No image, no HTML, no link but ours, nothing an autolinker would take, in rendered Markdown."""
    html = RENDERER.render(markdown)
    assert "<img" not in html, html
    for href in re.findall(r'<a href="([^"]*)"', html):
        assert href.startswith(OURS), (href, markdown)
    # what an autolinker reads: escaped characters break a URL; our own link destinations aside
    plain = re.sub(r"\\.", "", re.sub(r"\]\((?:command:|https://github\.com/)[^)]*\)", "]", outside_code(markdown)))
    assert not GFM_AUTOLINK.search(plain), markdown
    tokens = [t for block in RENDERER.parse(markdown) for t in (block.children or [])]
    assert not [t for t in tokens if t.type in ("image", "html_inline")], markdown
    assert not [t for t in RENDERER.parse(markdown) if t.type == "html_block"], markdown


def rendered_text(markdown: str) -> str:
    return re.sub(r"<[^>]+>", "", RENDERER.render(markdown)).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


async def test_log_text_in_a_hover_is_shown_as_text_and_fetches_nothing(client: LanguageClient, workspace: Path):
    log = workspace / "injected.log"
    log.write_text("node1:123:456 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n" + SOCKET_LINE + "\n")
    uri = open_document(client, log)
    diagnostics = await wait_for_diagnostics(client, uri)
    flagged = [d for d in diagnostics if d.range.start.line == 1]
    assert flagged, [(d.code, d.range.start.line) for d in diagnostics]
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=flagged[0].range.start)
    )
    markdown = hover.contents.value
    assert "attacker.example" in markdown  # the log's words are shown...
    assert_inert(markdown)  # ...as words
    assert "![p](https://attacker.example/t.png)" in rendered_text(markdown)
    assert "[Open the full entry](command:mltriage.showEntry?" in markdown  # our own link still is one


async def test_log_text_in_the_view_and_the_entry_is_text(client: LanguageClient, workspace: Path):
    answer = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="mltriage.diagnoseText", arguments=[SOCKET_LINE + "\n"])
    )
    root = answer["view"]["root"]
    assert root and "attacker.example" in root["what_html"]
    for key in ("what_html", "explanation_html", "fix_summary_html"):
        assert "<img" not in root[key] and "<a " not in root[key], root[key]
    for html in root["notes_html"] + root["steps_html"] + root["flags_html"]:
        assert "<img" not in html and "<a " not in html, html
    # the entry the hover links to, filled with the line's facts
    finding = answer["findings"][0]
    entry = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="mltriage.explain", arguments=[finding["signature"], finding["facts"]])
    )
    assert "attacker.example" in entry
    html = RENDERER.render(entry)
    assert "<img" not in html, html
    assert all(not href.startswith("https://attacker") for href in re.findall(r'<a href="([^"]*)"', html)), html
    assert "attacker" not in "".join(re.findall(r"(?i)\b(?:https?)://\S+", re.sub(r"\\.", "", outside_code(entry)))), entry
