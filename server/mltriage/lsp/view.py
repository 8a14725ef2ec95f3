"""What the editor shows of a diagnosis, built once, here.

The extension's diagnosis view, its terminal notification and the hover all show text the server
wrote: the headline, the root cause (only the one triage chose, ``Diagnosis.root_cause``), the fix's
export lines (``model.Fix.exports``), entry links (``convert.entry_uri``) and the entries' Markdown
rendered to HTML (markdown-it, with only their code spans taken as Markdown: `markdown.text`). The extension only places it.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from mltriage import markdown as md
from mltriage.lsp.convert import Filed, entry_uri, filed_as, verdict_root
from mltriage.lsp.pictures import probe_matrix_svg, timeline_svg, topology_matrix_svg
from mltriage.masking import mask_secrets
from mltriage.model import Diagnosis, Finding

# A failed command whose output matched nothing still gets named: its last line that says error.
_ERROR_WORDS = ("error", "exception", "traceback", "failed", "fatal", "killed", "segmentation fault", "abort")


@lru_cache(maxsize=1)
def _markdown():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})


def markdown_html(text: str) -> str:
    """A sentence of the diagnosis as HTML: its code spans as code, the rest as text (`markdown.text`:
    it may hold log text, which never becomes a link, an image or markup)."""
    return _markdown().render(md.text(text or "")).strip()


def entry_html(markdown: str) -> str:
    """An entry's Markdown (`explain`: the library's text, the log's facts escaped there) as HTML;
    raw HTML in it stays text (html off), so nothing but Markdown's own elements is made."""
    return _markdown().render(markdown)


def inline_html(text: str) -> str:
    """The same, as inline HTML (no enclosing paragraph)."""
    return _markdown().renderInline(md.text(text or ""))


def where(finding: Finding) -> str:
    bits = []
    if finding.rank_label:
        bits.append(finding.rank_label)
    if finding.host:
        bits.append(f"host {finding.host}")
    bits.append(f"line {finding.line}")
    return " · ".join(bits)


def headline(diagnosis: Diagnosis) -> str:
    root = diagnosis.root_cause
    if root is None or diagnosis.status != "failure":
        return "no known failure found"
    rank = root.rank if root.rank is not None else diagnosis.initiating_rank
    return root.title + (f" (rank {rank} failed first)" if rank is not None else "")


def _item(index: int, finding: Finding) -> dict[str, Any]:
    return {
        "index": index,
        "signature": finding.signature,
        "title": finding.title,
        "where": where(finding),
        "line": finding.line,
        "severity": finding.severity,
        "entry": entry_uri(finding.signature, finding.facts),
    }


def _root(diagnosis: Diagnosis, index: int, root: Finding) -> dict[str, Any]:
    fix = root.fix
    return {
        **_item(index, root),
        "what_html": markdown_html(root.root_cause),
        "notes_html": [inline_html(n) for n in root.notes],
        "explanation_html": markdown_html(diagnosis.explanation) if diagnosis.explanation else "",
        "fix_summary_html": markdown_html(fix.summary) if fix.summary else "",
        "env": dict(fix.env),
        "exports": "\n".join(fix.exports()),
        "flags_html": [inline_html(f"{flag.instruction}: {flag.why}") for flag in fix.flags],
        "relaunch": fix.relaunch or "",
        "steps_html": [inline_html(s) for s in fix.steps],
        "commands": "\n".join(fix.commands),
        "verify": root.verify,
    }


def notice(diagnosis: Diagnosis, text: str | None = None) -> str:
    """The one line a notification shows for a failed command: the root cause, else the first
    thing found, else the output's last error line; empty when nothing at all says error. Plain
    text: a notification shows no Markdown (no backticks of the signatures' code spans)."""
    root = diagnosis.root_cause if diagnosis.status == "failure" else None
    if root is not None:
        return md.plain(f"{headline(diagnosis)}: {root.root_cause}")
    if diagnosis.findings:
        first = diagnosis.findings[0]
        return f"no known failure, but the output shows {first.title} ({where(first)})"
    line = last_error_line(text or "")
    return f"no known failure signature matched; the last error line: {line}" if line else ""


def last_error_line(text: str) -> str:
    for line in reversed(text[-65536:].splitlines()):
        if any(word in line.lower() for word in _ERROR_WORDS):
            return mask_secrets(line.strip())[:300]  # the document's own text: masked, then cut
    return ""


def view_payload(diagnosis: Diagnosis, text: str | None = None) -> dict[str, Any]:
    """Everything the diagnosis view and the terminal notification show, in display form."""
    root_index = verdict_root(diagnosis)  # the sections follow the verdict, as the Problems panel's severities do
    filed = [(i, f, filed_as(f, i, root_index)) for i, f in enumerate(diagnosis.findings)]
    return {
        "headline": headline(diagnosis),
        "status": diagnosis.status,
        "root": _root(diagnosis, root_index, diagnosis.findings[root_index]) if root_index is not None else None,
        "collateral": [_item(i, f) for i, f, where in filed if where is Filed.COLLATERAL],
        "context": [_item(i, f) for i, f, where in filed if where is Filed.CONTEXT],
        "warnings": list(diagnosis.warnings),
        "notice": notice(diagnosis, text),
        "pictures": {
            "timeline": timeline_svg(diagnosis),
            # this machine's probe (the user ran it), else what the log itself shows of its GPUs' topology
            "matrix": probe_matrix_svg(diagnosis.probe) if diagnosis.probe
            else topology_matrix_svg(diagnosis.topology) if diagnosis.topology else "",
        },
    }


def with_view(diagnosis: Diagnosis, text: str | None = None) -> dict[str, Any]:
    """The diagnosis JSON (schema v1) plus ``view``: what the editor shows of it."""
    answer = diagnosis.to_json()
    answer["view"] = view_payload(diagnosis, text)
    return answer
