"""The engine worker: a process of its own that diagnoses document text for the language server.

In the server's process a long C call of the engine (a regex search, the pre-filter, ``json``) holds
the GIL, and hovers wait for it; here it holds only this process's. The server (`engine_process`)
sends one job at a time over stdin and reads the result from stdout (`wire`): the publish
notification already encoded, what hovers read (`results`), and for a command its JSON answer. Anything the engine prints goes to stderr, the server's log.

It imports the engine and loads the library once, before the first job; it ends when its input
ends, and on Linux with the server (parent-death signal) even in the middle of a job.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import time
from typing import Any, BinaryIO

from mltriage.lsp import wire
from mltriage.lsp.convert import finding_span, publish_notification, to_diagnostics
from mltriage.lsp.results import keepable
from mltriage.lsp.text import editor_lines

log = logging.getLogger("mltriage.worker")


def published(diagnosis: Any, text: str, uri: str, version: int | None, line_offset: int, utf16: bool) -> dict[str, Any]:
    """What the server sends for a diagnosis shown in ``uri`` (the encoded notification) and keeps
    for its hovers (`results.keepable`)."""
    lines = editor_lines(text)
    spans = [finding_span(f, lines, line_offset, utf16) for f in diagnosis.findings]
    notification = publish_notification(uri, version, to_diagnostics(diagnosis, spans, uri))
    return {"notification": notification, **keepable(diagnosis, spans)}


def answer(diagnosis: Any, text: str | None) -> bytes:
    """A command's result: the diagnosis JSON with its view, encoded here rather than on the loop."""
    from mltriage.lsp.view import with_view

    return json.dumps(with_view(diagnosis, text)).encode()


def document_job(request: dict[str, Any]) -> dict[str, Any]:
    from mltriage.lsp import engine_calls

    text, uri = request["text"], request["uri"]
    diagnosis = engine_calls.diagnose(text, request["source"])
    result = published(diagnosis, text, uri, request["version"], 0, request["utf16"])
    if request.get("answer"):
        result["answer"] = answer(diagnosis, None)
    return result


def text_job(request: dict[str, Any]) -> dict[str, Any]:
    from mltriage.lsp import engine_calls

    text = request["text"]
    diagnosis = engine_calls.diagnose(text, request["source"], request["first_line"])
    result = {"answer": answer(diagnosis, text)}
    show = request.get("show")  # {"uri", "line_offset", "utf16"}: also shown in that document
    if show:
        result.update(published(diagnosis, text, show["uri"], None, show["line_offset"], show["utf16"]))
    return result


JOBS = {"document": document_job, "text": text_job}


def _die_with_parent(parent: int) -> None:
    """Linux: be killed when the server dies, even in the middle of a long C call."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the server died before the signal was set up
        os._exit(0)


def serve(inbox: BinaryIO, outbox: BinaryIO) -> None:
    started = time.perf_counter()
    from mltriage.lsp import engine_calls

    try:
        engine_calls.warm_up()
    except Exception:  # a broken library: each job says so, in words
        log.exception("could not load the signature library")
    outbox.write(wire.encode(("ready", time.time(), time.perf_counter() - started)))
    outbox.flush()
    while (message := wire.read(inbox)) is not None:
        _, job, kind, request = message
        request["text"] = wire.read_text(inbox)
        try:
            payload = JOBS[kind](request)
        except Exception as exc:  # the engine's own error: said in words, and the worker goes on
            log.exception("engine failed on a %s job", kind)
            outbox.write(wire.encode(("failed", job, f"{type(exc).__name__}: {exc}")))
        else:
            for frame in wire.frames(job, payload):
                outbox.write(frame)
        outbox.flush()


def main(parent: int) -> None:
    # the protocol keeps its own copies of stdin/stdout; fd 1 becomes stderr, so a stray print
    # from any library lands in the log instead of corrupting a frame
    inbox, outbox = os.fdopen(os.dup(0), "rb"), os.fdopen(os.dup(1), "wb")
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(2, 1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C in a terminal is the server's to handle
    _die_with_parent(parent)
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        serve(inbox, outbox)
    except (BrokenPipeError, EOFError, wire.WireError) as exc:  # the server is gone, or not ours
        log.info("engine worker stops: %s", exc)
