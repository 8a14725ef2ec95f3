"""Read the matrices users paste: ``nvidia-smi topo -m`` and CUDA samples' p2pBandwidthLatencyTest.

``nvidia-smi topo -m`` prints a tab-separated matrix whose header row is wrapped in ANSI
underline escapes (ESC[4m ... ESC[0m) followed by a legend (X = Self, SYS, NODE, PHB, PXB, PIX,
NV#). p2pBandwidthLatencyTest (NVIDIA/cuda-samples,
Samples/5_Domain_Specific/p2pBandwidthLatencyTest/p2pBandwidthLatencyTest.cu) prints titled
matrices: "P2P Connectivity Matrix", "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)",
"Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)", "Bidirectional ...", and
"P2P=... Latency ... Matrix (us)" with GPU and CPU halves; headers "   D\\D" / "   GPU" / "   CPU"
then rows of "%6d " and "%6.02f " cells. Older samples omit "(P2P Writes)"; both are accepted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from mltriage.numbers import parse_float, parse_int

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
TOPO_CELL = re.compile(r"^(X|SYS|NODE|PHB|PXB|PIX|NV\d+|SOC)$")  # SOC: old name of SYS
BW_TITLE = re.compile(r"^\s*(Unidirectional|Bidirectional) P2P=(Enabled|Disabled) Bandwidth"
                      r"(?: \(P2P (Writes|Reads)\))? Matrix \(GB/s\)")
LAT_TITLE = re.compile(r"^\s*P2P=(Enabled|Disabled) Latency(?: \(P2P (Writes|Reads)\))? Matrix \(us\)")
CONN_TITLE = re.compile(r"^\s*P2P Connectivity Matrix")
# One cell of a numeric row ("%6d " / "%6.02f "). Rows are split on blanks and each token checked
# alone: a single regex over the row ("(?:-?\d+(?:\.\d+)?\s*)+") backtracks exponentially on a
# long digit run that ends in a non-number.
NUMBER_CELL = re.compile(r"-?\d+(?:\.\d+)?")
PCIE_WORDS = {
    "SYS": "crosses PCIe and the SMP interconnect between NUMA nodes",
    "SOC": "crosses PCIe and the SMP interconnect between NUMA nodes",
    "NODE": "crosses PCIe and the interconnect between host bridges in one NUMA node",
    "PHB": "crosses PCIe and a host bridge (the CPU)",
    "PXB": "crosses several PCIe bridges, not the host bridge",
    "PIX": "crosses at most one PCIe bridge",
}

Pair = tuple[int, int]


@dataclass
class PastedTopology:
    sources: list[str] = field(default_factory=list)  # "nvidia-smi topo -m", "p2pBandwidthLatencyTest"
    gpus: int = 0
    links: dict[Pair, str] = field(default_factory=dict)  # topo -m cells between GPUs (both orders)
    p2p_access: dict[Pair, bool] = field(default_factory=dict)  # P2P Connectivity Matrix
    matrices: dict[str, dict[Pair, float]] = field(default_factory=dict)

    # -- facts ------------------------------------------------------------------------------
    def pairs_without_p2p(self) -> list[Pair]:
        return sorted(k for k, ok in self.p2p_access.items() if not ok)

    def nvlink_pairs(self) -> dict[Pair, str]:
        return {k: v for k, v in self.links.items() if k[0] < k[1] and v.startswith("NV")}

    def pcie_pairs(self) -> dict[Pair, str]:
        return {k: v for k, v in self.links.items() if k[0] < k[1] and not v.startswith("NV")}

    def p2p_slower_than_disabled(self, ratio: float = 1.0) -> list[dict[str, Any]]:
        """Pairs where the P2P=Enabled bandwidth is no better than the P2P=Disabled one."""
        out = []
        for kind in ("unidirectional", "bidirectional"):
            on = self.matrices.get(f"{kind}_enabled_writes") or self.matrices.get(f"{kind}_enabled")
            off = self.matrices.get(f"{kind}_disabled")
            if not on or not off:
                continue
            for (i, j), gbps in sorted(on.items()):
                if i != j and (i, j) in off and gbps <= off[i, j] * ratio:
                    if self.p2p_access.get((i, j)) is False:
                        continue  # no P2P at all: "enabled" fell back to the same host path
                    out.append({"src": i, "dst": j, "kind": kind, "p2p_gbps": gbps,
                                "no_p2p_gbps": off[i, j]})
        return out

    def facts(self) -> list[str]:
        """One line per fact, for findings: "GPU0->GPU2: no P2P", "GPU0<->GPU1: NV18 (NVLink)"."""
        lines = [f"GPU{i}<->GPU{j}: {v} (NVLink, {v[2:]} links)" for (i, j), v in self.nvlink_pairs().items()]
        lines += [f"GPU{i}<->GPU{j}: {v} (no NVLink; {PCIE_WORDS.get(v, v)})"
                  for (i, j), v in self.pcie_pairs().items()]
        lines += [f"GPU{i}->GPU{j}: no P2P (P2P Connectivity Matrix says 0)" for i, j in self.pairs_without_p2p()]
        lines += [f"GPU{s['src']}->GPU{s['dst']}: P2P slower than without it ({s['kind']} "
                  f"{s['p2p_gbps']:.2f} GB/s with P2P vs {s['no_p2p_gbps']:.2f} GB/s P2P=Disabled)"
                  for s in self.p2p_slower_than_disabled()]
        return lines

    def to_json(self) -> dict[str, Any]:
        key = lambda k: f"{k[0]}->{k[1]}"  # noqa: E731
        return {
            "sources": self.sources,
            "gpus": self.gpus,
            "links": {key(k): v for k, v in self.links.items()},
            "p2p_access": {key(k): v for k, v in self.p2p_access.items()},
            "matrices": {name: {key(k): v for k, v in m.items()} for name, m in self.matrices.items()},
            "facts": self.facts(),
        }


def parse_pasted_matrices(text: str) -> PastedTopology | None:
    """Facts from pasted ``nvidia-smi topo -m`` and/or p2pBandwidthLatencyTest output; None if neither."""
    if not isinstance(text, str) or not text.strip():
        return None
    lines = ANSI.sub("", text.replace("\r\n", "\n")).split("\n")
    topo = PastedTopology()
    if _parse_topo(lines, topo):
        topo.sources.append("nvidia-smi topo -m")
    if _parse_bandwidth_test(lines, topo):
        topo.sources.append("p2pBandwidthLatencyTest")
    return topo if topo.sources else None


def _parse_topo(lines: list[str], topo: PastedTopology) -> bool:
    for h, line in enumerate(lines):
        if "GPU0" not in line:  # (the header names GPU0: most lines of a log are skipped without a regex)
            continue
        cols = re.findall(r"\b((?:GPU|NIC)\d+)\b", line)
        # The header: device columns and nothing before them (rows start with their own label).
        if not cols or line.split()[0] != cols[0] or "GPU0" not in cols:
            continue
        if len(lines) > h + 1 and lines[h + 1].split()[:1] != [cols[0]]:
            continue
        found = False
        for row in lines[h + 1:]:
            tokens = row.split()
            if not tokens or tokens[0] not in cols:
                break
            cells = tokens[1:1 + len(cols)]
            if len(cells) < len(cols) or not all(TOPO_CELL.match(c) for c in cells):
                return False
            a = tokens[0]
            for b, cell in zip(cols, cells):
                if a.startswith("GPU") and b.startswith("GPU") and a != b:
                    i, j = parse_int(a[3:]), parse_int(b[3:])
                    if i is not None and j is not None:
                        topo.links[i, j] = cell
                        found = True
        if found:
            topo.gpus = max(topo.gpus, sum(1 for c in cols if c.startswith("GPU")))
        return found
    return False


def _read_rows(lines: list[str], start: int) -> tuple[dict[Pair, float], int]:
    """Numeric rows after a column header line ("   D\\D   0   1" / "   GPU ..." / "   CPU ...")."""
    out: dict[Pair, float] = {}
    i = start
    while i < len(lines):
        parsed = _numeric_row(lines[i])
        if parsed is None:
            break
        row, values = parsed
        for col, value in enumerate(values):
            out[row, col] = value
        i += 1
    return out, i


def _numeric_row(line: str) -> tuple[int, list[float]] | None:
    """``"   0   1.00  23.45"``: the row index, then its cells; None for anything else."""
    tokens = line.split()
    if len(tokens) < 2 or not tokens[0].isdecimal() or not all(NUMBER_CELL.fullmatch(t) for t in tokens[1:]):
        return None
    row = parse_int(tokens[0])
    values = [parse_float(t) for t in tokens[1:]]
    if row is None or None in values:
        return None  # a number too long to be a GPU index or a bandwidth
    return row, values


def _parse_bandwidth_test(lines: list[str], topo: PastedTopology) -> bool:
    found = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if "P2P" not in line:  # (every title holds it: most lines of a log are skipped without a regex)
            i += 1
            continue
        bw, lat = BW_TITLE.match(line), LAT_TITLE.match(line)
        if CONN_TITLE.match(line):
            rows, i = _read_rows(lines, i + 2)
            topo.p2p_access.update({k: v != 0 for k, v in rows.items() if k[0] != k[1]})
            topo.gpus = max(topo.gpus, 1 + max((k[0] for k in rows), default=-1))
            found = True
            continue
        if bw:
            name = f"{bw.group(1).lower()}_{bw.group(2).lower()}" + (f"_{bw.group(3).lower()}" if bw.group(3) else "")
            topo.matrices[name], i = _read_rows(lines, i + 2)
            found = True
            continue
        if lat:
            name = f"{lat.group(1).lower()}" + (f"_{lat.group(2).lower()}" if lat.group(2) else "")
            j = i + 1
            for half in ("gpu", "cpu"):  # "   GPU  0 1" rows, a blank line, "   CPU  0 1" rows
                while j < len(lines) and not lines[j].strip():
                    j += 1
                if j < len(lines) and lines[j].split()[:1] == [half.upper()]:
                    topo.matrices[f"latency_{half}_{name}"], j = _read_rows(lines, j + 1)
            i = j
            found = True
            continue
        i += 1
    for m in topo.matrices.values():
        topo.gpus = max(topo.gpus, 1 + max((k[0] for k in m), default=-1))
    return found
