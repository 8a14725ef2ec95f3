"""Pictures for the diagnosis view, as SVG markup the webview shows inline (no network, no script).

Shapes carry class names only; the view's stylesheet colours them with the theme's CSS variables, so
light, dark and high-contrast themes all work. Every text is escaped here.
"""

from __future__ import annotations

from html import escape
from typing import Any

from mltriage.model import Diagnosis

_ROW = 28
_LEFT = 78
_WIDTH = 720
_MAX_RANKS = 64


def _text(x: float, y: float, text: str, cls: str = "label", anchor: str = "start") -> str:
    return f'<text class="{cls}" x="{x:.0f}" y="{y:.0f}" text-anchor="{anchor}">{escape(text)}</text>'


def _event_order(diagnosis: Diagnosis, first_event: dict[int, Any]) -> list[int] | None:
    """The ranks in the order their first errors happened, from the engine's timeline (time order,
    each line without a time of its own placed by the launcher's stamped lines around it), the
    initiator first (what the others are a consequence of); None when no line has a timestamp."""
    if not any(t.timestamp is not None for t in diagnosis.timeline):
        return None
    at = {(t.source, t.line): i for i, t in enumerate(diagnosis.timeline)}
    initiator = diagnosis.initiating_rank
    return sorted(first_event, key=lambda r: (r != initiator, at.get(_place(first_event[r], r), len(at)), r))


def _place(finding: Any, rank: int) -> tuple[str, int]:
    """Where ``rank`` reported ``finding``: a failure many ranks share keeps each rank's own line (and file)."""
    source = finding.rank_places.get(rank, (finding.source, None))[0] if finding.rank_places else finding.source
    return source, finding.line_of(rank)


def timeline_svg(diagnosis: Diagnosis) -> str:
    """Ranks down, the order of their first errors across (by the launcher's timestamps where the log
    has them, else log order): each rank's first error marked, the initiator's distinctly; a rank
    with no error of its own is drawn hollow at the end (in a hang: the rank that went silent). Drawn
    at its own size (the view scrolls it), never scaled down to an unreadable legend. Empty for
    fewer than two ranks."""
    roles = sorted(diagnosis.ranks, key=lambda r: r.rank)[:_MAX_RANKS]
    if len(roles) < 2:
        return ""
    sources = {name: i for i, name in enumerate(diagnosis.sources)}
    # each rank's first error as triage named it (RankRole), with its finding's time and place
    first_event: dict[int, Any] = {}
    for role in roles:
        if role.first_error is None:
            continue
        # triage's verdict names the finding by signature and line; a finding many ranks share speaks for each of them
        match = next((f for f in diagnosis.findings if role.rank in f.reporting_ranks and f.signature == role.first_error
                      and f.line_of(role.rank) == role.first_line), None)
        if match is not None:
            first_event[role.rank] = match
    order = _event_order(diagnosis, first_event)
    if order is not None:
        axis = "order of first errors → (the launcher's timestamps; initiator first)"
    else:
        order = sorted(first_event, key=lambda r: (sources.get(_place(first_event[r], r)[0], 0), _place(first_event[r], r)[1], r))
        axis = "log order of first errors → (no line has a timestamp)"
    span = max(1, len(order) - 1)
    position = {r: i / span for i, r in enumerate(order)}
    plot_left, plot_right = _LEFT, _WIDTH - 150
    height = 34 + _ROW * len(roles) + 30
    hang = diagnosis.failure_kind == "hang"
    parts = [
        f'<svg class="mltriage-timeline" xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" height="{height}" '
        f'viewBox="0 0 {_WIDTH} {height}" role="img" aria-label="rank timeline: first error of each rank">',
        _text(plot_left, 16, axis, "axis"),
    ]
    drawn: set[str] = set()
    for row, role in enumerate(roles):
        y = 34 + row * _ROW + _ROW / 2
        parts.append(_text(8, y + 5, f"rank {role.rank}"))
        parts.append(f'<line class="lane" x1="{plot_left}" y1="{y:.0f}" x2="{plot_right}" y2="{y:.0f}"/>')
        if role.rank in first_event:
            event = first_event[role.rank]
            x = plot_left + position[role.rank] * (plot_right - plot_left)
            cls = "initiator" if role.role == "initiator" else "collateral"
            what = f"rank {role.rank}: {event.title} (line {event.line_of(role.rank)})"
            size = 8 if cls == "initiator" else 6
            parts.append(f'<circle class="mark {cls}" cx="{x:.0f}" cy="{y:.0f}" r="{size}"><title>{escape(what)}</title></circle>')
            if cls == "initiator":
                parts.append(_text(x + 12, y + 5, "first error", "note"))
        else:
            x = plot_right
            cls = "silent" if hang else "quiet"
            label = "no error: went silent" if hang else "no error of its own"
            parts.append(f'<circle class="mark {cls}" cx="{x:.0f}" cy="{y:.0f}" r="6"><title>rank {role.rank}: {label}</title></circle>')
            parts.append(_text(x + 12, y + 5, label, "note"))
        drawn.add(cls)
    # the legend names only what is drawn
    legend = [("initiator", "initiator's first error"), ("collateral", "collateral (after it)"),
              ("silent", "no error (went silent)"), ("quiet", "no error of its own")]
    x, legend_y = plot_left, height - 10
    for cls, label in legend:
        if cls in drawn:
            parts.append(f'<circle class="mark {cls}" cx="{x + 6}" cy="{legend_y - 5}" r="6"/>')
            parts.append(_text(x + 18, legend_y, label, "legend"))
            x += 30 + 8 * len(label)
    parts.append("</svg>")
    return "".join(parts)


