"""Pictures for the diagnosis view, as SVG markup the webview shows inline (no network, no script).

Shapes carry class names only; the view's stylesheet colours them with the theme's CSS variables, so
light, dark and high-contrast themes all work. Every text is escaped here.
"""

from __future__ import annotations

from html import escape
from typing import Any

from mltriage.model import Diagnosis

_ROW = 24
_LEFT = 78
_WIDTH = 640
_MAX_RANKS = 64


def _text(x: float, y: float, text: str, cls: str = "label", anchor: str = "start") -> str:
    return f'<text class="{cls}" x="{x:.0f}" y="{y:.0f}" text-anchor="{anchor}">{escape(text)}</text>'


def timeline_svg(diagnosis: Diagnosis) -> str:
    """Ranks down, time (or log order where the lines have no timestamps) across: each rank's first
    error marked, the initiator's distinctly; a rank with no error of its own is drawn hollow at the
    end (in a hang: the rank that went silent). Empty for fewer than two ranks."""
    roles = sorted(diagnosis.ranks, key=lambda r: r.rank)[:_MAX_RANKS]
    if len(roles) < 2:
        return ""
    sources = {name: i for i, name in enumerate(diagnosis.sources)}
    # each rank's first error as triage named it (RankRole), with its finding's time and place
    first_event: dict[int, Any] = {}
    for role in roles:
        if role.first_error is None:
            continue
        match = next((f for f in diagnosis.findings if f.rank == role.rank and f.signature == role.first_error
                      and f.line == role.first_line), None)
        if match is not None:
            first_event[role.rank] = match
    stamps = [f.timestamp for f in first_event.values()]
    timed = bool(stamps) and all(isinstance(t, (int, float)) for t in stamps)
    if timed:
        t0, t1 = min(stamps), max(stamps)
        position = {r: (f.timestamp - t0) / ((t1 - t0) or 1) for r, f in first_event.items()}
        axis = f"time → ({t1 - t0:.1f} s from the first error to the last)" if t1 > t0 else "time →"
    else:
        order = sorted(first_event, key=lambda r: (sources.get(first_event[r].source, 0), first_event[r].line))
        span = max(1, len(order) - 1)
        position = {r: i / span for i, r in enumerate(order)}
        axis = "log order → (no timestamps)"
    plot_left, plot_right = _LEFT, _WIDTH - 110
    height = 34 + _ROW * len(roles) + 26
    hang = diagnosis.failure_kind == "hang"
    parts = [
        f'<svg class="mltriage-timeline" xmlns="http://www.w3.org/2000/svg" width="100%" '
        f'viewBox="0 0 {_WIDTH} {height}" role="img" aria-label="rank timeline: first error of each rank">',
        _text(plot_left, 16, axis, "axis"),
    ]
    for row, role in enumerate(roles):
        y = 34 + row * _ROW + _ROW / 2
        parts.append(_text(8, y + 4, f"rank {role.rank}"))
        parts.append(f'<line class="lane" x1="{plot_left}" y1="{y:.0f}" x2="{plot_right}" y2="{y:.0f}"/>')
        if role.rank in first_event:
            event = first_event[role.rank]
            x = plot_left + position[role.rank] * (plot_right - plot_left)
            cls = "initiator" if role.role == "initiator" else "collateral"
            what = f"rank {role.rank}: {event.title} (line {event.line})"
            size = 7 if cls == "initiator" else 5
            parts.append(f'<circle class="mark {cls}" cx="{x:.0f}" cy="{y:.0f}" r="{size}"><title>{escape(what)}</title></circle>')
            if cls == "initiator":
                parts.append(_text(x + 10, y + 4, "first error", "note"))
        else:
            x = plot_right
            cls = "silent" if hang else "quiet"
            label = "no error: went silent" if hang else "no error of its own"
            parts.append(f'<circle class="mark {cls}" cx="{x:.0f}" cy="{y:.0f}" r="5"><title>rank {role.rank}: {label}</title></circle>')
            parts.append(_text(x + 10, y + 4, label, "note"))
    legend_y = height - 8
    parts.append(f'<circle class="mark initiator" cx="{plot_left + 6}" cy="{legend_y - 4}" r="5"/>')
    parts.append(_text(plot_left + 16, legend_y, "initiator's first error", "legend"))
    parts.append(f'<circle class="mark collateral" cx="{plot_left + 186}" cy="{legend_y - 4}" r="4"/>')
    parts.append(_text(plot_left + 196, legend_y, "collateral (after it)", "legend"))
    parts.append(f'<circle class="mark {"silent" if hang else "quiet"}" cx="{plot_left + 356}" cy="{legend_y - 4}" r="4"/>')
    parts.append(_text(plot_left + 366, legend_y, "no error (hang)" if hang else "no error", "legend"))
    parts.append("</svg>")
    return "".join(parts)


