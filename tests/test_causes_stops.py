"""Where a benchmark or a multi-GPU run stopped, read from the tool's own output structure, and the
causes that stop raises; warning lines whose words say the program went on.

Every log here is built from the named upstream release's format strings (printf formats filled the way
the program fills them), never from a thread's text."""

from mltriage.engine import diagnose_text
from mltriage.run_model import StopKind

RTX4090 = "NVIDIA GeForce RTX 4090"
A100_SXM = "NVIDIA A100-SXM4-80GB"  # cudaDeviceProp.name of an HGX A100 board


def nccl_tests(devices: list[str], sizes_done: int, *, open_row: bool, finished: bool = False) -> str:
    """nccl-tests v2.13.9 src/common.cu: the banner, '# Using devices' and one line per rank, the three header
    PRINTs, each row's "%12li  %12li  %8s  %6s  %6s" printed before BenchTime, then "  %7s  %6.2f  %6.2f  %5g"
    twice and "\\n"; the summary PRINTs "# Out of bounds values : %d %s" and "# Avg bus bandwidth    : %g %s"."""
    out = [f"# nThread 1 nGpus {len(devices)} minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 "
           "agg iters: 1 validation: 1 graph: 0", "#", "# Using devices"]
    for i, name in enumerate(devices):
        out.append("#  Rank %2d Group %2d Pid %6d on %10s device %2d [0x%02x] %s" % (i, 0, 48213, "node01", i, 0x01 + 0x20 * i, name))
    out += ["#",
            "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          " % ("", "", "", "", ""),
            "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s" % (
                "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong"),
            "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s" % (
                "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "")]
    size, time_us = 8, 20.0
    for _ in range(sizes_done):
        row = "%12li  %12li  %8s  %6s  %6s" % (size, size // 4, "float", "sum", "%6i" % -1)
        for t in (time_us, time_us * 0.98):
            algbw = size / t / 1e3
            row += "  %7s  %6.2f  %6.2f  %5g" % ("%.2f" % t, algbw, algbw * 1.5, 0)
        out.append(row)
        size, time_us = size * 2, time_us * 1.3
    if open_row:
        out.append("%12li  %12li  %8s  %6s  %6s" % (size, size // 4, "float", "sum", "%6i" % -1))
    if finished:
        out += ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 6.12345 ", "#"]
    return "\n".join(out) + "\n"


def p2p_latency_test(devices: list[str], matrices_done: int, *, closing_note: bool) -> str:
    """cuda-samples p2pBandwidthLatencyTest.cu (v12.x): printf("[%s]\\n", sSampleName); "Device: %d, %s, pciBusID: %x,
    pciDeviceID: %x, pciDomainID:%x\\n"; "Device=%d %s Access Peer Device=%d\\n"; "P2P Connectivity Matrix\\n",
    "     D\\\\D" + "%6d" per device; rows "%6d\\t" + "%6d"; each matrix's title, "   D\\\\D" + "%6d " per device, rows
    "%6d " + "%6.02f "; the closing NOTE."""
    n = len(devices)
    out = ["[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]"]
    out += ["Device: %d, %s, pciBusID: %x, pciDeviceID: %x, pciDomainID:%x" % (i, name, 0x1 + 0x20 * i, 0, 0) for i, name in enumerate(devices)]
    out += ["Device=%d %s Access Peer Device=%d" % (i, "CAN", j) for i in range(n) for j in range(n) if i != j]
    out += ["", "***NOTE: In case a device doesn't have P2P access to other one, it falls back to normal memcopy procedure.",
            "So you can see lesser Bandwidth (GB/s) and unstable Latency (us) in those cases.", ""]
    out.append("P2P Connectivity Matrix")
    out.append("     D\\D" + "".join("%6d" % j for j in range(n)))
    out += ["%6d\t" % i + "".join("%6d" % 1 for _ in range(n)) for i in range(n)]
    titles = ["Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)", "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)",
              "Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)", "Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)"]
    for k, title in enumerate(titles[:matrices_done + 1]):
        out.append(title)
        out.append("   D\\D" + "".join("%6d " % j for j in range(n)))
        if k < matrices_done:
            out += ["%6d " % i + "".join("%6.02f " % (900.0 if i == j else 24.5) for j in range(n)) for i in range(n)]
    if closing_note:
        out.append("\nNOTE: The CUDA Samples are not meant for performance measurements. Results may vary when GPU Boost is enabled.")
    return "\n".join(out) + "\n"


def signatures_of(d, *severities):
    return [f.signature for f in d.findings if not severities or f.severity in severities]


def test_a_benchmark_row_whose_times_never_came_is_a_hang_in_that_size_and_on_pcie_points_at_p2p():
    d = diagnose_text(nccl_tests([RTX4090] * 4, 17, open_row=True), "all_reduce.log")
    assert d.run["stop"]["kind"] == StopKind.HANG_SILENT.value and d.run["stop"]["silence"] == "benchmark-row-open"
    assert d.run["stop"]["phase"] == "steady"
    top = d.findings[0]
    assert top.signature == "benchmark-stalls-partway-pcie" and top.severity == "error"
    assert top.fix.env == {"NCCL_P2P_DISABLE": "1"}
    assert "NCCL_P2P_DISABLE=1" in top.verify


def test_the_first_size_never_returning_is_the_first_collective_hang():
    d = diagnose_text(nccl_tests([RTX4090] * 2, 0, open_row=True), "all_reduce.log")
    assert d.run["stop"]["phase"] == "first-collective"
    assert d.findings[0].signature == "nccl-hang-broken-p2p"


def test_a_finished_sweep_and_an_nvswitch_box_raise_no_p2p_cause():
    assert signatures_of(diagnose_text(nccl_tests([RTX4090] * 4, 25, open_row=False, finished=True), "ok.log"), "error", "critical") == []
    nvlink = diagnose_text(nccl_tests([A100_SXM] * 8, 17, open_row=True), "sxm.log")
    assert nvlink.run["gpus"]["interconnect"] == "nvlink"
    assert "benchmark-stalls-partway-pcie" not in signatures_of(nvlink)


def test_a_table_cut_after_a_complete_row_is_only_a_suspicion():
    d = diagnose_text(nccl_tests([RTX4090] * 4, 12, open_row=False), "part.log")
    assert d.run["stop"]["silence"] == "benchmark-rows"
    top = d.findings[0]
    assert top.signature == "benchmark-stalls-partway-pcie" and top.severity == "warning"
    assert any("not a failure" in n for n in top.notes)


def test_p2p_latency_test_that_stops_at_a_matrix_title_hung_measuring_it():
    d = diagnose_text(p2p_latency_test(["NVIDIA GeForce GTX 1080 Ti"] * 4, 0, closing_note=False), "p2p.log")
    assert d.run["stop"]["silence"] == "benchmark-header"
    assert d.findings[0].signature == "nccl-hang-broken-p2p" and d.findings[0].severity == "error"


def test_p2p_latency_test_that_printed_its_closing_note_is_healthy():
    d = diagnose_text(p2p_latency_test(["NVIDIA GeForce GTX 1080 Ti"] * 4, 4, closing_note=True), "p2p.log")
    assert d.run["stop"]["kind"] == StopKind.CLEAN_END.value
    assert signatures_of(d, "error", "critical", "warning") == []


def test_ggml_naming_its_main_device_implies_several_gpus_so_garbage_points_at_peer_copies():
    # ggml-cuda.cu (2023): "%s: using device %d (%s) as main device" is printed only when g_device_count > 1
    log = ("llm_load_tensors: using CUDA for GPU acceleration\n"
           "ggml_cuda_set_main_device: using device 0 (NVIDIA GeForce RTX 3090) as main device\n"
           "llm_load_tensors: offloaded 35/35 layers to GPU\n"
           ">>> hello\n"
           "a############################################\n")
    d = diagnose_text(log, "ollama.log")
    assert d.run["gpus"]["count"] >= 2
    top = d.findings[0]
    assert top.signature == "p2p-silent-corruption"
    assert any("GGML_CUDA_NO_PEER_COPY" in step for step in top.fix.steps)
    single = diagnose_text(log.replace("ggml_cuda_set_main_device: using device 0 (NVIDIA GeForce RTX 3090) as main device\n", ""), "one.log")
    assert "p2p-silent-corruption" not in signatures_of(single)


def test_a_warning_that_says_it_falls_back_is_a_condition_the_program_survived():
    # DeepSpeed 0.19.1 deepspeed/comm/mori.py:226 logger.warning(f"SDMA allgather failed ({e}); falling back to dist.allgather")
    # under DeepSpeed's "[%(asctime)s] [%(levelname)s] [%(filename)s:%(lineno)d:%(funcName)s] %(message)s"
    line = ("[2026-03-03 09:12:41,512] [WARNING] [mori.py:226:allgather_into_tensor] SDMA allgather failed "
            "(CUDA error: invalid device ordinal); falling back to dist.allgather\n")
    d = diagnose_text(line, "train.log")
    assert d.findings and all(f.severity == "warning" for f in d.findings)
    error_level = diagnose_text(line.replace("[WARNING]", "[ERROR]"), "train.log")
    assert any(f.severity in ("error", "critical") for f in error_level.findings)
