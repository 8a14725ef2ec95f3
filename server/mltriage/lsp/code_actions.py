"""Quick fixes for mltriage diagnostics.

Only diagnostics whose source is ours are looked at, and everything an action needs comes from the
diagnostic's ``data``. Edits to launch scripts are computed lazily (`codeAction/resolve`) when the
client supports it, and are versioned so a stale edit is refused rather than misapplied. Nothing is
written unless the user picks the action.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from mltriage.command_line import Edit, flag_edits
from mltriage.lsp.convert import SOURCE, entry_uri
from mltriage.lsp.framing import DaemonThread
from mltriage.lsp.text import utf16_column
from mltriage.lsp.launch_scripts import (
    MAX_SCRIPT_BYTES,
    SCRIPT_SUFFIXES,
    Candidate,
    Scan,
    ScriptIndex,
    insertion_line,
    insertion_text,
    launches_something,
    missing_exports,
    read_script,
)
from mltriage.model import LaunchFlag

if TYPE_CHECKING:
    from mltriage.lsp.app import MltriageServer

log = logging.getLogger(__name__)

# client-side commands the extension registers (they need the clipboard or a UI)
COPY_COMMAND = "mltriage.copyExports"
ENTRY_COMMAND = "mltriage.showEntry"
PROBE_COMMAND = "mltriage.runP2PProbe"
PICK_COMMAND = "mltriage.pickLaunchScript"
APPLY_COMMAND = "mltriage.applyExports"
APPLY_FLAG_COMMAND = "mltriage.applyFlag"
PICK_FLAG_COMMAND = "mltriage.pickScriptForFlag"
TRUST_COMMAND = "workbench.trust.manage"  # VS Code's own: the Workspace Trust editor
MAX_SCRIPT_ACTIONS = 3


class ScriptScanner:
    """The workspace's launch scripts, scanned on a thread of their own (`ScriptIndex`: incremental,
    bounded by a count of entries), never on the event loop: a hover is answered while a scan runs.

    Every request gets a scan that started after it came (a script written a moment ago is
    offered), and costs little: an unchanged tree is only stat'ed. Requests that come while a scan
    waits to start share it."""

    def __init__(self) -> None:
        self._index = ScriptIndex()
        self._thread = DaemonThread("mltriage-scripts")  # a scan stuck on a hung mount never holds the exit
        self._waiting: tuple[tuple[str, ...], object, asyncio.Future[Scan]] | None = None  # queued, not started

    async def candidates(self, ls: MltriageServer) -> list[Candidate]:
        """Launch scripts to offer: the workspace's, or in an untrusted workspace only the scripts
        open in the editor (nothing else of that workspace is read)."""
        if not ls.settings.trusted:
            return open_launch_scripts(ls)
        return (await self.scan(workspace_roots(ls))).candidates

    async def scan(self, roots: list[Path]) -> Scan:
        key = tuple(map(str, roots))
        if self._waiting is None or self._waiting[0] != key:
            loop, token = asyncio.get_running_loop(), object()

            def run() -> Scan:  # on the scanner's thread: from now on, a new request queues a new scan
                loop.call_soon_threadsafe(self._started, token)
                return self._index.scan(roots)

            future = self._thread.run(run)
            self._waiting = (key, token, future)
            future.add_done_callback(lambda done: self._finished(token, done))
        return await asyncio.shield(self._waiting[2])

    def _started(self, token: object) -> None:
        if self._waiting is not None and self._waiting[1] is token:
            self._waiting = None

    def _finished(self, token: object, done: asyncio.Future[Scan]) -> None:
        self._started(token)
        if done.cancelled() or done.exception() is not None:
            return
        scan = done.result()
        if scan.listed or scan.read or not scan.complete:
            log.info("launch scripts: %d found in %s entries (%d directories and %d scripts read)%s", len(scan.candidates),
                     f"{scan.entries:,}", scan.listed, scan.read,
                     "" if scan.complete else f"; stopped at the {self._index.max_entries:,}-entry limit, deeper scripts are not offered")

    def warm(self, ls: MltriageServer) -> None:
        """Scan now, in the background, so the first quick fix finds the tree read already."""
        if ls.settings.trusted:
            asyncio.ensure_future(self.scan(workspace_roots(ls)))


def workspace_roots(ls: MltriageServer) -> list[Path]:
    roots = []
    for folder in ls.workspace.folders.values():
        path = to_fs_path(folder.uri)
        if path:
            roots.append(Path(path))
    if not roots and ls.workspace.root_path:
        roots.append(Path(ls.workspace.root_path))
    return roots


def open_launch_scripts(ls: MltriageServer) -> list[Candidate]:
    found = []
    for uri, document in list(ls.workspace.text_documents.items()):
        path = to_fs_path(uri) if uri.startswith("file:") else None
        if path and path.endswith(SCRIPT_SUFFIXES):
            launches, strong = launches_something(document.source)
            if launches:
                found.append(Candidate(Path(path), strong, 0.0))
    found.sort(key=lambda c: (not c.strong, str(c.path)))
    return found


def script_text_and_version(ls: MltriageServer, uri: str) -> tuple[str, int | None]:
    """The script as the editor has it when open (with its version), else as it is on disk (a
    regular file of bounded size only; never in an untrusted workspace). OSError when unreadable."""
    document = ls.workspace.text_documents.get(uri)
    if document is not None:
        return document.source, document.version
    if not ls.settings.trusted:
        raise PermissionError(f"{uri} is not open, and this workspace is not trusted: open it in the editor first")
    path = to_fs_path(uri) if uri.startswith("file:") else None
    text = read_script(path) if path else None
    if text is None:
        raise OSError(f"{uri} is not a readable regular file of at most {MAX_SCRIPT_BYTES // 1024} KiB")
    return text, None


def exports_insertion(ls: MltriageServer, script_uri: str, env: dict[str, str], signature: str, title: str) -> tuple[types.Position, str, int | None] | None:
    """Where the missing exports go and their text (with the script version it was computed
    for), or None when the script has them all."""
    text, version = script_text_and_version(ls, script_uri)
    missing = missing_exports(text, env)
    if not missing:
        return None
    eol = "\r\n" if "\r\n" in text else "\n"
    lines = text.split(eol)
    if lines and lines[-1] == "":
        lines = lines[:-1]
    row = insertion_line(lines)
    new_text = insertion_text(missing, signature, title, eol)
    if row >= len(lines) and text and not text.endswith(eol):
        new_text = eol + new_text  # the file is all header and lacks a final newline
        row, column = len(lines) - 1, len(lines[-1])
    else:
        column = 0
    return types.Position(line=row, character=column), new_text, version


def exports_edit(ls: MltriageServer, script_uri: str, env: dict[str, str], signature: str, title: str) -> types.WorkspaceEdit | None:
    """A versioned edit inserting the missing exports, or None when the script has them all."""
    insertion = exports_insertion(ls, script_uri, env, signature, title)
    if insertion is None:
        return None
    position, new_text, version = insertion
    return types.WorkspaceEdit(
        document_changes=[
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=script_uri, version=version),
                edits=[types.TextEdit(range=types.Range(start=position, end=position), new_text=new_text)],
            )
        ]
    )


def _position(text: str, offset: int) -> types.Position:
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    return types.Position(line=line, character=utf16_column(text[start:], offset - start))


def flag_text_edits(ls: MltriageServer, script_uri: str, flag: LaunchFlag) -> tuple[list[types.TextEdit], int | None]:
    """The edits adding ``flag`` to every line of the script that runs its program (empty when
    each has it already), with the script version they were computed for."""
    text, version = script_text_and_version(ls, script_uri)
    return [_text_edit(text, e) for e in flag_edits(text, flag)], version


def _text_edit(text: str, edit: Edit) -> types.TextEdit:
    return types.TextEdit(range=types.Range(start=_position(text, edit.start), end=_position(text, edit.end)), new_text=edit.new_text)


def flag_edit(ls: MltriageServer, script_uri: str, flag: LaunchFlag) -> types.WorkspaceEdit | None:
    """A versioned edit adding the flag to the script's command lines, or None when they have it."""
    edits, version = flag_text_edits(ls, script_uri, flag)
    if not edits:
        return None
    return types.WorkspaceEdit(
        document_changes=[
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=script_uri, version=version), edits=edits
            )
        ]
    )