_VERDICT_CLASS = {
    "OK": "ok", "SLOW": "slow", "CORRUPT": "bad", "CRASH": "bad", "HANG": "bad",
    "NOT_SUPPORTED": "off", "UNTESTED": "untested",
}


def probe_matrix_svg(report: dict[str, Any]) -> str:
    """GPU × GPU, source down, destination across: each tested pair coloured by its verdict with
    its P2P bandwidth in GB/s. Empty when the report has no pairs."""
    pairs = [p for p in (report or {}).get("pairs") or [] if isinstance(p, dict) and isinstance(p.get("src"), int) and isinstance(p.get("dst"), int)]
    if not pairs:
        return ""
    gpus = min(16, max(max(p["src"], p["dst"]) for p in pairs) + 1)
    cell, left, top = 64, 58, 40
    size = max(left + cell * gpus + 10, 430)  # room for the axis line above the cells
    height = top + cell * gpus + 34
    by_pair = {(p["src"], p["dst"]): p for p in pairs}
    parts = [
        f'<svg class="mltriage-matrix" xmlns="http://www.w3.org/2000/svg" width="{size}" '
        f'viewBox="0 0 {size} {height}" role="img" aria-label="GPU peer-to-peer matrix: verdict and GB/s per pair">',
        _text(left, 14, f"P2P probe: {report.get('machine_verdict', '')} (source ↓, destination →, GB/s)", "axis"),
    ]
    for i in range(gpus):
        parts.append(_text(left + i * cell + cell / 2, top - 6, f"GPU{i}", "label", "middle"))
        parts.append(_text(left - 6, top + i * cell + cell / 2 + 4, f"GPU{i}", "label", "end"))
    for src in range(gpus):
        for dst in range(gpus):
            x, y = left + dst * cell, top + src * cell
            pair = by_pair.get((src, dst))
            if src == dst or pair is None:
                parts.append(f'<rect class="cell self" x="{x}" y="{y}" width="{cell - 2}" height="{cell - 2}"/>')
                continue
            verdict = str(pair.get("verdict", "UNTESTED"))
            gbps = (pair.get("bandwidth") or {}).get("p2p_gbps")
            value = f"{gbps:.0f}" if isinstance(gbps, (int, float)) else "—"
            tip = f"GPU{src}→GPU{dst}: {verdict}" + (f", {gbps:.1f} GB/s" if isinstance(gbps, (int, float)) else "")
            if pair.get("reason"):
                tip += f" ({pair['reason']})"
            cls = _VERDICT_CLASS.get(verdict, "untested")
            parts.append(f'<rect class="cell v-{cls}" x="{x}" y="{y}" width="{cell - 2}" height="{cell - 2}"><title>{escape(tip)}</title></rect>')
            parts.append(_text(x + cell / 2 - 1, y + cell / 2 - 2, value, "value", "middle"))
            parts.append(_text(x + cell / 2 - 1, y + cell / 2 + 13, verdict.replace("_", " ").lower(), "verdict", "middle"))
    parts.append("</svg>")
    return "".join(parts)
