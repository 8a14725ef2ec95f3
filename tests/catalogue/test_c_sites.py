"""The C/C++ extractor on source written here in the style of NCCL, c10/c10d and TensorRT-LLM."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the catalogue extra (tree-sitter) is not installed")

from mltriage.catalogue.formats import Placeholder, line_regex  # noqa: E402
from mltriage.catalogue.generate.c_sites import extract_c, extract_c_with_misses  # noqa: E402
import procs

FIXTURES = Path(__file__).parent / "fixtures" / "c_like"
NCCL_FILE = "nccl/src/misc/segments.cc"
TORCH_FILE = "pytorch/store_checks.cpp"
TLLM_FILE = "tensorrt-llm/engine_loader.cpp"


def _read(rel: str) -> str:
    return (FIXTURES / rel).read_text()


def _line_of(rel: str, needle: str) -> int:
    """The fixture line holding ``needle`` (so the expectations name code, not numbers)."""
    hits = [n for n, line in enumerate(_read(rel).splitlines(), 1) if needle in line]
    assert len(hits) == 1, (needle, hits)
    return hits[0]


def _sites(rel: str, project: str):
    return extract_c(rel, _read(rel), project)


def _summary(site):
    types = [p.type for p in site.format.parts if isinstance(p, Placeholder)]
    return (site.line, site.end_line, site.function, site.kind, site.format.text, types, site.cause)


def test_nccl_sites():
    f = NCCL_FILE
    got = [_summary(s) for s in _sites(f, "nccl")]
    assert all(s.path == f for s in _sites(f, "nccl"))
    line = lambda needle: _line_of(f, needle)  # noqa: E731
    assert got == [
        # inside #define bodies: the macro is the function, a spliced or stringified parameter a placeholder
        (line('WARN("Segment call'), line('WARN("Segment call'), "SEGCHECK", "warn",
         "Segment call {what} went wrong : {strerror_errno}", ["str", "str"], "ncclSystemError"),
        (line('WARN("GPU call'), line('WARN("GPU call'), "GPUCHECK", "warn",
         "GPU call {cmd} returned '{cudaGetErrorString_e}'", ["str", "str"], "ncclUnhandledCudaError"),
        # a call over two lines: its span; %zu an int
        (line('WARN("Could not map'), line("name, bytes, strerror(errno), errno);"), "segmentMap", "warn",
         "Could not map segment {name} ({bytes} bytes), reason: {strerror_errno} ({errno})",
         ["str", "int", "str", "int"], "ncclSystemError"),
        # "%" PRIu64 joins into an int conversion; %#lx is hex; the cast is left out of the name
        (line('INFO(NCCL_ALLOC, "Mapped'), line("offsetOf(*fd));"), "segmentMap", "info",
         "Mapped segment {name}: {bytes} bytes at offset {offsetOf_fd}", ["str", "int", "hex"], None),
        # %% is a percent sign, pieces on two lines join, %*d consumes the width argument first;
        # the cause is the result assigned before the goto
        (line('WARN("Slot pool'), line('"cannot reserve'), "slotsReserve", "warn",
         "Slot pool is {pool_used}% full ({pool_max} slots): cannot reserve {want} more",
         ["int", "int", "int"], "ncclInvalidUsage"),
        # #if/#else branches that open braces differently still give the function; constants print as themselves
        (line('WARN("Graph capture'), line("12, 0, driverVersion);"), "captureCheck", "warn",
         "Graph capture of these collectives needs a driver of at least 12.0, found {driverVersion}",
         ["int"], "ncclInvalidUsage"),
        # printf on an error path (followed by a trap), fprintf to stderr
        (line('printf("rank %d: slot load'), line('printf("rank %d: slot load'), "slotAbort", "error",
         "rank {rank}: slot load {load} is out of range", ["int", "float"], None),
        # a stringifying macro among the pieces is a placeholder; the message spans two output lines
        (line('"Usage: %s [OPTION]') - 1, line('" by default)'), "slotsUsage", "error",
         "Usage: {argv0} [OPTION]...\n  -p, --port=PORT  port of the slot server ({STR_SLOT_DEFAULT_PORT} by default)",
         ["str", "str"], None),
        (line('fprintf(stderr, "Unknown'), line('fprintf(stderr, "Unknown'), "slotsClientMain", "error",
         "Unknown slot format: {argv_1} (expected text or json)", ["str"], None),
        # "%s" of a constexpr text declared at file scope prints that text
        (line('WARN("%s", slotRaceMsg)'), line('WARN("%s", slotRaceMsg)'), "slotRaceCheck", "warn",
         "Fatal: two threads raced to reserve the same slot.", [], "ncclInvalidUsage"),
    ]
    # left out: TRACE (compiled out), #if 0, a developer's table printf, fprintf to a file, "%s" alone
    texts = " ".join(s.format.text for s in _sites(f, "nccl"))
    for absent in ("reserved", "never compiled", "slots\n", "written to a file"):
        assert absent not in texts


def test_nccl_miss_is_reported():
    _, misses = extract_c_with_misses(NCCL_FILE, _read(NCCL_FILE), "nccl")
    assert [(m.line, m.name, m.reason) for m in misses] == [
        (_line_of(NCCL_FILE, 'INFO(NCCL_INIT, "%s"'), "INFO", "no literal text")]


def test_pytorch_sites():
    f = TORCH_FILE
    line = lambda needle: _line_of(f, needle)  # noqa: E731
    got = [_summary(s) for s in _sites(f, "pytorch")]
    assert got == [
        # c10::str concatenation: literals literal, every other argument a placeholder
        (line("TORCH_CHECK(size >= 0"), line("TORCH_CHECK(size >= 0"), "KeyValueClient::validate", "RuntimeError",
         "Value for key '{key}' has a negative size {size}", ["str", "str"], None),
        (line("TORCH_CHECK_VALUE("), line("kLargestValue);"), "KeyValueClient::validate", "ValueError",
         "Value too large: {size} > {kLargestValue}", ["str", "str"], None),
        # a message built into a variable first, then thrown with its c10 type; {:.1f} is a float
        (line("C10_THROW_ERROR"), line("C10_THROW_ERROR"), "Heartbeat::check", "DistBackendError",
         "[Rank {rank}] Heartbeat missed for {seconds} seconds", ["str", "float"], None),
        (line("TORCH_WARN_ONCE"), line("TORCH_WARN_ONCE"), "Heartbeat::check", "warning",
         "Heartbeat on rank {rank} is running late", ["str"], None),
        (line("C10D_ERROR(\"Could"), line("C10D_ERROR(\"Could"), "dialPeer", "error",
         "Could not dial {host}:{port} (errno: {err})", ["str", "str", "hex"], None),
        (line("C10D_WARNING"), line("C10D_WARNING"), "dialPeer", "warning",
         "Dialing {host} again in 100 ms", ["str"], None),
        (line("LOG(ERROR)"), line("LOG(ERROR)"), "dialPeer", "error",
         "Link to {host}:{port} dropped unexpectedly", ["str", "str"], None),
        (line("TORCH_INTERNAL_ASSERT"), line("TORCH_INTERNAL_ASSERT"), "dialPeer", "RuntimeError",
         "port must be positive, got {port}", ["str"], None),
        (line("TORCH_CHECK_INDEX"), line("TORCH_CHECK_INDEX"), "dialPeer", "IndexError",
         "port {port} is out of range", ["str"], None),
        # std::invalid_argument reaches Python as ValueError; "..." + host is a string join
        (line("throw std::invalid_argument"), line("throw std::invalid_argument"), "dialPeer", "ValueError",
         "host name must not be empty: {host}", ["str"], None),
        # one variable assigned in two branches: two messages, each a site of both calls
        (line("C10D_ERROR(msg)"), line("C10D_ERROR(msg)"), "Listener::acceptPeer", "error",
         "The listener on {this} is not taking peers.", ["str"], None),
        (line("C10D_ERROR(msg)"), line("C10D_ERROR(msg)"), "Listener::acceptPeer", "error",
         "The listener on {this} could not take a peer {err}.", ["str", "str"], None),
        (line("C10D_THROW_ERROR(SocketError, msg)"), line("C10D_THROW_ERROR(SocketError, msg)"),
         "Listener::acceptPeer", "SocketError", "The listener on {this} is not taking peers.", ["str"], None),
        (line("C10D_THROW_ERROR(SocketError, msg)"), line("C10D_THROW_ERROR(SocketError, msg)"),
         "Listener::acceptPeer", "SocketError", "The listener on {this} could not take a peer {err}.",
         ["str", "str"], None),
        # fmt arguments that are local text (a constexpr literal, a + join) print as that text
        (line("fmt::join(errors"), line("fmt::join(errors"), "Listener::bindAny", "SocketError",
         "The listener could not bind any local address. at {port} ({host}) on {family}; {fmt_join_errors}",
         ["str", "str", "str", "str"], None),
        # pybind11's exceptions are raised in Python as their builtin counterparts
        (line("throw py::type_error"), line("throw py::type_error"), "bindGroup", "TypeError",
         "expected a GroupHandle, got {name}", ["str"], None),
    ]


def test_tensorrt_llm_sites():
    f = TLLM_FILE
    line = lambda needle: _line_of(f, needle)  # noqa: E731
    got = [_summary(s) for s in _sites(f, "tensorrt-llm")]
    assert got == [
        (line("TLLM_CHECK_WITH_INFO"), line('"Plan version'), "PlanLoader::load", "TllmException",
         "Plan version {version} does not match this runtime's {kPlanVersion}", ["int", "int"], None),
        (line("TLLM_THROW"), line("TLLM_THROW"), "PlanLoader::load", "TllmException",
         "Plan file {path} is empty", ["str"], None),
        (line("TLLM_LOG_WARNING"), line("TLLM_LOG_WARNING"), "PlanLoader::load", "warning",
         "Loading plan {path} of {bytes} bytes", ["str", "int"], None),
        (line("TLLM_LOG_ERROR"), line("TLLM_LOG_ERROR"), "PlanLoader::load", "error",
         "Could not map {path}: {strerror_errno}", ["str", "str"], None),
    ]


# a str sample holds no separator the formats use: two adjacent str captures are ambiguous otherwise
_SAMPLES = {"int": "-17", "hex": "0x2a", "float": "0.25", "char": "q", "ptr": "0x7ffe10", "str": "eth0-lo"}


@pytest.mark.parametrize("rel,project", [(NCCL_FILE, "nccl"), (TORCH_FILE, "pytorch"), (TLLM_FILE, "tensorrt-llm")])
def test_rendered_formats_match_their_matchers(rel, project):
    """A message rendered from each extracted format is matched by that format's line matcher, and
    every placeholder captures the value it was rendered with."""
    for site in _sites(rel, project):
        placeholders = [p for p in site.format.parts if isinstance(p, Placeholder)]
        values = {p.name: _SAMPLES[p.type] for p in placeholders}
        rendered = site.format.render(values).split("\n")
        lines = site.format.lines()
        assert len(lines) == len(rendered)
        captured: dict[str, str] = {}
        leading = set()
        for line_parts, text in zip(lines, rendered):
            m = re.search(line_regex(line_parts), text)
            assert m, (site.format.text, text)
            captured.update(m.groupdict())
            if isinstance(line_parts[0], Placeholder):
                leading.add(line_parts[0].name)  # a matcher leaves a leading placeholder off
        assert captured == {p.name: values[p.name] for p in placeholders if p.name not in leading}


def test_real_printf_output_matches_extracted_formats(tmp_path):
    """The formats read from a C file match what that file prints when compiled and run."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    rel = "nccl/src/misc/printf_roundtrip.c"
    binary = tmp_path / "roundtrip"
    procs.run([cc, "-w", "-o", str(binary), str(FIXTURES / rel)], check=True)
    printed = procs.run([str(binary)], capture_output=True, text=True, check=True).stdout.splitlines()
    sites = _sites(rel, "nccl")
    assert len(sites) == len(printed) == 4
    expected = [
        {"rank": "3", "nranks": "-8", "bytes": "123456789", "chunks": "12"},
        {"opCount": "18446744073709551615", "mask": "0xbeef", "mask_2": "beef", "busBw": "187.2",
         "busBw_2": "187.25"},
        {"mode": "R", "buffer": "0x7f3a2c000000", "rank": "3", "iface": "ib0"},
        {"busBw": "1.872500e+02", "little": "7", "big": "-9000000000"},
    ]
    for site, line, values in zip(sites, printed, expected):
        (line_parts,) = site.format.lines()
        m = re.search(line_regex(line_parts), line)
        assert m, (site.format.text, line)
        # %-6s pads its value with spaces, which the capture keeps
        assert {k: v.strip() for k, v in m.groupdict().items()} == values
    assert "joined across pieces" in sites[3].format.text
    # a const char* holding a literal prints as itself (no conversion width); numbers in variables do not
    assert sites[0].format.text.endswith("chunks) on ib0") and "{rank}" in sites[0].format.text


