"""torchrun error files (``error.json`` written by ``@record``) read as log text.

The file holds the failing worker's traceback and a Unix timestamp of the failure: precise,
per-rank timing evidence that the console log rounds to whole seconds or lacks entirely.

torch reads two shapes (``ProcessFailure._get_error_data`` in
``torch/distributed/elastic/multiprocessing/errors/__init__.py``, torch 2.13.0), and so do we:

- ``{"message": {"message": str, "extraInfo": {"py_callstack": str, "timestamp": "<int>"}}}``, what
  ``ErrorHandler.record_exception`` writes (the agent may add ``"errorCode": int``);
- ``{"message": str, "timestamp": int}``, the "new message format" it also accepts.

A file that is an error file, by its name (``error.json``) or by its top-level ``"message"``, but of
any other shape is refused with the field that is wrong (``BadErrorFile``): the caller lists it as
not read, so the diagnosis says it is incomplete. Any other JSON file is no error file and is read
as plain text (JSON-lines metrics, configs).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

MAX_ERROR_FILE = 4 * 1024 * 1024
ERROR_FILE_NAME = "error.json"  # what torchrun's --log-dir layout names it (attempt_N/<rank>/error.json)


class BadErrorFile(ValueError):
    """An error file that cannot be read as one: not JSON, nested too deep, or a field of the wrong type."""


def _kind(value: object) -> str:
    """How a JSON value's type reads in a sentence: 'a list', 'an int', 'null'."""
    if value is None:
        return "null"
    name = {"dict": "object", "str": "str", "bool": "bool"}.get(type(value).__name__, type(value).__name__)
    return ("an " if name[0] in "aeiou" else "a ") + name if name != "object" else "an object"


def _get(obj: dict, key: str, types: tuple[type, ...], where: str) -> object:
    """``obj[key]`` if it is absent/null (``None``) or of one of ``types`` (a bool is no number)."""
    value = obj.get(key)
    if value is None or (isinstance(value, types) and not isinstance(value, bool)):
        return value
    want = " or ".join("an object" if t is dict else "text" if t is str else "an int" for t in types)
    raise BadErrorFile(f"'{where}' is {_kind(value)}, not {want}")


def _timestamp(value: object) -> str:
    """The failure time as the prefix parser reads it ("" when the file gives none)."""
    if value is None:
        return ""
    text = str(value).strip()
    if not text.isdigit():
        raise BadErrorFile(f"'timestamp' is not a whole number of seconds: {text[:40]!r}")
    try:
        return datetime.fromtimestamp(int(text), tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") + " "
    except (OverflowError, OSError, ValueError):
        raise BadErrorFile(f"'timestamp' is out of range: {text[:40]}") from None


def as_log_text(data: bytes, name: str = "") -> bytes | None:
    """The error file as log lines (timestamped traceback); ``None`` if it is no error file (read it
    as text); ``BadErrorFile`` if it is one that cannot be read. ``name``: the file's name."""
    named = name == ERROR_FILE_NAME
    if len(data) > MAX_ERROR_FILE:
        return None  # far beyond any error file: read as text, which is bounded
    try:
        doc = json.loads(data)
    except RecursionError:  # the decoder's own guard: raised cleanly, before the stack is at risk
        if named:
            raise BadErrorFile("nests deeper than the JSON reader's recursion limit") from None
        return None
    except (ValueError, UnicodeDecodeError) as exc:
        if named:
            raise BadErrorFile(f"not valid JSON: {str(exc)[:120]}") from None
        return None
    if not isinstance(doc, dict) or "message" not in doc:
        if named:
            raise BadErrorFile("no 'message' field (torchrun writes {\"message\": ...})" if isinstance(doc, dict)
                               else f"the document is {_kind(doc)}, not an object")
        return None
    message = doc["message"]
    if isinstance(message, str):
        text, stamp = message, _timestamp(_get(doc, "timestamp", (int, str), "timestamp"))
    elif isinstance(message, dict):
        extra = _get(message, "extraInfo", (dict,), "extraInfo") or {}
        callstack = _get(extra, "py_callstack", (str,), "py_callstack")
        summary = _get(message, "message", (str,), "message.message")
        text = callstack if callstack and callstack.strip() else summary or ""
        stamp = _timestamp(_get(extra, "timestamp", (int, str), "timestamp"))
    else:
        raise BadErrorFile(f"'message' is {_kind(message)}, not an object or text")
    lines = text.rstrip("\n").split("\n")
    # the timestamp goes on the header line, where the prefix parser reads it
    lines[0] = stamp + lines[0]
    return ("\n".join(lines) + "\n").encode("utf-8", "replace")


def read_error_file(path: Path) -> bytes | None:
    """``as_log_text`` of the file at ``path`` (``OSError`` if it cannot be read)."""
    with open(path, "rb") as fh:
        return as_log_text(fh.read(MAX_ERROR_FILE + 1), path.name)
