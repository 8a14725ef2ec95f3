"""Turn engine findings into LSP diagnostics, as the protocol's JSON.

Each diagnostic carries everything the quick fix and hover need in ``data`` so neither handler
re-parses the log: the signature id, the fix's env exports, the captured facts.

Plain dicts, not lsprotocol's classes: this runs in the engine worker process (`worker`), which
then starts without importing lsprotocol (~0.3 s) and encodes 20,000 diagnostics without cattrs.
"""

from __future__ import annotations

from enum import Enum
from typing import Any
from urllib.parse import urlencode

from mltriage.lsp.encode import encode_message
from mltriage.markdown import plain
from mltriage.lsp.text import utf16_column

SOURCE = "mltriage"
ENTRY_SCHEME = "mltriage-entry"

# LSP DiagnosticSeverity
ERROR, WARNING, INFORMATION, HINT = 1, 2, 3, 4

# A finding's place in the editor: (0-based line, start, end) in client units, on that one line.
Span = tuple[int, int, int]


def entry_uri(signature: str, facts: dict[str, str] | None = None) -> str:
    """A document URI the extension serves with the rendered entry (``.md`` so it opens as Markdown)."""
    query = urlencode(sorted((facts or {}).items()))
    return f"{ENTRY_SCHEME}:/{signature}.md" + (f"?{query}" if query else "")


class Filed(str, Enum):
    """Where the verdict files a finding: the view's sections, the hover and the Problems panel's
    severity all follow it (a finding of role root-cause that triage did not choose is context)."""

    ROOT = "root"
    COLLATERAL = "collateral"
    CONTEXT = "context"


def verdict_root(diagnosis: Any) -> int | None:
    """The index of the root cause triage chose, shown as one only for a failure (warnings alone never are)."""
    return diagnosis.root_cause_index if diagnosis.status == "failure" and diagnosis.root_cause is not None else None


def filed_as(finding: Any, index: int, root: int | None) -> Filed:
    if index == root:
        return Filed.ROOT
    return Filed.COLLATERAL if finding.role == "collateral" else Filed.CONTEXT


def severity_for(finding: Any, filed: Filed) -> int:
    if filed is Filed.ROOT:
        return ERROR
    if filed is Filed.COLLATERAL:
        return INFORMATION
    # context: worth a squiggle only when the signature itself is serious, never an error
    return WARNING if finding.severity in ("critical", "error", "warning") else HINT


def lsp_range(span: Span) -> dict[str, Any]:
    row, start, end = span
    return {"start": {"line": row, "character": start}, "end": {"line": row, "character": end}}


def finding_span(finding: Any, lines: list[str], line_offset: int = 0, utf16: bool = True) -> Span:
    """The match on the firing line, in client units; the whole line when columns are missing.

    ``finding.line`` is a line of the document; ``lines`` are the diagnosed text's, the first of them
    the document's row ``line_offset`` (a selection)."""
    row = max(0, finding.line - 1)
    index = row - line_offset
    text = lines[index] if 0 <= index < len(lines) else ""
    start = getattr(finding, "column_start", None)
    end = getattr(finding, "column_end", None)
    if start is None or end is None or end <= start:
        start, end = 0, len(text)
    start, end = min(start, len(text)), min(end, len(text))
    if utf16:
        start, end = utf16_column(text, start), utf16_column(text, end)
    return row, start, end


def where_label(finding: Any) -> str:
    where = [finding.rank_label] if finding.rank_label else []
    if finding.host:
        where.append(f"host {finding.host}")
    return ", ".join(where)


def _message(finding: Any, filed: Filed, initiating_rank: int | None) -> str:
    """One line of what broke (the Problems panel's row, and the first line of the hover): the
    title, where, and what it is; plain text (no Markdown backticks), the notes left to the hover."""
    where = where_label(finding)
    if filed is Filed.COLLATERAL or not finding.root_cause:  # the title names it; the root cause is elsewhere
        head = finding.title + (f" ({where})" if where else "")
        started = f"on rank {initiating_rank}" if initiating_rank is not None else "elsewhere"
        message = f"{head}: a consequence of the failure that started {started}" if filed is Filed.COLLATERAL else head
    else:  # the root cause sentence says what broke (the title would say it twice)
        message = f"{where}: {finding.root_cause}" if where else finding.root_cause
    message = plain(message)
    if finding.count > 1:
        message += f" [seen {finding.count}x]"
    return message


def diagnostic_data(finding: Any, filed: Filed) -> dict[str, Any]:
    return {
        "signature": finding.signature,
        "title": finding.title,
        "role": finding.role,
        "filed": filed.value,
        "rank": finding.rank,
        "env": dict(finding.fix.env),
        "flags": [flag.to_json() for flag in finding.fix.flags],
        "relaunch": finding.fix.relaunch,
        "facts": dict(finding.facts),
        "verify": finding.verify,
        "p2p": bool(finding.p2p_related),
    }


def to_diagnostics(diagnosis: Any, spans: list[Span], uri: str) -> list[dict[str, Any]]:
    """One diagnostic per finding (``spans``: each finding's, from `finding_span`); collateral ones
    point at the initiating rank's root cause."""
    ranges = [lsp_range(span) for span in spans]
    initiating = diagnosis.root_cause_index
    root = verdict_root(diagnosis)
    diagnostics = []
    for index, (finding, rng) in enumerate(zip(diagnosis.findings, ranges, strict=True)):
        filed = filed_as(finding, index, root)
        diagnostic = {
            "range": rng,
            "message": _message(finding, filed, diagnosis.initiating_rank),
            "severity": severity_for(finding, filed),
            "code": finding.signature,
            "codeDescription": {"href": entry_uri(finding.signature, finding.facts)},
            "source": SOURCE,
        }
        cause = getattr(finding, "caused_by", None)
        cause = cause if isinstance(cause, int) and 0 <= cause < len(ranges) else initiating
        if filed is Filed.COLLATERAL and cause is not None and cause != index:
            root = diagnosis.findings[cause]
            label = f"rank {root.rank}" if root.rank is not None else "the first failure"
            diagnostic["relatedInformation"] = [
                {"location": {"uri": uri, "range": ranges[cause]}, "message": f"Initiating failure on {label}: {root.title}"}
            ]
        diagnostic["data"] = diagnostic_data(finding, filed)
        diagnostics.append(diagnostic)
    return diagnostics


def publish_notification(uri: str, version: int | None, diagnostics: list[dict[str, Any]]) -> bytes:
    """``textDocument/publishDiagnostics``, encoded and framed."""
    params: dict[str, Any] = {"uri": uri, "diagnostics": diagnostics}
    if version is not None:
        params["version"] = version
    return encode_message({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": params})