def _flags(data: dict[str, Any]) -> list[LaunchFlag]:
    flags = []
    for item in data.get("flags") or []:
        try:
            flags.append(LaunchFlag.from_json(item))
        except (KeyError, TypeError, AttributeError):
            continue  # a client's stale or foreign data: offer nothing for it
    return flags


def _ours(diagnostic: types.Diagnostic) -> dict[str, Any] | None:
    if diagnostic.source != SOURCE or not isinstance(diagnostic.data, dict):
        return None
    return diagnostic.data if isinstance(diagnostic.data.get("signature"), str) else None


def _export_block(env: dict[str, str]) -> str:
    from mltriage.lsp.launch_scripts import export_lines

    return "\n".join(export_lines(env)) + "\n"


def _relative(path: Path, roots: list[Path]) -> str:
    for root in roots:
        try:
            return str(path.relative_to(root))
        except ValueError:
            continue
    return str(path)


def _readable_scripts(ls: MltriageServer, candidates):
    """(candidate, URI, text) of the launch scripts that can be read (the editor's copy when open)."""
    for candidate in candidates:
        uri = from_fs_path(str(candidate.path))
        try:
            text, _ = script_text_and_version(ls, uri)
        except OSError:
            continue
        yield candidate, uri, text


def _script_action(ls: MltriageServer, diagnostic: types.Diagnostic, title: str, fix: dict[str, Any], preferred: bool,
                   reveal: types.Command, edit) -> types.CodeAction:
    """A quick fix that changes a launch script: with ``reveal_edits`` the client opens the script and
    makes the change unsaved, for the user to review (an edit applied by the editor itself would be
    saved by "files.refactoring.autoSave"); else the workspace edit, now (``edit()``) or at resolve
    (``edit`` None)."""
    action = types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic],
                              is_preferred=preferred, data=fix)
    if ls.settings.reveal_edits:
        action.command = reveal
    elif edit is not None:
        action.edit = edit()
    return action


