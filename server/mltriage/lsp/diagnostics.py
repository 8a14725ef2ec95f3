"""Diagnostics for log documents: debounced, in the engine process, with progress for large files.

A document is diagnosed when its language is ``log`` (or its name says it is a log) or when the
user asked for it once (`opt_in`). Every run is tied to the document version it read; a result for
an older version, or one the user cancelled from the progress notification, is dropped. A run whose
engine process died ends in an "incomplete" diagnosis that says so, never in silence.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from mltriage.lsp.convert import SOURCE, WARNING, lsp_range, publish_notification
from mltriage.lsp.document_sync import text_of
from mltriage.lsp.engine_process import EngineFailed, EngineStopped
from mltriage.lsp.results import Result
from mltriage.lsp.transport import EncodedJSON, send_encoded
from mltriage.lsp.view import with_view
from mltriage.model import Diagnosis

if TYPE_CHECKING:
    from mltriage.lsp.app import MltriageServer

log = logging.getLogger(__name__)

LOG_LANGUAGES = frozenset({"log"})
LOG_SUFFIXES = (".log", ".err", ".out")
INCOMPLETE = "incomplete"  # the code of the one diagnostic a run that could not finish publishes


def uri_to_source(uri: str) -> str:
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def is_log_document(uri: str, language_id: str | None) -> bool:
    if language_id in LOG_LANGUAGES:
        return True
    name = PurePosixPath(urlparse(uri).path).name.lower()
    return name.endswith(LOG_SUFFIXES)


def stopped_diagnosis(source: str, why: str) -> Diagnosis:
    """The diagnosis of text whose run did not finish: incomplete, never healthy, and saying why."""
    reason = f"{why} before the diagnosis finished; edit the text or run it again to retry"
    return Diagnosis(findings=[], sources=[source], unread=[{"name": source, "reason": reason}], warnings=[reason])


def encoded_answer(diagnosis: Diagnosis, text: str | None = None) -> EncodedJSON:
    return EncodedJSON(json.dumps(with_view(diagnosis, text)).encode())


class Diagnostics:
    def __init__(self, server: MltriageServer) -> None:
        self.server = server
        self.results: dict[str, Result] = {}
        self.opted_in: set[str] = set()
        self._languages: dict[str, str] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._answers: dict[str, asyncio.Future[EncodedJSON]] = {}  # a command waits for the next run's JSON

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
        self._answer(uri, error=f"{_name(uri)} was closed before its diagnosis finished")
        self.server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def opt_in(self, uri: str) -> None:
        self.opted_in.add(uri)
        self.schedule(uri, delay=0.0)

    async def answer(self, uri: str) -> EncodedJSON:
        """Diagnose a whole open document now (opting it in) and answer with its diagnosis JSON, made
        in the engine process with the run itself (a newer version's run answers instead)."""
        future = self._answers.get(uri)
        if future is None or future.done():
            future = self._answers[uri] = asyncio.get_running_loop().create_future()
        self.opt_in(uri)
        return await asyncio.shield(future)

    def _answer(self, uri: str, answer: EncodedJSON | None = None, error: str | None = None) -> None:
        future = self._answers.pop(uri, None)
        if future is None or future.done():
            return
        if answer is not None:
            future.set_result(answer)
        else:
            future.set_exception(JsonRpcInvalidParams(f"{error} (see the server log)"))

    # ---- running ------------------------------------------------------------------------
    def schedule(self, uri: str, delay: float) -> None:
        self._cancel(uri)
        self._tasks[uri] = asyncio.get_running_loop().create_task(self._run(uri, delay))

    def _cancel(self, uri: str) -> None:
        task = self._tasks.pop(uri, None)
        if task is not None and not task.done():
            task.cancel()

    async def _run(self, uri: str, delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)
        document = self.server.workspace.text_documents.get(unquote(uri))
        if document is None:  # closed meanwhile
            return
        pieces, count, chars = text_of(document)  # the text as it is now, not joined: the worker joins it
        version = document.version
        large = count >= self.server.settings.progress_lines or chars >= self.server.settings.progress_bytes
        progress = await Progress.start(self.server, f"Diagnosing {_name(uri)} ({count:,} lines)") if large else None
        started = time.perf_counter()
        request = {"text": pieces, "source": uri_to_source(uri), "uri": uri, "version": version,
                   "utf16": self.server.utf16, "answer": uri in self._answers}
        try:
            payload = await run_job(self.server, progress, "document", request)
        except asyncio.CancelledError:
            if progress:
                progress.end("Stopped: the server is shutting down" if self.server.engine.closed else "Superseded by a newer edit")
            raise
        except EngineStopped as exc:
            if progress:
                progress.end("Incomplete: the engine process stopped")
            if not self.server.engine.closed:
                self._stopped(uri, version, str(exc))
            return
        except EngineFailed as exc:  # the engine's own error; report it in words, keep serving
            log.error("engine failed on %s: %s", uri, exc)
            self.server.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Error, message=f"mltriage could not diagnose {_name(uri)}: {exc}")
            )
            if progress:
                progress.end("Failed")
            self._answer(uri, error=f"{_name(uri)} could not be diagnosed")
            return
        if payload is None:  # cancelled by the user
            progress.end("Cancelled")
            self._answer(uri, error=f"the diagnosis of {_name(uri)} was cancelled")
            return
        if self._current_version(uri) != version:
            if progress:
                progress.end("Superseded by a newer edit")
            return
        result = self.results[uri] = Result.from_payload(version, payload)
        send_encoded(self.server.protocol, payload["notification"])
        if "answer" in payload:
            self._answer(uri, EncodedJSON(payload["answer"]))
        elapsed = time.perf_counter() - started
        log.info("diagnosed %s: %d findings in %.3f s", _name(uri), len(result), elapsed)
        if progress:
            progress.end(f"{len(result)} findings in {elapsed:.1f} s")

    def _stopped(self, uri: str, version: int | None, why: str) -> None:
        """The run could not finish: say so in the document (one diagnostic) and to a command waiting
        for it, and wait for the next edit (no retry of what may kill the worker again)."""
        diagnosis = stopped_diagnosis(uri_to_source(uri), why)
        self.results[uri] = Result(version, diagnosis)
        log.warning("could not diagnose %s: %s", _name(uri), why)
        message = f"mltriage could not finish diagnosing this log: {diagnosis.unread[0]['reason']}."
        notice = {"range": lsp_range((0, 0, 0)), "message": message, "severity": WARNING, "code": INCOMPLETE, "source": SOURCE}
        send_encoded(self.server.protocol, publish_notification(uri, version, [notice]))
        self._answer(uri, encoded_answer(diagnosis))

    def _current_version(self, uri: str) -> int | None:
        try:
            return self.server.workspace.get_text_document(uri).version
        except Exception:
            return None

    # ---- selections ---------------------------------------------------------------------
    def keep_selection(self, uri: str, payload: dict[str, Any]) -> None:
        """Show a diagnosed selection's findings in a document the server does not diagnose itself."""
        self.results[uri] = Result.from_payload(self._current_version(uri), payload)
        send_encoded(self.server.protocol, payload["notification"])


async def run_job(server: MltriageServer, progress: Progress | None, kind: str, request: dict[str, Any]) -> dict[str, Any] | None:
    """An engine job's payload; None when the user pressed Cancel on its progress notification.
    Cancelling the caller abandons the job (`EngineProcess`)."""
    job = asyncio.ensure_future(server.engine.run(kind, request))
    waits: set[asyncio.Future[Any]] = {job}
    if progress and progress.cancel_future is not None:
        waits.add(progress.cancel_future)
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        job.cancel()
        raise
    if not job.done():
        job.cancel()
        return None
    return job.result()


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

    def end(self, message: str) -> None:
        self.server.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
        self.server.work_done_progress.tokens.pop(self.token, None)


def _name(uri: str) -> str:
    return PurePosixPath(urlparse(uri).path).name or uri
