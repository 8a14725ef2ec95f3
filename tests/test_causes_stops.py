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


# NVIDIA/nccl v2.28.9-1 src/debug.cc: "%s:%d:%d [%d] NCCL INFO " and, for NCCL_DEBUG=TRACE's API calls, "NCCL CALL "
# after the same "%s:%d:%d " (2.13.4+); src/init.cc INFO(NCCL_INIT, "Bootstrap: Using %s") and TRACE_CALL("ncclGetUniqueId(0x%llx)")
def test_a_log_ending_on_ncclx_api_trace_lines_stopped_in_nccl_set_up():
    log = ("host-a:820:820 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to lo\n"
           "host-a:820:820 [0] NCCL INFO Bootstrap: Using lo:127.0.0.1<0>\n"
           "host-a:820:820 NCCL CALL ncclGetUniqueId(0x%x)\n" % 0xa23895e6a021a90f)
    d = diagnose_text(log, "trace.log")
    assert d.run["stop"]["kind"] == StopKind.HANG_SILENT.value and d.run["stop"]["silence"] == "nccl-setup"
    assert d.findings and d.findings[0].severity == "warning"  # a paste cut there looks the same: a suspicion


def _init_start(host: str, pid: int, rank: int, nranks: int) -> str:
    """NVIDIA/nccl v2.18.5-1 src/init.cc INFO(NCCL_INIT, "ncclCommInitRank comm %p rank %d nranks %d cudaDev %d busId %lx - Init START")."""
    return "%s:%d:%d [0] NCCL INFO ncclCommInitRank comm 0x%x rank %d nranks %d cudaDev 0 busId 1b000 - Init START" % (
        host, pid, pid + 18, 0x55d0c5a0 + rank, rank, nranks)


def test_a_run_across_nodes_that_ends_in_set_up_points_at_the_network_path_first():
    log = "\n".join([_init_start("node01", 3912, 0, 16), _init_start("node02", 2741, 8, 16)]) + "\n"
    d = diagnose_text(log, "two.log")
    top = d.findings[0]
    assert top.signature == "nccl-hang-at-setup-across-nodes" and top.severity == "warning"
    assert "NCCL_SOCKET_IFNAME" in top.fix.env and "NCCL_P2P_DISABLE" not in top.fix.env
    one = diagnose_text("\n".join([_init_start("node01", 3912, 0, 2), _init_start("node01", 3913, 1, 2)]) + "\n", "one.log")
    assert one.findings[0].signature == "nccl-hang-at-setup" and "nccl-hang-at-setup-across-nodes" not in signatures_of(one)


# NVIDIA/nccl v1.3.4-1 test/single/all_reduce_test.cu: printf("# %10s  %12s  %6s  %6s        out-of-place                    in-place\n")
# and the column header, rows "%12i  %12i  %6s  %6s" + "  %7.3f  %5.2f  %5.2f  %7.0le" twice, then " Out of bounds values : %d %s"
def _nccl1_table(rows: int, summary: bool) -> str:
    out = ["# %10s  %12s  %6s  %6s        out-of-place                    in-place" % ("", "", "", ""),
           "# %10s  %12s  %6s  %6s  %7s  %5s  %5s  %7s  %7s  %5s  %5s  %7s" % (
               "bytes", "N", "type", "op", "time", "algbw", "busbw", "res", "time", "algbw", "busbw", "res")]
    for i, op in zip(range(rows), ["sum", "prod", "max", "min"] * 2):
        out.append("%12i  %12i  %6s  %6s" % (10000000, 10000000, "char", op) + ("  %7.3f  %5.2f  %5.2f  %7.0le" % (0.063, 158.81, 0.0, 0.0)) * 2)
    if summary:
        out += ["", " Out of bounds values : %d %s" % (0, "OK"), " Avg bus bandwidth    : %g %s" % (0.0, ""), ""]
    return "\n".join(out) + "\n"


def test_a_pasted_benchmark_table_without_its_device_list_is_still_a_benchmark():
    cut = diagnose_text(_nccl1_table(6, summary=False), "table.log")
    assert cut.run["stop"]["kind"] == StopKind.HANG_SILENT.value and cut.run["stop"]["silence"] == "benchmark-rows"
    done = diagnose_text(_nccl1_table(8, summary=True), "table.log")
    assert done.run["stop"]["kind"] == StopKind.CLEAN_END.value and signatures_of(done, "error", "critical") == []


# -- a stack dump says where a hung process waits -----------------------------------------------------------------

def _py_spy(frames: list[tuple[str, str]]) -> str:
    """benfred/py-spy 0.3-0.4 src/dump.rs print_traces: "Process %d: %s", "Python v%s (%s)", a blank line, then
    "Thread %d (%s): \\"%s\\"" and each frame as "    {name} ({filename}:{line})" (native frames, --native, the same)."""
    head = ["Process 48213: /usr/bin/python3 train.py", "Python v3.10.12 (/usr/bin/python3.10)", "",
            'Thread 48213 (active): "MainThread"']
    return "\n".join(head + [f"    {name} ({where})" for name, where in frames]) + "\n"


NCCL_LAUNCH = ["NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>", "NCCL INFO NET/Plugin: No plugin found (libnccl-net.so)"]