def actions_for(ls: MltriageServer, diagnostic: types.Diagnostic, data: dict[str, Any], resolve_later: bool,
                scripts: list[Candidate]) -> list[types.CodeAction]:
    """The quick fixes for one of our diagnostics; ``scripts``: the launch scripts to offer."""
    signature, title = data["signature"], str(data.get("title") or data["signature"])
    env = {str(k): str(v) for k, v in (data.get("env") or {}).items()}
    facts = {str(k): str(v) for k, v in (data.get("facts") or {}).items()}
    flags = _flags(data)
    actions: list[types.CodeAction] = []
    roots = workspace_roots(ls)
    preferred = True
    if env:
        for candidate, uri, text in _readable_scripts(ls, scripts[:MAX_SCRIPT_ACTIONS]):
            missing = missing_exports(text, env)
            if not missing:
                continue
            names = ", ".join(missing)
            fix = {"script": uri, "env": env, "signature": signature, "title": title}
            actions.append(_script_action(
                ls, diagnostic, f"mltriage: add `export {names}` to {_relative(candidate.path, roots)}", fix, preferred,
                types.Command(title="Add exports", command=APPLY_COMMAND, arguments=[fix]),
                None if resolve_later else lambda: exports_edit(ls, uri, env, signature, title),
            ))
            preferred = False
    # beside the exports: each flag on the command line of the scripts that run its program
    for flag in flags:
        offered = 0
        for candidate, uri, text in _readable_scripts(ls, scripts):
            if not flag_edits(text, flag):
                continue  # runs no such program, or has the flag already
            fix = {"script": uri, "flag": flag.to_json()}
            actions.append(_script_action(
                ls, diagnostic, f"mltriage: add `{flag.argument}` to `{flag.command}` in {_relative(candidate.path, roots)}",
                fix, preferred, types.Command(title="Add flag", command=APPLY_FLAG_COMMAND, arguments=[fix]),
                None if resolve_later else lambda: flag_edit(ls, uri, flag),
            ))
            preferred = False
            offered += 1
            if offered >= MAX_SCRIPT_ACTIONS:
                break
    relaunch = data.get("relaunch")
    if flags and isinstance(relaunch, str) and relaunch:
        # the log shows the command it ran: a log is a record, so the corrected command goes to the clipboard
        actions.append(
            types.CodeAction(
                title=f"mltriage: copy this run's command with `{'`, `'.join(f.argument for f in flags)}`",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic],
                command=types.Command(title="Copy command", command=COPY_COMMAND, arguments=[relaunch + "\n", "the command"]),
            )
        )
    trusted = ls.settings.trusted
    if not trusted:
        # Restricted Mode reads no script of the workspace the user has not opened: offer to open one
        for flag in flags:
            actions.append(types.CodeAction(
                title=f"mltriage: add `{flag.argument}` to `{flag.command}` in a launch script you open…",
                kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic],
                command=types.Command(title="Open launch script", command=PICK_FLAG_COMMAND, arguments=[flag.to_json()]),
            ))
    if env:
        actions.append(
            types.CodeAction(
                title="mltriage: add the exports to a script you choose…" if trusted else "mltriage: add the exports to a launch script you open…",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic],
                command=types.Command(title="Choose launch script", command=PICK_COMMAND, arguments=[env, signature, title]),
            )
        )
        actions.append(
            types.CodeAction(
                title="mltriage: copy the fix's exports",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic],
                command=types.Command(title="Copy exports", command=COPY_COMMAND, arguments=[_export_block(env)]),
            )
        )
    actions.append(
        types.CodeAction(
            title=f"mltriage: open the entry for {signature}",
            kind=types.CodeActionKind.QuickFix,
            diagnostics=[diagnostic],
            command=types.Command(title="Show entry", command=ENTRY_COMMAND, arguments=[entry_uri(signature, facts)]),
        )
    )
    if not trusted and (env or flags or data.get("p2p")):
        # and what trusting the folder gives: the scripts found and edited in place, the P2P probe
        actions.append(types.CodeAction(
            title="mltriage: trust this folder to have its launch scripts found" + (" and the P2P probe run" if data.get("p2p") else "")
                  + " (Restricted Mode)",
            kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic],
            command=types.Command(title="Manage Workspace Trust", command=TRUST_COMMAND, arguments=[]),
        ))
    if data.get("p2p") and trusted:
        actions.append(
            types.CodeAction(
                title="mltriage: run the GPU peer-to-peer probe",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic],
                command=types.Command(title="Run P2P probe", command=PROBE_COMMAND, arguments=[]),
            )
        )
    return actions


