"""Turn engine findings into LSP diagnostics, as the protocol's JSON.

Each diagnostic carries everything the quick fix and hover need in ``data`` so neither handler
re-parses the log: the signature id, the fix's env exports, the captured facts.

Plain dicts, not lsprotocol's classes: this runs in the engine worker process (`worker`), which
then starts without importing lsprotocol (~0.3 s) and encodes 20,000 diagnostics without cattrs.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from mltriage.lsp.encode import encode_message
from mltriage.lsp.text import utf16_column

SOURCE = "mltriage"
ENTRY_SCHEME = "mltriage-entry"

# LSP DiagnosticSeverity
ERROR, WARNING, INFORMATION, HINT = 1, 2, 3, 4
_ROLE_SEVERITY = {"root-cause": ERROR, "collateral": INFORMATION}

# A finding's place in the editor: (0-based line, start, end) in client units, on that one line.
Span = tuple[int, int, int]


def entry_uri(signature: str, facts: dict[str, str] | None = None) -> str:
    """A document URI the extension serves with the rendered entry (``.md`` so it opens as Markdown)."""
    query = urlencode(sorted((facts or {}).items()))
    return f"{ENTRY_SCHEME}:/{signature}.md" + (f"?{query}" if query else "")


def severity_for(finding: Any) -> int:
    if finding.role in _ROLE_SEVERITY:
        return _ROLE_SEVERITY[finding.role]
    # context: worth a squiggle only when the signature itself is serious
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


def _message(finding: Any, diagnosis: Any) -> str:
    where = []
    if finding.rank_label:
        where.append(finding.rank_label)
    if finding.host:
        where.append(f"host {finding.host}")
    head = finding.title + (f" ({', '.join(where)})" if where else "")
    if finding.role == "root-cause":
        body = finding.root_cause
    elif finding.role == "collateral":
        first = diagnosis.initiating_rank
        body = "Collateral: this is a consequence of the failure that started " + (
            f"on rank {first}." if first is not None else "elsewhere."
        )
    else:
        body = finding.root_cause
    message = f"{head}: {body}" if body else head
    notes = getattr(finding, "notes", None)
    if notes:
        message += "\n" + "\n".join(f"• {n}" for n in notes)
    if finding.count > 1:
        message += f" [seen {finding.count}x]"
    return message


def diagnostic_data(finding: Any) -> dict[str, Any]:
    return {
        "signature": finding.signature,
        "title": finding.title,
        "role": finding.role,
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
    diagnostics = []
    for index, (finding, rng) in enumerate(zip(diagnosis.findings, ranges, strict=True)):
        diagnostic = {
            "range": rng,
            "message": _message(finding, diagnosis),
            "severity": severity_for(finding),
            "code": finding.signature,
            "codeDescription": {"href": entry_uri(finding.signature, finding.facts)},
            "source": SOURCE,
        }
        cause = getattr(finding, "caused_by", None)
        cause = cause if isinstance(cause, int) and 0 <= cause < len(ranges) else initiating
        if finding.role == "collateral" and cause is not None and cause != index:
            root = diagnosis.findings[cause]
            label = f"rank {root.rank}" if root.rank is not None else "the first failure"
            diagnostic["relatedInformation"] = [
                {"location": {"uri": uri, "range": ranges[cause]}, "message": f"Initiating failure on {label}: {root.title}"}
            ]
        diagnostic["data"] = diagnostic_data(finding)
        diagnostics.append(diagnostic)
    return diagnostics


def publish_notification(uri: str, version: int | None, diagnostics: list[dict[str, Any]]) -> bytes:
    """``textDocument/publishDiagnostics``, encoded and framed."""
    params: dict[str, Any] = {"uri": uri, "diagnostics": diagnostics}
    if version is not None:
        params["version"] = version
    return encode_message({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": params})
