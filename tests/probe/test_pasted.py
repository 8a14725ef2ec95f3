"""Pasted ``nvidia-smi topo -m`` and p2pBandwidthLatencyTest matrices.

data/h200x2-*.txt are what the real 2xH200 device machine printed (see bench/probe/RESULTS.md).
Other p2pBandwidthLatencyTest layouts are rendered below with the sample's own printf formats
(NVIDIA/cuda-samples Samples/5_Domain_Specific/p2pBandwidthLatencyTest/p2pBandwidthLatencyTest.cu:
titles as printed in main(), headers "   D\\D" / "   GPU" / "   CPU" + "%6d ", rows "%6d " +
"%6.02f ", connectivity rows "%6d\\t" + "%6d").
"""

from __future__ import annotations

import json
import os

from mltriage.probe import parse_pasted_matrices

DATA = os.path.join(os.path.dirname(__file__), "data")


def read(name: str) -> str:
    with open(os.path.join(DATA, name)) as f:
        return f.read()


def test_real_topo_matrix_with_ansi_header():
    text = read("h200x2-nvidia-smi-topo-m.txt")
    assert "\x1b[4m" in text  # the real header really is underlined
    t = parse_pasted_matrices(text)
    assert t.sources == ["nvidia-smi topo -m"] and t.gpus == 2
    assert t.links == {(0, 1): "NV18", (1, 0): "NV18"}
    assert t.nvlink_pairs() == {(0, 1): "NV18"} and t.pcie_pairs() == {}
    assert t.facts() == ["GPU0<->GPU1: NV18 (NVLink, 18 links)"]


def test_real_bandwidth_test_output():
    t = parse_pasted_matrices(read("h200x2-p2pBandwidthLatencyTest.txt"))
    assert t.sources == ["p2pBandwidthLatencyTest"] and t.gpus == 2
    assert t.p2p_access == {(0, 1): True, (1, 0): True}
    assert t.matrices["unidirectional_disabled"][0, 1] == 37.26
    assert t.matrices["unidirectional_enabled_writes"][1, 0] == 391.84
    assert t.matrices["bidirectional_enabled"][0, 1] == 738.36
    assert t.matrices["latency_gpu_enabled_writes"][0, 1] == 2.24
    assert t.matrices["latency_cpu_disabled"][1, 0] == 8.72
    assert t.pairs_without_p2p() == [] and t.p2p_slower_than_disabled() == []
    json.dumps(t.to_json())


def test_both_pasted_together_and_copied_from_a_terminal_with_crlf():
    text = read("h200x2-nvidia-smi-topo-m.txt") + "\n" + read("h200x2-p2pBandwidthLatencyTest.txt")
    t = parse_pasted_matrices(text.replace("\n", "\r\n"))
    assert t.sources == ["nvidia-smi topo -m", "p2pBandwidthLatencyTest"]
    assert t.links[0, 1] == "NV18" and t.matrices["unidirectional_enabled_writes"][0, 1] == 361.58


def test_pcie_paths_from_the_real_layout():
    # The real capture with its NV18 cells swapped for the legend's own PCIe words, one per run.
    text = read("h200x2-nvidia-smi-topo-m.txt")
    for word in ("SYS", "NODE", "PHB", "PXB", "PIX"):
        t = parse_pasted_matrices(text.replace("NV18", word))
        assert t.pcie_pairs() == {(0, 1): word} and t.nvlink_pairs() == {}
        assert "no NVLink" in t.facts()[0]


def _matrix(title: str, values: list[list[float]], head: str = "   D\\D") -> str:
    n = len(values)
    out = [title, head + "".join("%6d " % j for j in range(n))]
    out += ["%6d " % i + "".join("%6.02f " % v for v in row) for i, row in enumerate(values)]
    return "\n".join(out)


def _bandwidth_test(access: list[list[int]], uni_off, uni_on, writes_suffix=True) -> str:
    n = len(access)
    lines = ["[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]", "P2P Connectivity Matrix",
             "     D\\D" + "".join("%6d" % j for j in range(n))]
    lines += ["%6d\t" % i + "".join("%6d" % (access[i][j] if i != j else 1) for j in range(n)) for i in range(n)]
    lines.append(_matrix("Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)", uni_off))
    on_title = ("Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)" if writes_suffix
                else "Unidirectional P2P=Enabled Bandwidth Matrix (GB/s)")
    lines.append(_matrix(on_title, uni_on))
    lat = _matrix("P2P=Disabled Latency Matrix (us)", [[1.8] * n] * n, "   GPU")
    lat += "\n\n" + "\n".join(_matrix("", [[5.0] * n] * n, "   CPU").split("\n")[1:])
    lines.append(lat)
    return "\n".join(lines) + "\n"


def test_pairs_without_p2p_and_p2p_slower_than_disabled():
    access = [[1, 1, 0], [1, 1, 0], [0, 0, 1]]
    off = [[900, 20.5, 18.0], [20.4, 900, 18.1], [18.2, 18.3, 900]]
    on = [[900, 9.8, 18.0], [25.0, 900, 18.1], [18.2, 18.3, 900]]  # 0->1 P2P worse than off
    t = parse_pasted_matrices(_bandwidth_test(access, off, on))
    assert t.gpus == 3
    assert t.pairs_without_p2p() == [(0, 2), (1, 2), (2, 0), (2, 1)]
    slow = t.p2p_slower_than_disabled()
    assert [(s["src"], s["dst"]) for s in slow] == [(0, 1)]
    assert slow[0]["p2p_gbps"] == 9.8 and slow[0]["no_p2p_gbps"] == 20.5
    facts = t.facts()
    assert "GPU0->GPU2: no P2P (P2P Connectivity Matrix says 0)" in facts
    assert any(f.startswith("GPU0->GPU1: P2P slower than without it") for f in facts)
    assert t.matrices["latency_cpu_disabled"][2, 2] == 5.0


def test_older_title_without_p2p_writes():
    t = parse_pasted_matrices(_bandwidth_test([[1, 1], [1, 1]], [[1, 10.0], [10.0, 1]],
                                              [[1, 5.0], [50.0, 1]], writes_suffix=False))
    assert "unidirectional_enabled" in t.matrices
    assert [(s["src"], s["dst"]) for s in t.p2p_slower_than_disabled()] == [(0, 1)]


def test_not_a_matrix():
    assert parse_pasted_matrices("") is None
    assert parse_pasted_matrices("RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1970") is None
    assert parse_pasted_matrices(None) is None  # type: ignore[arg-type]
    assert parse_pasted_matrices("GPU0 is hot\nGPU1 is cold\n") is None