def _supports_resolve(ls: MltriageServer) -> bool:
    text_document = ls.client_capabilities.text_document
    code_action = text_document.code_action if text_document else None
    support = code_action.resolve_support if code_action else None
    return bool(support and "edit" in support.properties)


def register(server: MltriageServer) -> None:
    server.script_scanner = ScriptScanner()

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix], resolve_provider=True),
    )
    async def code_action(ls: MltriageServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        only = params.context.only
        if only and not any(kind.startswith(types.CodeActionKind.QuickFix) for kind in only):
            return None
        ours = [(diagnostic, data) for diagnostic in params.context.diagnostics if (data := _ours(diagnostic)) is not None]
        if not ours:
            return None
        scripts = await ls.script_scanner.candidates(ls)  # off the loop: hovers go on meanwhile
        resolve_later = _supports_resolve(ls)
        actions: list[types.CodeAction] = []
        for diagnostic, data in ours:
            actions.extend(actions_for(ls, diagnostic, data, resolve_later, scripts))
        return actions or None

    @server.feature(types.CODE_ACTION_RESOLVE)
    def resolve(ls: MltriageServer, action: types.CodeAction) -> types.CodeAction:
        data = action.data if isinstance(action.data, dict) else {}
        if action.edit is None and action.command is None and "script" in data:
            if "flag" in data:
                action.edit = flag_edit(ls, data["script"], LaunchFlag.from_json(data["flag"]))
            else:
                action.edit = exports_edit(ls, data["script"], data["env"], data["signature"], data["title"])
        return action
