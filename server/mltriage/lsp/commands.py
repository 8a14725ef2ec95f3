"""`workspace/executeCommand` handlers.

Arguments come from the extension (or any client) as plain JSON, so each handler checks them and
answers a bad call with a JSON-RPC "invalid params" error that says what was expected.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams
from pygls.uris import from_fs_path

from mltriage.lsp import engine_calls
from mltriage.lsp.code_actions import exports_edit, exports_insertion, flag_text_edits
from mltriage.lsp.diagnostics import encoded_answer, run_job, stopped_diagnosis, uri_to_source
from mltriage.lsp.engine_process import EngineFailed, EngineStopped
from mltriage.lsp.pictures import probe_matrix_svg
from mltriage.lsp.transport import EncodedJSON
from mltriage.model import LaunchFlag

if TYPE_CHECKING:
    from mltriage.lsp.app import MltriageServer

log = logging.getLogger(__name__)

DIAGNOSE_TEXT = "mltriage.diagnoseText"
RUN_PROBE = "mltriage.runProbe"
EXPLAIN = "mltriage.explain"
ENTRY_VIEW = "mltriage.entryView"
INSERT_EXPORTS = "mltriage.insertExports"
LAUNCH_SCRIPTS = "mltriage.launchScripts"
PROBE_VIEW = "mltriage.probeView"
SCRIPT_EDIT = "mltriage.scriptEdit"
FLAG_EDIT = "mltriage.flagEdit"
MAX_TEXT_CHARS = 200_000_000


def _invalid(message: str) -> JsonRpcInvalidParams:
    return JsonRpcInvalidParams(message)


def _first_dict(args: tuple[Any, ...], command: str, usage: str) -> dict[str, Any]:
    if len(args) == 1 and isinstance(args[0], dict):
        return args[0]
    raise _invalid(f"{command} expects one object argument {usage}")


async def diagnose_text(ls: MltriageServer, args: tuple[Any, ...]) -> EncodedJSON:
    """Diagnose a piece of text (a selection, terminal output) and return the diagnosis JSON.

    Arguments: ``"text"`` or ``{"text": str, "uri"?: str, "startLine"?: int}``. With ``uri`` the
    findings are also shown in that document at ``startLine`` (0-based) unless the server diagnoses
    the whole document already; ``{"uri": str}`` without text opts the whole document in.
    """
    if len(args) == 1 and isinstance(args[0], str):
        options: dict[str, Any] = {"text": args[0]}
    else:
        options = _first_dict(args, DIAGNOSE_TEXT, '{"text": str, "uri"?: str, "startLine"?: int} or a string')
    text, uri = options.get("text"), options.get("uri")
    if uri is not None and not isinstance(uri, str):
        raise _invalid(f"{DIAGNOSE_TEXT}: 'uri' must be a string")
    if text is None and uri:
        return await _diagnose_document(ls, uri)
    if not isinstance(text, str):
        raise _invalid(f"{DIAGNOSE_TEXT}: 'text' must be a string")
    if len(text) > MAX_TEXT_CHARS:
        raise _invalid(f"{DIAGNOSE_TEXT}: text of {len(text):,} characters is over the {MAX_TEXT_CHARS:,} limit")
    start_line = options.get("startLine", 0)
    if not isinstance(start_line, int) or start_line < 0:
        raise _invalid(f"{DIAGNOSE_TEXT}: 'startLine' must be a non-negative integer")
    source = str(options.get("source") or (uri_to_source(uri) if uri else "<selection>"))
    # a selection's findings cite the document's lines (startLine is 0-based, lines 1-based)
    first_line = start_line + 1 if uri else 1
    show = {"uri": uri, "line_offset": start_line, "utf16": ls.utf16} if uri and not ls.diagnostics.wants(uri) else None
    request = {"text": text, "source": source, "first_line": first_line, "show": show}
    try:
        payload = await run_job(ls, None, "text", request)
    except EngineStopped as exc:
        log.warning("could not diagnose a text of %d characters: %s", len(text), exc)
        return encoded_answer(stopped_diagnosis(source, str(exc)), text)
    except EngineFailed as exc:
        raise JsonRpcInternalError(f"{DIAGNOSE_TEXT}: the engine failed: {exc}") from None
    if show and not ls.diagnostics.wants(uri):  # still not one the server diagnoses itself
        ls.diagnostics.keep_selection(uri, payload)
    return EncodedJSON(payload["answer"])


async def _diagnose_document(ls: MltriageServer, uri: str) -> EncodedJSON:
    if uri not in ls.workspace.text_documents:
        raise _invalid(f"{DIAGNOSE_TEXT}: {uri} is not open in the editor")
    return await ls.diagnostics.answer(uri)


async def run_probe(ls: MltriageServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """Run the GPU peer-to-peer probe; always answers with JSON, never a traceback."""
    if not ls.settings.trusted:
        return {"status": "unavailable", "error": "The P2P probe is disabled in untrusted workspaces."}
    options = args[0] if args and isinstance(args[0], dict) else {}
    try:
        from mltriage.probe import run_probe as probe
    except ImportError as exc:
        return {"status": "unavailable", "error": f"The P2P probe is not installed here ({exc})."}

    def call() -> dict[str, Any]:
        report = probe(**options) if options else probe()
        return with_matrix(report.to_json())

    try:
        return await asyncio.get_running_loop().run_in_executor(None, call)
    except TypeError as exc:
        raise _invalid(f"{RUN_PROBE}: bad options {options!r}: {exc}") from None
    except Exception as exc:  # no GPU, no driver, NVML missing: say so in words
        log.warning("probe failed: %s", exc)
        return {"status": "error", "error": f"The P2P probe could not run: {exc}"}


def with_matrix(report: dict[str, Any]) -> dict[str, Any]:
    report["view"] = {"matrix": probe_matrix_svg(report)}
    return report


def probe_view(ls: MltriageServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """A saved probe report (``mltriage probe --json``, from a GPU node) as the view shows it."""
    options = _first_dict(args, PROBE_VIEW, '{"text": the report JSON}')
    text = options.get("text")
    if not isinstance(text, str) or len(text) > 16_000_000:
        raise _invalid(f"{PROBE_VIEW}: 'text' must be the report's JSON (at most 16 MB)")
    from mltriage.probe.model import ProbeReport

    try:
        report = ProbeReport.from_json(json.loads(text)).to_json()
    except (ValueError, KeyError, TypeError, RecursionError) as exc:  # RecursionError: nested too deep
        raise _invalid(f"{PROBE_VIEW}: not a probe report: {exc}") from None
    return with_matrix(report)


async def explain(ls: MltriageServer, args: tuple[Any, ...]) -> str:
    if not args or not isinstance(args[0], str):
        raise _invalid(f"{EXPLAIN} expects a signature id (string) and optionally a facts object")
    signature = args[0]
    facts = args[1] if len(args) > 1 and isinstance(args[1], dict) else None
    loop = asyncio.get_running_loop()
    if not await loop.run_in_executor(None, engine_calls.known_signature, signature):
        raise _invalid(f"{EXPLAIN}: unknown signature id {signature!r}")
    return await loop.run_in_executor(None, engine_calls.explain, signature, {str(k): str(v) for k, v in (facts or {}).items()})


async def entry_view(ls: MltriageServer, args: tuple[Any, ...]) -> dict[str, str]:
    """An entry rendered for the extension's entry view (issue 22.6: not its raw Markdown): the
    Markdown of `explain` as HTML, raw HTML in it not passed through (`view.entry_html`)."""
    from mltriage.lsp.view import entry_html

    markdown = await explain(ls, args)
    return {"signature": args[0], "html": entry_html(markdown)}


def _exports_request(args: tuple[Any, ...], command: str) -> tuple[str, dict[str, str], str, str]:
    """(script URI, env, signature, title) of a command that puts a fix's exports into a script."""
    options = _first_dict(args, command, '{"script": uri, "env": {NAME: value}, "signature"?: str, "title"?: str}')
    script, env = options.get("script"), options.get("env")
    if not isinstance(script, str) or not isinstance(env, dict) or not env:
        raise _invalid(f"{command}: 'script' must be a URI and 'env' a non-empty object")
    signature = str(options.get("signature") or "fix")
    return script, {str(k): str(v) for k, v in env.items()}, signature, str(options.get("title") or signature)


