"""torchrun error files (``error.json`` written by ``@record``) read as log text.

The file holds the failing worker's traceback and a Unix timestamp of the failure: precise,
per-rank timing evidence that the console log rounds to whole seconds or lacks entirely.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

MAX_ERROR_FILE = 4 * 1024 * 1024


def as_log_text(data: bytes) -> bytes | None:
    """The error file as log lines (timestamped traceback), or None if it is not one."""
    if len(data) > MAX_ERROR_FILE:
        return None
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None
    message = doc.get("message") if isinstance(doc, dict) else None
    if not isinstance(message, dict):
        return None
    extra = message.get("extraInfo") or {}
    callstack = extra.get("py_callstack") if isinstance(extra, dict) else None
    text = callstack if isinstance(callstack, str) and callstack.strip() else str(message.get("message", ""))
    stamp = ""
    try:
        ts = int(extra.get("timestamp"))
        stamp = datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") + " "
    except (TypeError, ValueError, OverflowError, OSError):
        pass
    lines = text.rstrip("\n").split("\n")
    # the timestamp goes on the header line, where the prefix parser reads it
    lines[0] = stamp + lines[0]
    return ("\n".join(lines) + "\n").encode("utf-8", "replace")