def test_unknown_project_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown C/C\\+\\+ project"):
        extract_c("a.cc", "", "vllm")


def test_broken_source_gives_what_it_can():
    text = 'void f( {\n  WARN("Unbalanced %d source still yields this", x);\n'
    (site,) = extract_c("src/x.cc", text, "nccl")
    assert site.format.text == "Unbalanced {x} source still yields this" and site.line == 2
    assert extract_c("src/empty.cc", "", "nccl") == []
    assert extract_c("src/bin.cc", "\x00\x01WARN(\xff", "nccl") == []


def test_a_worker_signal_handler_macro_names_the_message_it_writes():
    # in the style of torch/csrc/DataLoader.cpp, whose SIGNAL_HANDLER(SIGNAL, HANDLER_NAME, ERROR_MSG) defines a
    # handler that writes ERROR_MSG to stderr (v1.13.1 ends each use with ';', v2.6.0 does not)
    source = ('SIGNAL_HANDLER(\n    SIGBUS,\n    handler_SIGBUS,\n'
              '    "ERROR: Unexpected bus error encountered in worker. "\n'
              '    "This might be caused by insufficient shared memory (shm).\\n")\n'
              'SIGNAL_HANDLER(SIGFPE, handler_SIGFPE, "ERROR: Unexpected floating-point exception encountered in worker.\\n");\n')
    sites = extract_c("torch/csrc/DataLoader.cpp", source, "pytorch")
    assert [(s.line, s.end_line, s.kind, s.format.text) for s in sites] == [
        (1, 5, "error", "ERROR: Unexpected bus error encountered in worker. "
                        "This might be caused by insufficient shared memory (shm)."),  # (a trailing newline is no text)
        (6, 6, "error", "ERROR: Unexpected floating-point exception encountered in worker.")]