_VERDICT_CLASS = {
    "OK": "ok", "SLOW": "slow", "CORRUPT": "bad", "CRASH": "bad", "HANG": "bad",
    "NOT_SUPPORTED": "off", "UNTESTED": "untested",
}


def _pair_key(key: str) -> tuple[int, int] | None:
    src, _, dst = key.partition("->")
    return (int(src), int(dst)) if src.isdigit() and dst.isdigit() else None


def topology_pairs(topology: dict[str, Any]) -> list[dict[str, Any]]:
    """The GPU pairs of a topology pasted in the log (``nvidia-smi topo -m``, p2pBandwidthLatencyTest:
    `probe.pasted`) in the probe report's pair form: P2P access as the verdict (OK, NOT_SUPPORTED,
    SLOW where P2P is no faster than without it, UNTESTED where only the link is known), the P2P
    bandwidth where measured, the link (NV18, SYS, ...) as the cell's word."""
    links = {k: v for key, v in (topology.get("links") or {}).items() if (k := _pair_key(key))}
    access = {k: v for key, v in (topology.get("p2p_access") or {}).items() if (k := _pair_key(key))}
    matrices = topology.get("matrices") or {}
    bandwidth = matrices.get("unidirectional_enabled_writes") or matrices.get("unidirectional_enabled") or {}
    disabled = matrices.get("unidirectional_disabled") or {}
    pairs = []
    for src, dst in sorted(set(links) | set(access) | {k for key in bandwidth if (k := _pair_key(key))}):
        if src == dst:
            continue
        key = f"{src}->{dst}"
        gbps = bandwidth.get(key)
        if access.get((src, dst)) is False:
            verdict = "NOT_SUPPORTED"
        elif isinstance(gbps, (int, float)) and isinstance(disabled.get(key), (int, float)) and gbps <= disabled[key]:
            verdict = "SLOW"
        elif access.get((src, dst)) is True:
            verdict = "OK"
        else:
            verdict = "UNTESTED"
        pair: dict[str, Any] = {"src": src, "dst": dst, "verdict": verdict, "word": links.get((src, dst)) or verdict}
        if isinstance(gbps, (int, float)):
            pair["bandwidth"] = {"p2p_gbps": gbps}
        pairs.append(pair)
    return pairs


def topology_matrix_svg(topology: dict[str, Any]) -> str:
    """The GPU × GPU picture of a topology pasted in the log; empty when it names no GPU pair."""
    sources = " + ".join(str(s) for s in topology.get("sources") or [])
    return probe_matrix_svg({"pairs": topology_pairs(topology)}, f"pasted in the log: {sources} (source ↓, destination →, GB/s)")


def probe_matrix_svg(report: dict[str, Any], title: str | None = None) -> str:
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
        _text(left, 14, title or f"P2P probe: {report.get('machine_verdict', '')} (source ↓, destination →, GB/s)", "axis"),
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
            word = str(pair.get("word") or verdict.replace("_", " ").lower())
            parts.append(_text(x + cell / 2 - 1, y + cell / 2 + 13, word, "verdict", "middle"))
    parts.append("</svg>")
    return "".join(parts)