def test_a_dump_stuck_inside_an_nccl_collective_is_a_hang_in_a_collective():
    # NVIDIA/nccl v2.21.5-1 function names and lines: src/collectives.cc ncclAllReduce (32), src/enqueue.cc
    # ncclEnqueueCheck (2007), src/group.cc ncclGroupEndInternal (368)
    log = _py_spy([("sched_yield", "libc.so.6"), ("ncclGroupEndInternal", "group.cc:368"), ("ncclEnqueueCheck", "enqueue.cc:2007"),
                   ("ncclAllReduce", "collectives.cc:32"), ("all_reduce", "torch/distributed/distributed_c10d.py:2288"),
                   ("train_step", "train.py:88")])
    d = diagnose_text(log)
    stop = d.run["stop"]
    assert stop["kind"] == StopKind.HANG_DUMP.value and stop["phase"] == "first-collective" and "collective" in stop["where"]
    assert d.root_cause is not None and d.root_cause.signature in ("nccl-hang-at-setup", "nccl-hang-broken-p2p")


def test_a_dump_stuck_in_nccl_set_up_is_a_hang_in_set_up():
    # src/transport.cc ncclTransportP2pSetup (72), src/init.cc initTransportsRank (893), ncclCommInitRankFunc (1501)
    log = _py_spy([("sched_yield", "libc.so.6"), ("ncclTransportP2pSetup", "transport.cc:72"), ("initTransportsRank", "init.cc:893"),
                   ("ncclCommInitRankFunc", "init.cc:1501")])
    d = diagnose_text(log)
    stop = d.run["stop"]
    assert stop["kind"] == StopKind.HANG_DUMP.value and stop["phase"] == "comm-setup" and "set-up" in stop["where"]
    assert d.root_cause is not None and d.root_cause.signature == "nccl-hang-at-setup"  # the channels' set-up: P2P first
    # in NCCL's bootstrap (src/bootstrap.cc bootstrapAllGather, 546) the ranks never met: no channel, no P2P yet
    log = _py_spy([("poll", "libc.so.6"), ("bootstrapAllGather", "bootstrap.cc:546"), ("initTransportsRank", "init.cc:893"),
                   ("ncclCommInitRankFunc", "init.cc:1501")])
    d = diagnose_text(log)
    assert "bootstrap" in d.run["stop"]["where"] and d.root_cause.signature == "nccl-hang-in-bootstrap"
    assert not d.root_cause.p2p_related


def test_a_dump_in_a_torch_distributed_call_names_no_backend():
    from pathlib import Path
    # recorded: gloo on CPU, rank 0 waiting in all_reduce, py-spy 0.4.3 (zoo/cpu_raw/pyspy_collective_hang.py)
    log = (Path(__file__).resolve().parent.parent / "corpus/cpu/pyspy_collective_hang.log").read_text()
    d = diagnose_text(log)
    assert d.run["stop"]["kind"] == StopKind.HANG_DUMP.value and "collective" in d.run["stop"]["where"]
    assert d.root_cause is None or not d.root_cause.p2p_related  # no NCCL line, no NCCL frame: no GPU peer-to-peer cause
    # the same dump after an NCCL communicator came up is a hang in a collective of that communicator
    # (NVIDIA/nccl v2.21.5-1 src/init.cc INFO "comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx commId 0x%llx - Init COMPLETE")
    ready = NCCL_LAUNCH + ["NCCL INFO comm 0x5581c2a0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1b000 commId 0x5e2a7f21c0d4b1a9 - Init COMPLETE"]
    with_nccl = "\n".join(f"node01:48213:48213 [0] {line}" for line in ready) + "\n" + log
    assert diagnose_text(with_nccl).run["stop"]["phase"] == "first-collective"


def test_a_recorded_nccl_set_up_hang_dumped_by_py_spy_waits_in_the_bootstrap():
    from pathlib import Path
    # recorded on one H200 (torch 2.11.0+cu130, NCCL 2.28.9, py-spy 0.4.3): rank 0's first all_reduce waits in
    # bootstrapInit for a rank that never creates its communicator (zoo/gpu/raw/nccl_setup_hang_pyspy.py)
    d = diagnose_text((Path(__file__).resolve().parent.parent / "corpus/gpu/nccl_setup_hang_pyspy.log").read_text())
    stop = d.run["stop"]
    assert stop["kind"] == StopKind.HANG_DUMP.value and stop["phase"] == "comm-setup" and "bootstrap" in stop["where"]
    assert d.root_cause is not None and d.root_cause.signature == "nccl-hang-in-bootstrap"


def test_a_gdb_backtrace_says_where_the_process_waits_too():
    from pathlib import Path
    # recorded: gdb 13.1 `bt` of a gloo rank waiting in all_reduce (zoo/cpu_raw/gdb_collective_hang.py): c10d's Work::wait
    d = diagnose_text((Path(__file__).resolve().parent.parent / "corpus/cpu/gdb_collective_hang.log").read_text())
    assert d.run["stop"]["kind"] == StopKind.HANG_DUMP.value and "collective" in d.run["stop"]["where"]
    assert d.root_cause is None or not d.root_cause.p2p_related
    # gdb's frame form ("#%-2d ", "0x%016lx in ", the function, " () from <lib>", as the recording prints it) around the
    # NCCL 2.28.9 functions the py-spy recording on the H200 shows (libnccl without debug symbols)
    frames = ["accept", "socketTryAccept", "ncclSocketAccept", "bootstrapInit", "ncclCommInitRankFunc", "ncclAsyncJobMain"]
    bt = "\n".join(f"#{n:<2d} 0x00007f3a{0x1c2e40 + 0x100 * n:08x} in {name} () from /usr/lib/x86_64-linux-gnu/libnccl.so.2"
                   for n, name in enumerate(frames)) + "\n"
    d = diagnose_text(bt)
    assert "bootstrap" in d.run["stop"]["where"] and d.root_cause.signature == "nccl-hang-in-bootstrap"
