"""No language-server answer shows a secret (issue 13 items 3-4), over real stdio.

Each carrier log of tests/masking_corpus.py (every fake secret form, a rank each) is opened as a
document; its diagnostics, a hover and the code actions (resolved) on every diagnostic, the
``mltriage.diagnoseText`` result for the text and the diagnosis view's payload for the document
(``diagnoseText`` with ``{"uri"}``) are all searched for any 8-character piece of a secret.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from lsprotocol import converters, types
from pytest_lsp import LanguageClient

from helpers import open_document, wait_for_diagnostics

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from masking_corpus import CARRIERS, FORMS, command_echo_log, env_dump_log, leaks, marker  # noqa: E402

_CONVERTER = converters.get_converter()


def _json(value) -> str:
    return json.dumps(_CONVERTER.unstructure(value))


def _unmatched_error_lines(forms) -> str:
    # lines no signature knows, but with an error word: the view's notice quotes the last of them
    return "".join(f"[rank{n}] upload {marker(n)} finished with an error: {f.text}\n" for n, f in enumerate(forms))


LOGS = {
    **{name: (make, FORMS) for name, make in CARRIERS.items()},
    "env-dump": (lambda forms: env_dump_log(forms), FORMS[:7]),
    "command-echo": (lambda forms: command_echo_log(forms[0]), FORMS[:1]),
    "unmatched-error-lines": (_unmatched_error_lines, FORMS),
}


async def _execute(client: LanguageClient, command: str, *arguments):
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(command=command, arguments=list(arguments)))


async def _answers(client: LanguageClient, path: Path) -> dict[str, list[str]]:
    uri = open_document(client, path)
    diagnostics = await wait_for_diagnostics(client, uri)
    answers: dict[str, list[str]] = {"diagnostics": [_json(diagnostics)], "hover": [], "code actions": []}
    document = types.TextDocumentIdentifier(uri=uri)
    for diagnostic in diagnostics:
        hover = await client.text_document_hover_async(types.HoverParams(text_document=document, position=diagnostic.range.start))
        answers["hover"].append(_json(hover))
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(text_document=document, range=diagnostic.range,
                                   context=types.CodeActionContext(diagnostics=[diagnostic]))
        )
        for action in actions or []:
            answers["code actions"].append(_json(action))
            if isinstance(action, types.CodeAction) and action.data is not None:
                answers["code actions"].append(_json(await client.code_action_resolve_async(action)))
    answers["diagnoseText"] = [json.dumps(await _execute(client, "mltriage.diagnoseText", {"text": path.read_text()}))]
    answers["diagnosis view"] = [json.dumps(await _execute(client, "mltriage.diagnoseText", {"uri": uri}))]
    return answers


@pytest.mark.parametrize("name", list(LOGS))
async def test_no_answer_shows_a_secret(client: LanguageClient, workspace: Path, name: str):
    make, forms = LOGS[name]
    path = workspace / "logs" / f"masking-{name}.log"
    path.write_text(make(forms))
    answers = await _answers(client, path)
    everything = "\n".join(text for texts in answers.values() for text in texts)
    assert any(marker(n) in everything for n in range(len(forms) + 1)), f"{name}: no carrier line reached any answer"
    for kind, texts in answers.items():
        assert leaks("\n".join(texts), forms) == [], f"{name}: {kind}"