async def insert_exports(ls: MltriageServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """Apply (through the client, so it can be undone) the exports edit to a chosen script."""
    script, env, signature, title = _exports_request(args, INSERT_EXPORTS)
    try:
        edit = exports_edit(ls, script, env, signature, title)
    except OSError as exc:
        raise _invalid(f"{INSERT_EXPORTS}: cannot read {script}: {exc.strerror or exc}") from None
    if edit is None:
        return {"applied": False, "reason": "The script already exports these values."}
    try:
        result = await ls.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=edit, label="mltriage: add exports"))
    except Exception as exc:  # a client without workspace/applyEdit, or one that failed
        return {"applied": False, "reason": f"The editor did not apply the edit: {exc}"}
    return {"applied": bool(result.applied), "reason": result.failure_reason}


def script_edit(ls: MltriageServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """Where a fix's exports go in a script and their text, for the client to insert (unsaved, shown):
    ``{"uri", "version", "line", "character", "text"}``, or ``{"reason"}`` when there is nothing to add."""
    script, env, signature, title = _exports_request(args, SCRIPT_EDIT)
    try:
        insertion = exports_insertion(ls, script, env, signature, title)
    except OSError as exc:
        raise _invalid(f"{SCRIPT_EDIT}: cannot read {script}: {exc.strerror or exc}") from None
    if insertion is None:
        return {"reason": "The script already exports these values."}
    position, text, version = insertion
    return {"uri": script, "version": version, "line": position.line, "character": position.character, "text": text}


def flag_edit(ls: MltriageServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """The edits that add a fix's flag to a script's command lines, for the client to apply (unsaved,
    shown): ``{"uri", "version", "edits": [{"line", "character", "end_line", "end_character", "text"}]}``
    in document order, or ``{"reason"}`` when there is nothing to change."""
    options = _first_dict(args, FLAG_EDIT, '{"script": uri, "flag": {"command": str, "flag": str, "value"?: str|null, "why"?: str}}')
    script, flag = options.get("script"), options.get("flag")
    if not isinstance(script, str) or not isinstance(flag, dict) or not isinstance(flag.get("command"), str) \
            or not isinstance(flag.get("flag"), str) or not str(flag["flag"]).startswith("--"):
        raise _invalid(f"{FLAG_EDIT}: 'script' must be a URI and 'flag' an object with 'command' and 'flag' ('--name')")
    try:
        edits, version = flag_text_edits(ls, script, LaunchFlag.from_json(flag))
    except OSError as exc:
        raise _invalid(f"{FLAG_EDIT}: cannot read {script}: {exc.strerror or exc}") from None
    if not edits:
        return {"reason": f"No `{flag['command']}` line in the script lacks `{flag['flag']}`."}
    return {
        "uri": script,
        "version": version,
        "edits": [{"line": e.range.start.line, "character": e.range.start.character, "end_line": e.range.end.line,
                   "end_character": e.range.end.character, "text": e.new_text} for e in edits],
    }


async def launch_scripts(ls: MltriageServer, args: tuple[Any, ...]) -> list[dict[str, Any]]:
    return [
        {"uri": from_fs_path(str(c.path)), "path": str(c.path), "distributed": c.strong}
        for c in await ls.script_scanner.candidates(ls)
    ]


def register(server: MltriageServer) -> None:
    # pygls reads handler annotations at call time; `ls` is recognised by name, so leave it bare
    @server.command(DIAGNOSE_TEXT)
    async def _diagnose_text(ls, *args):
        return await diagnose_text(ls, args)

    @server.command(RUN_PROBE)
    async def _run_probe(ls, *args):
        return await run_probe(ls, args)

    @server.command(EXPLAIN)
    async def _explain(ls, *args):
        return await explain(ls, args)

    @server.command(ENTRY_VIEW)
    async def _entry_view(ls, *args):
        return await entry_view(ls, args)

    @server.command(INSERT_EXPORTS)
    async def _insert_exports(ls, *args):
        return await insert_exports(ls, args)

    @server.command(SCRIPT_EDIT)
    def _script_edit(ls, *args):
        return script_edit(ls, args)

    @server.command(FLAG_EDIT)
    def _flag_edit(ls, *args):
        return flag_edit(ls, args)

    @server.command(PROBE_VIEW)
    def _probe_view(ls, *args):
        return probe_view(ls, args)

    @server.command(LAUNCH_SCRIPTS)
    async def _launch_scripts(ls, *args):
        return await launch_scripts(ls, args)
