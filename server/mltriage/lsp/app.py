"""The server object and the one place where features are wired to it."""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass
from typing import Any, BinaryIO

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from mltriage.lsp.diagnostics import Diagnostics
from mltriage.lsp.engine_process import EngineProcess
from mltriage.lsp.transport import MltriageProtocol, serve_stdio

log = logging.getLogger(__name__)

try:
    from importlib.metadata import version as _dist_version

    VERSION = _dist_version("mltriage")
except Exception:  # running from a source tree or the extension bundle
    VERSION = "0.1.0"


@dataclass
class Settings:
    """What the client may tune through ``initializationOptions``."""

    debounce_s: float = 0.3
    progress_lines: int = 20_000  # at or above this many lines a diagnosis shows a progress bar
    progress_bytes: int = 2_000_000
    trusted: bool = True  # Workspace Trust: the probe runs code, so untrusted workspaces get none
    reveal_edits: bool = False  # the client applies script fixes itself (opens, inserts unsaved, reveals)

    @classmethod
    def from_options(cls, options: Any) -> Settings:
        settings = cls()
        if not isinstance(options, dict):
            return settings
        if isinstance(options.get("debounceMs"), (int, float)):
            settings.debounce_s = max(0.0, float(options["debounceMs"]) / 1000)
        if isinstance(options.get("progressLines"), int):
            settings.progress_lines = max(1, options["progressLines"])
        if isinstance(options.get("progressBytes"), int):
            settings.progress_bytes = max(1, options["progressBytes"])
        if isinstance(options.get("trusted"), bool):
            settings.trusted = options["trusted"]
        if isinstance(options.get("revealEdits"), bool):
            settings.reveal_edits = options["revealEdits"]
        return settings


class MltriageServer(LanguageServer):
    def __init__(self, engine: EngineProcess | None = None) -> None:
        super().__init__(
            "mltriage", VERSION, text_document_sync_kind=types.TextDocumentSyncKind.Incremental, protocol_cls=MltriageProtocol
        )
        self.settings = Settings()
        self.engine = engine or EngineProcess()  # diagnoses run there, never on the event loop's GIL
        self.diagnostics = Diagnostics(self)

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> int:  # type: ignore[override]
        """Serve over stdio with framing and message checks of our own (`transport`); the exit code."""
        return serve_stdio(self, stdin or sys.stdin.buffer, stdout or sys.stdout.buffer)

    def shutdown(self) -> None:
        """The server is exiting (after `exit`, a closed input or an error): no engine process stays."""
        self.engine.close()
        super().shutdown()

    @property
    def utf16(self) -> bool:
        encoding = self.workspace.position_encoding
        return encoding in (None, types.PositionEncodingKind.Utf16, "utf-16")


def build_server(engine: EngineProcess | None = None) -> MltriageServer:
    from mltriage.lsp import code_actions, commands, hover

    server = MltriageServer(engine)

    @server.feature(types.INITIALIZE)
    def on_initialize(ls: MltriageServer, params: types.InitializeParams) -> None:
        ls.settings = Settings.from_options(params.initialization_options)
        log.info("settings: %s", ls.settings)
        ls.engine.start()  # it loads the engine while the client finishes its own start

    @server.feature(types.INITIALIZED)
    def on_initialized(ls: MltriageServer, params: types.InitializedParams) -> None:
        ls.script_scanner.warm(ls)  # the launch scripts, on their own thread, before the first quick fix asks

    @server.feature(types.SHUTDOWN)
    def on_shutdown(ls: MltriageServer, params: None) -> None:
        ls.engine.close()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: MltriageServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.diagnostics.opened(params.text_document.uri, params.text_document.language_id)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: MltriageServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.diagnostics.changed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: MltriageServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.diagnostics.closed(params.text_document.uri)

    hover.register(server)
    code_actions.register(server)
    commands.register(server)
    return server

