"""Diagnostics for log documents: debounced, off the event loop, with progress for large files.

A document is diagnosed when its language is ``log`` (or its name says it is a log) or when the
user asked for it once (`opt_in`). Every run is tied to the document version it read; a result for
an older version, or one the user cancelled from the progress notification, is dropped.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from lsprotocol import types

from mltriage.lsp import engine_calls
from mltriage.lsp.convert import to_diagnostics
from mltriage.lsp.transport import encode_notification, send_encoded

if TYPE_CHECKING:
    from mltriage.lsp.app import MltriageServer

log = logging.getLogger(__name__)

LOG_LANGUAGES = frozenset({"log"})
LOG_SUFFIXES = (".log", ".err", ".out")


@dataclass
class Result:
    """What the last finished run found for one document (hover and quick fixes read this)."""

    version: int | None
    diagnosis: Any
    lines: list[str]
    line_offset: int = 0
    diagnostics: list[types.Diagnostic] = field(default_factory=list)


def uri_to_source(uri: str) -> str:
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def is_log_document(uri: str, language_id: str | None) -> bool:
    if language_id in LOG_LANGUAGES:
        return True
    name = PurePosixPath(urlparse(uri).path).name.lower()
    return name.endswith(LOG_SUFFIXES)


class Diagnostics:
    def __init__(self, server: MltriageServer) -> None:
        self.server = server
        self.results: dict[str, Result] = {}
        self.opted_in: set[str] = set()
        self._languages: dict[str, str] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}

    # ---- document lifecycle -------------------------------------------------------------
    def wants(self, uri: str) -> bool:
        return uri in self.opted_in or is_log_document(uri, self._languages.get(uri))

    def opened(self, uri: str, language_id: str) -> None:
        self._languages[uri] = language_id
        if self.wants(uri):
            self.schedule(uri, delay=0.0)

    def changed(self, uri: str) -> None:
        if self.wants(uri):
            self.schedule(uri, delay=self.server.settings.debounce_s)

    def closed(self, uri: str) -> None:
        self._cancel(uri)
        self._languages.pop(uri, None)
        self.opted_in.discard(uri)
        self.results.pop(uri, None)
        self.server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def opt_in(self, uri: str) -> None:
        self.opted_in.add(uri)
        self.schedule(uri, delay=0.0)

    # ---- running ------------------------------------------------------------------------
    def schedule(self, uri: str, delay: float) -> None:
        self._cancel(uri)
        self._tasks[uri] = asyncio.get_running_loop().create_task(self._run(uri, delay))

    def _cancel(self, uri: str) -> None:
        task = self._tasks.pop(uri, None)
        if task is not None and not task.done():
            task.cancel()

    async def wait_idle(self) -> None:
        """For the benchmark and tests: wait until every scheduled run has finished."""
        while tasks := [t for t in self._tasks.values() if not t.done()]:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _run(self, uri: str, delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)
        try:
            document = self.server.workspace.get_text_document(uri)
            text, version = document.source, document.version
        except Exception:  # closed meanwhile
            return
        count = text.count("\n") or text.count("\r")  # C-speed estimate; the exact split happens off the loop
        count += bool(text) and not text.endswith(("\n", "\r"))
        large = count >= self.server.settings.progress_lines or len(text) >= self.server.settings.progress_bytes
        progress = await Progress.start(self.server, f"Diagnosing {_name(uri)} ({count:,} lines)") if large else None
        started = time.perf_counter()
        try:
            outcome = await self._diagnose(text, uri, version, progress)
        except asyncio.CancelledError:
            if progress:
                progress.end("Superseded by a newer edit")
            raise
        if outcome is None:  # cancelled by the user or failed (already reported)
            if progress:
                progress.end("Cancelled" if progress.cancelled else "Failed")
            return
        current = self._current_version(uri)
        if current != version:
            if progress:
                progress.end("Superseded by a newer edit")
            return
        diagnosis, lines, diagnostics, notification = outcome
        self.results[uri] = Result(version, diagnosis, lines, 0, diagnostics)
        send_encoded(self.server.protocol, notification)
        elapsed = time.perf_counter() - started
        log.info("diagnosed %s: %d findings in %.3f s", _name(uri), len(diagnostics), elapsed)
        if progress:
            progress.end(f"{len(diagnostics)} findings in {elapsed:.1f} s")

    def _diagnose_and_encode(self, text: str, uri: str, version: int | None, utf16: bool) -> tuple[Any, list[str], list[types.Diagnostic], bytes]:
        """On the engine thread: the diagnosis, its diagnostics and the encoded publish message.

        Converting and encoding 10,000 findings takes most of a second of Python; done on the event
        loop it held every hover up for that long, here it shares the GIL in small slices."""
        diagnosis, lines = engine_calls.diagnose_document(text, uri_to_source(uri))
        diagnostics = to_diagnostics(diagnosis, lines, uri, utf16=utf16)
        params = types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=diagnostics)
        notification = encode_notification(self.server.protocol, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, params)
        return diagnosis, lines, diagnostics, notification

    async def _diagnose(self, text: str, uri: str, version: int | None, progress: Progress | None) -> Any:
        loop = asyncio.get_running_loop()
        job = loop.run_in_executor(engine_calls.ENGINE_POOL, self._diagnose_and_encode, text, uri, version, self.server.utf16)
        waits: set[asyncio.Future[Any]] = {job}
        if progress and progress.cancel_future is not None:
            waits.add(progress.cancel_future)
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            job.cancel()
            raise
        if not job.done():  # the user pressed Cancel; the worker finishes and its result is dropped
            job.cancel()
            return None
        try:
            return job.result()
        except Exception as exc:  # the engine's own error; report it in words, keep serving
            log.exception("engine failed on %s", uri)
            self.server.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Error, message=f"mltriage could not diagnose {_name(uri)}: {exc}")
            )
            return None

    def _current_version(self, uri: str) -> int | None:
        try:
            return self.server.workspace.get_text_document(uri).version
        except Exception:
            return None

    # ---- selections ---------------------------------------------------------------------
    def publish_selection(self, uri: str, diagnosis: Any, selection_lines: list[str], line_offset: int) -> None:
        """Show a diagnosed selection's findings in a document the server does not diagnose itself."""
        diagnostics = to_diagnostics(diagnosis, selection_lines, uri, line_offset=line_offset, utf16=self.server.utf16)
        self.results[uri] = Result(self._current_version(uri), diagnosis, selection_lines, line_offset, diagnostics)
        self.server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics))


class Progress:
    """A server-initiated `$/progress` bar with a Cancel button (when the client supports it)."""

    def __init__(self, server: MltriageServer, token: str) -> None:
        self.server, self.token = server, token
        self.cancel_future: asyncio.Future[Any] | None = None

    @classmethod
    async def start(cls, server: MltriageServer, title: str) -> Progress | None:
        window = server.client_capabilities.window
        if not (window and window.work_done_progress):
            return None
        self = cls(server, f"mltriage-{uuid.uuid4()}")
        try:
            await server.work_done_progress.create_async(self.token)
        except Exception as exc:
            log.warning("client refused a progress token: %s", exc)
            return None
        self.cancel_future = asyncio.wrap_future(server.work_done_progress.tokens[self.token])
        server.work_done_progress.begin(self.token, types.WorkDoneProgressBegin(title=title, cancellable=True, message="reading log"))
        return self

    @property
    def cancelled(self) -> bool:
        return self.cancel_future is not None and self.cancel_future.cancelled()

    def end(self, message: str) -> None:
        self.server.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
        self.server.work_done_progress.tokens.pop(self.token, None)


def _name(uri: str) -> str:
    return PurePosixPath(urlparse(uri).path).name or uri
