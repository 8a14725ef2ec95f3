"""The shipped error catalogue: search/show/list through the real CLI, and what diagnosis does with it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cli_runner import ROOT, run_cli
from mltriage.catalogue.store import default_catalogue
from mltriage.engine import diagnose_path, diagnose_text

CATALOGUE = default_catalogue()
pytestmark = pytest.mark.skipif(not CATALOGUE.available, reason="catalogue data not generated")

# Rendered from the format strings of named releases (cited in each case), with values filled in.
SHM_ATTACH = ("Error while attaching to shared memory segment /dev/shm/nccl-Q2rTbW (size 14156128), "
              "error: No such file or directory (2)")  # NCCL v2.22.3-1 src/misc/shmutils.cc ncclShmOpen WARN
GRAPH_CAPTURE = ("NCCL cannot be captured in a graph if either it wasn't built with CUDA runtime >= 11.3 "
                 "or if the installed CUDA driver < R465.")  # NCCL v2.15.5-1 src/misc/strongstream.cc WARN
# vLLM v0.6.3 vllm/distributed/device_communicators/custom_all_reduce_utils.py gpu_p2p_access_check:
# f"Error happened when batch testing peer-to-peer access from {batch_src} to {batch_tgt}:\n{...}"
P2P_LIST = "RuntimeError: Error happened when batch testing peer-to-peer access from [0, 0, 1, 1] to [0, 1, 0, 1]:"
P2P_TUPLE = "RuntimeError: Error happened when batch testing peer-to-peer access from (0, 0, 1, 1) to (0, 1, 0, 1):"


def _search(text: str) -> list[dict]:
    done = run_cli("catalogue", "search", "--json", text)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _first(text: str) -> dict:
    """The first result: every matching entry comes back, best first; the first is the answer."""
    found = [e for e in _search(text) if e["matched"]]
    assert found, text
    return found[0]


def _names(entry: dict) -> set[str]:
    return {r for s in entry["sites"] for r in s["releases"]}


def test_search_finds_the_nccl_shm_message_with_its_sites_and_releases():
    entry = _first(SHM_ATTACH)
    assert entry["project"] == "nccl" and entry["kind"] == "warn"
    assert entry["captured"]["shmPath"] == "/dev/shm/nccl-Q2rTbW" and entry["captured"]["shmSize"] == "14156128"
    assert entry["present_in"].startswith("NCCL 2.22.3-1–")
    old = next(s for s in entry["sites"] if s["releases"][0] == "2.22.3-1")
    assert old["path"] == "src/misc/shmutils.cc" and old["function"] == "ncclShmOpen"
    assert re.fullmatch(r"https://github.com/NVIDIA/nccl/blob/[0-9a-f]{40}/src/misc/shmutils.cc#L\d+(-L\d+)?", old["link"])


def test_search_human_output_narrows_by_the_file_line_hint():
    done = run_cli("catalogue", "search", f"host:1:1 [0] misc/shmutils.cc:129 NCCL WARN {SHM_ATTACH}")
    text = done.stdout.decode()
    assert done.returncode == 0, done.stderr
    assert "misc/shmutils.cc:129 narrows it to: NCCL 2.22.3-1–2.27.7-1" in text


def test_search_finds_the_graph_capture_message_and_its_result_code():
    entry = _first(GRAPH_CAPTURE)
    assert entry["project"] == "nccl" and entry["cause"] == "ncclInvalidUsage"
    assert any(s["function"] == "ncclCudaGetCapturingGraph" for s in entry["sites"])


@pytest.mark.parametrize("line", [P2P_LIST, P2P_TUPLE])
def test_search_finds_both_forms_of_the_vllm_p2p_batch_test_message(line):
    entry = _first(line)
    assert entry["project"] == "vllm" and entry["kind"] == "RuntimeError"
    paths = {s["path"].rsplit("/", 1)[-1] for s in entry["sites"]}
    assert paths == {"custom_all_reduce_utils.py", "all_reduce_utils.py"}  # renamed in 0.10.2
    renamed = next(s for s in entry["sites"] if s["path"].endswith("/all_reduce_utils.py"))
    assert renamed["releases"][0] == "0.10.2"
    assert entry["curated"] == ["vllm-p2p-access-test-crashed"]
    assert entry["captured"]["batch_src"].startswith(("[0, 0", "(0, 0"))


def test_show_and_list():
    entry = _first(P2P_LIST)
    shown = run_cli("catalogue", "show", entry["id"])
    assert shown.returncode == 0 and b"gpu_p2p_access_check" in shown.stdout
    listed = run_cli("catalogue", "list", "--project", "vllm", "--release", "0.6.3")
    assert listed.returncode == 0 and entry["id"].encode() in listed.stdout
    newest_only = run_cli("catalogue", "list", "--project", "vllm", "--release", "0.2.0")
    assert entry["id"].encode() not in newest_only.stdout  # the self-test came with custom all-reduce (0.5.x)
    assert run_cli("catalogue", "show", "nope-0000000000").returncode == 2
    assert run_cli("catalogue", "list", "--project", "nope").returncode == 2


def test_an_unexplained_error_line_becomes_a_catalogue_finding():
    # vLLM v0.8.5 vllm/v1/engine/core.py run_engine_core: logger.exception("EngineCore failed to start.")
    d = diagnose_text("INFO 12-01 10:00:00 [core.py:390] starting\nERROR 12-01 10:00:01 [core.py:390] EngineCore failed to start.\n")
    (f,) = d.findings
    assert f.signature == "catalogue" and f.is_error and f.generic
    assert f.catalogue.project == "vllm" and f.catalogue.site.startswith("vllm/v1/engine/core.py:")
    assert "EngineCore failed to start" in f.title and "vLLM" in f.root_cause and "present in vLLM 0.8.5" in f.root_cause
    assert d.releases["vllm"].startswith("vLLM 0.8.5")


def test_a_curated_finding_links_to_its_catalogue_site():
    d = diagnose_text(P2P_LIST + "\n")
    top = d.findings[0]
    assert top.signature == "vllm-p2p-access-test-crashed"
    assert top.catalogue is not None and "all_reduce_utils.py" in top.catalogue.site


def test_a_warning_quoting_an_error_message_stays_a_warning():
    # CPython 3.11 warnings.formatwarning: "%s:%s: %s: %s\n" (file, line, category, message)
    d = diagnose_text("/x/functional_tensor.py:368: UserWarning: Failed to initialize NumPy: No module named 'numpy'\n")
    assert not [f for f in d.findings if f.is_error]


def test_version_narrowing_on_a_recorded_nccl_log():
    # recorded on the H200 host with NCCL 2.28.9 (the log says so); its WARN line carries bootstrap.cc:114
    log = ROOT / "corpus" / "gpu" / "nccl_socket_ifname.log"
    assert "NCCL version 2.28.9" in log.read_text()
    d = diagnose_path(log)
    assert d.releases["nccl"] == "NCCL 2.28.9-1"  # the log names its release; the WARN line alone gives 2.28.3-1–2.28.9-1
    top = d.root_cause
    assert top.signature == "nccl-no-socket-interface" and top.catalogue.site == "src/bootstrap.cc:114"


def test_healthy_corpus_stays_silent_with_the_catalogue():
    for log in sorted((ROOT / "corpus" / "healthy").rglob("*.log")):
        d = diagnose_path(log)
        assert not [f.title for f in d.findings if f.is_error], log


def test_prose_files_name_entries_that_exist_and_reach_the_finding():
    from mltriage.catalogue.prose import PROSE

    ids = {e.id for e in CATALOGUE.all_entries()}
    files = sorted(PROSE.glob("*.toml"))
    assert files and all(p.stem in ids for p in files), [p.stem for p in files if p.stem not in ids]
    # no curated signature covers this one; its prose reaches the finding
    # (NCCL v2.19.3-1 src/bootstrap.cc: WARN("Invalid NCCL_COMM_ID, please use format: <ipv4>:<port> or ..."))
    d = diagnose_text("host:1:1 [0] bootstrap.cc:1 NCCL WARN Invalid NCCL_COMM_ID, please use format: "
                      "<ipv4>:<port> or [<ipv6>]:<port> or <hostname>:<port>\n")
    (f,) = d.findings
    assert f.signature == "catalogue" and f.catalogue.id == "nccl-817f3e87cc"
    assert "bootstrap root" in f.root_cause and f.fix.commands == ["unset NCCL_COMM_ID   # or: export NCCL_COMM_ID=10.0.0.1:29600"]
    # a curated entry covers the graph-capture message: its prose shows in `catalogue show`
    shown = run_cli("catalogue", "show", "nccl-cff9389ad3").stdout.decode()
    assert "What it means:" in shown and "Curated entry: nccl-cuda-graph-capture-unsupported" in shown


def test_version_narrowing_by_the_catalogued_lines_alone():
    # the recorded WARN line of the same run, without the lines that name the release
    log = ROOT / "corpus" / "gpu" / "nccl_socket_ifname.log"
    warn = next(line for line in log.read_text().splitlines() if "NCCL WARN" in line)
    d = diagnose_text(warn + "\n")
    assert d.releases["nccl"] == "NCCL 2.28.3-1–2.28.9-1"  # bootstrap.cc:114 is that site only in these


def test_an_error_line_after_a_flood_of_warnings_is_still_named():
    # Python's warnings.formatwarning form, repeated past the warning budget, then vLLM's v1 engine error
    flood = "".join(f"/x/train.py:{n}: UserWarning: step {n} is slow\n" for n in range(5000))
    d = diagnose_text(flood + "ERROR 12-01 10:00:01 [core.py:390] EngineCore failed to start.\n")
    assert [f.title for f in d.findings if f.is_error] == ["vLLM error: EngineCore failed to start."]


def test_a_builtin_message_raised_by_the_users_own_code_is_no_librarys_raise():
    # recorded: the zoo script's own `IndexError: list index out of range` (CPython's message; transformers
    # also raises those words); the traceback's innermost frame is the user's file, and torchrun's summary
    # quotes the same exception without frames
    d = diagnose_path(ROOT / "zoo" / "cpu" / "python_exception" / "console.log")
    assert any(f.facts.get("exception_message") == "list index out of range" for f in d.findings)
    assert [f.catalogue for f in d.findings if f.facts.get("exception_type") == "IndexError"] and \
        all(f.catalogue is None for f in d.findings if f.facts.get("exception_type") == "IndexError")


def test_an_exhausted_lookup_budget_is_said(monkeypatch):
    from mltriage.engine import catalogued

    monkeypatch.setattr(catalogued, "LOOKUP_BUDGET", 0)
    d = diagnose_text("ERROR 12-01 10:00:01 [core.py:390] EngineCore failed to start.\n")
    assert not [f for f in d.findings if f.signature == "catalogue"]
    assert any("catalogue's lookup budget ran out" in w for w in d.warnings)


def test_the_lookup_budget_counts_lookups_not_time(monkeypatch):
    # the budget is a count: a slow clock (a busy machine) changes nothing, and what it stops is the same every run
    import time

    text = "ERROR 12-01 10:00:01 [core.py:390] EngineCore failed to start.\n"
    before = [f.title for f in diagnose_text(text).findings]
    monkeypatch.setattr(time, "monotonic", lambda: 1e18)
    assert [f.title for f in diagnose_text(text).findings] == before
    assert any(f.signature == "catalogue" for f in diagnose_text(text).findings)


def test_a_tracebacks_innermost_frame_narrows_the_releases():
    # the frame ".../dist-packages/vllm/distributed/device_communicators/all_reduce_utils.py", line 405 is an
    # installed path: it is the site whose line span holds 405 (404-408 in vLLM 0.27.0-0.28.0)
    d = diagnose_path(ROOT / "tests" / "lsp" / "data" / "logs" / "vllm_p2p_batch_test.log")
    top = d.findings[0]
    assert top.signature == "vllm-p2p-access-test-crashed"
    assert top.catalogue.site == "vllm/distributed/device_communicators/all_reduce_utils.py:404"
    assert d.releases["vllm"] == "vLLM 0.27.0–0.28.0"


# PyTorch's C++ side (project libtorch, from Debian's orig tarballs). Rendered from the format strings of
# libtorch v1.13.1 torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:821 (abortTimedOutCollectives: c10::str
# "[Rank ", rank_, "] ", "Watchdog caught collective operation timeout: ", work, " ran for ", ...) with the
# same file's operator<< of WorkNCCL ("WorkNCCL(", "SeqNum=", ..., ", OpType=", ..., ", Timeout(ms)=", ..., ")"),
# and glog's "[E file:line] " prefix
WATCHDOG_1_13 = ("[E ProcessGroupNCCL.cpp:821] [Rank 3] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=4178, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1803391 milliseconds before timing out.")
# v2.6.0 the same file's WorkNCCL::checkTimeout (logPrefix() "[Rank ", rank_, "] "; NumelIn/NumelOut added)
WATCHDOG_2_6 = ("[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4178, OpType=ALLREDUCE, "
                "NumelIn=1048576, NumelOut=1048576, Timeout(ms)=600000) ran for 600039 milliseconds before timing out.")
# v1.13.1 c10/cuda/CUDACachingAllocator.cpp DeviceCachingAllocator::malloc (no memory fraction set, so the
# optional "<size> allowed; " piece is empty), as torch.cuda.OutOfMemoryError prints it
OOM_1_13 = ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total "
            "capacity; 14.50 GiB already allocated; 3.44 MiB free; 14.71 GiB reserved in total by PyTorch) If reserved "
            "memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation "
            "for Memory Management and PYTORCH_CUDA_ALLOC_CONF")
# v1.13.1 and v2.6.0 torch/csrc/distributed/c10d/socket.cpp SocketListenOp::tryListen:
# recordError("The server socket has failed to bind to {} {}.", addr, getSocketError()) through C10D_WARNING
BIND = ("[W socket.cpp:426] [c10d] The server socket has failed to bind to [::]:29500 "
        "(errno: 98 - Address already in use).")
# v1.13.1 torch/csrc/distributed/c10d/NCCLUtils.hpp C10D_NCCL_CHECK: "NCCL error in: " + __FILE__ + ":" + __LINE__ + ", "
# + ncclGetErrorWithVersion(result) (ncclGetErrorString + ", NCCL version " + version)
NCCL_ERROR = ("RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1229, "
              "unhandled system error, NCCL version 2.12.10")
# PyTorch's Python side: torch v2.1.0 torch/distributed/elastic/multiprocessing/api.py SubprocessContext._poll,
# log.error("failed (exitcode: %s) local_rank: %s (pid: %s) of binary: %s", ...) under logging's default format
ELASTIC_FAILED = ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 "
                  "(pid: 4172) of binary: /usr/bin/python3")


def _only(text: str, project: str) -> dict:
    """The first result, which must be of ``project`` (others that match less well may follow)."""
    found = _first(text)
    assert found["project"] == project, found["format"]
    return found


def test_search_finds_the_c10d_watchdog_timeout_of_each_release():
    old = _only(WATCHDOG_1_13, "libtorch")
    assert old["captured"]["work"].startswith("WorkNCCL(SeqNum=4178") and old["captured"]["timeElapsed_count"] == "1803391"
    (site,) = old["sites"]
    assert (site["path"], site["line"], site["function"], site["releases"]) == (
        "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", 821, "ProcessGroupNCCL::abortTimedOutCollectives", ["1.13.1"] * 2)
    assert site["link"] == ("https://github.com/pytorch/pytorch/blob/v1.13.1/"
                            "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp#L821")
    new = _only(WATCHDOG_2_6, "libtorch")
    assert new["id"] != old["id"] and _names(new) == {"2.6.0"}
    assert new["sites"][0]["function"] == "ProcessGroupNCCL::WorkNCCL::checkTimeout"
    text = run_cli("catalogue", "search", WATCHDOG_1_13).stdout.decode()
    assert "ProcessGroupNCCL.cpp:821 narrows it to: PyTorch C++ 1.13.1 (of PyTorch C++, only 1.13.1 and 2.6.0 are catalogued)" in text


def test_search_finds_the_caching_allocators_oom_and_c10d_socket_messages():
    oom = _only(OOM_1_13, "libtorch")
    assert oom["kind"] == "OutOfMemoryError" and oom["captured"]["format_size_alloc_size"] == "20.00 MiB"
    assert [(s["path"], s["function"]) for s in oom["sites"]] == [
        ("c10/cuda/CUDACachingAllocator.cpp", "DeviceCachingAllocator::malloc")]
    bind = _only(BIND, "libtorch")
    assert bind["captured"]["getSocketError"] == "(errno: 98 - Address already in use)"
    assert _names(bind) == {"1.13.1", "2.6.0"}
    assert {s["path"] for s in bind["sites"]} == {"torch/csrc/distributed/c10d/socket.cpp"}
    nccl = _only(NCCL_ERROR, "libtorch")
    assert nccl["captured"]["LINE"] == "1229" and nccl["sites"][0]["function"] == "C10D_NCCL_CHECK"
    # one message, one entry: 1.13.1 raises it as RuntimeError, 2.6.0 as DistBackendError
    assert {(s["kind"], tuple(s["releases"])) for s in nccl["sites"]} >= {
        ("RuntimeError", ("1.13.1", "1.13.1")), ("DistBackendError", ("2.6.0", "2.6.0"))}


def test_search_finds_an_elastic_message_across_torch_releases():
    entry = _only(ELASTIC_FAILED, "pytorch")
    assert entry["captured"]["first_failure_exitcode"] == "1"
    assert entry["present_in"] == "PyTorch 1.9.0–2.15.0"  # torchelastic came into torch in 1.9
    assert {s["path"] for s in entry["sites"]} == {"torch/distributed/elastic/multiprocessing/api.py"}


def test_every_pytorch_release_is_covered():
    names = [r.name for r in CATALOGUE.releases("pytorch")]
    assert names[0] == "1.8.0" and names[-1] == "2.15.0" and len(names) == 40
    assert [r.name for r in CATALOGUE.releases("libtorch")] == ["1.13.1", "2.6.0"]


# What the log itself says ranks the entries (all that match are kept). torch v2.5.1 torch/serialization.py
# _validate_device raises (lines 508-514) RuntimeError(f"Attempting to deserialize object on a {backend_name.upper()}
# device but torch.{backend_name}.is_available() is False. If you are running on a CPU-only machine, please use
# torch.load with map_location=torch.device('cpu') to map your storages to the CPU."), with backend_name "cuda":
# the same words as torch 1.8.0-2.3.1's fully literal message in validate_cuda_device
DESERIALIZE = ("RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. "
               "If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') "
               "to map your storages to the CPU.")
DESERIALIZE_2_5 = ("Traceback (most recent call last):\n"
                   '  File "/opt/venv/lib/python3.11/site-packages/torch/serialization.py", line 508, in _validate_device\n'
                   "    raise RuntimeError(\n" + DESERIALIZE + "\n")


def test_a_traceback_frame_picks_the_entry_whose_site_it_is():
    plain = _first(DESERIALIZE)  # no frame: the literal form and the placeholder form both match; both are kept
    both = [e for e in _search(DESERIALIZE) if e["matched"]]
    assert {e["format"].split(" device but")[0] for e in both} >= {
        "Attempting to deserialize object on a CUDA", "Attempting to deserialize object on a {backend_name_upper}"}
    assert plain["format"].startswith("Attempting to deserialize object on a CUDA device")  # the most literal first
    framed = _first(DESERIALIZE_2_5)
    assert framed["format"].startswith("Attempting to deserialize object on a {backend_name_upper}")
    assert (framed["site"]["path"], framed["site"]["line"], framed["site"]["releases"]) == (
        "torch/serialization.py", 508, ["2.5.0", "2.5.1"])
    assert framed["narrowed_to"] == "PyTorch 2.5.0–2.5.1"
    d = diagnose_text(DESERIALIZE_2_5)
    ref = next(f.catalogue for f in d.findings if f.catalogue is not None)
    assert ref.site == "torch/serialization.py:508" and ref.releases == "PyTorch 2.5.0–2.5.1"


def test_the_exception_type_picks_the_site_that_raises_it():
    # one entry, two kinds: libtorch 1.13.1 raises C10D_NCCL_CHECK's message as RuntimeError, 2.6.0 as DistBackendError
    old = _first(NCCL_ERROR)
    new = _first(NCCL_ERROR.replace("RuntimeError:", "torch.distributed.DistBackendError:"))
    assert old["id"] == new["id"]
    assert (old["site"]["kind"], old["site"]["releases"]) == ("RuntimeError", ["1.13.1", "1.13.1"])
    assert (new["site"]["kind"], new["site"]["releases"]) == ("DistBackendError", ["2.6.0", "2.6.0"])


def test_a_release_the_log_states_picks_that_releases_site():
    # NCCL's INFO "NCCL version %s" banner (src/init.cc, every v2.x); the WARN line without its file:line prefix
    entry = CATALOGUE.entry(_first(SHM_ATTACH)["id"])
    names = [r.name for r in CATALOGUE.releases("nccl")]
    for version in ("2.24.3", "2.29.7", "2.30.7"):
        index = names.index(version + "-1")
        (site,) = [s for s in entry.sites if s.first <= index <= s.last]
        d = diagnose_text(f"node1:1:1 [0] NCCL INFO NCCL version {version}+cuda12.4\n"
                          f"node1:1:1 [0] NCCL WARN {SHM_ATTACH}\n")
        ref = next(f.catalogue for f in d.findings if f.catalogue is not None)
        assert ref.site == f"{site.path}:{site.line}" and ref.releases == f"NCCL {version}-1", version
        found = _first(f"NCCL version {version}+cuda12.4\nNCCL WARN {SHM_ATTACH}")
        assert found["site"]["line"] == site.line and found["narrowed_to"].startswith("NCCL ")


# The installed versions a log lists rank the entries as a printed release does: pip freeze's '{name}=={version}'
# (pypa/pip src/pip/_internal/operations/freeze.py), collect_env's '[pip3] {name}=={version}' (torch
# torch/utils/collect_env.py), pip's "Successfully installed %s" of name-version pairs and "Requirement already
# satisfied: %s in %s (%s)" (src/pip/_internal/commands/install.py, req_install)
@pytest.mark.parametrize("listed, release, literal", [
    ("torch==2.5.1", "2.5.1", False),
    ("[pip3] torch==2.4.0+cu121", "2.4.0", False),
    ("Successfully installed torch-2.3.1 typing-extensions-4.12.2", "2.3.1", True),
    ("Requirement already satisfied: torch in /usr/lib/python3/dist-packages (1.13.1)", "1.13.1", True),
])
def test_an_installed_version_the_log_lists_picks_that_releases_site(listed, release, literal):
    # no frame: torch 1.8.0-2.3.1's literal "...on a CUDA device..." and 2.4+'s "...on a {backend_name_upper}
    # device..." both match the line; the release the log lists says which one raised it
    d = diagnose_text(listed + "\n" + DESERIALIZE + "\n")
    ref = next(f.catalogue for f in d.findings if f.catalogue is not None)
    assert ref.format.startswith("Attempting to deserialize object on a CUDA device") is literal
    index = [r.name for r in CATALOGUE.releases("pytorch")].index(release)
    (site,) = [s for s in CATALOGUE.entry(ref.id).sites if s.first <= index <= s.last]
    assert (ref.site, ref.releases) == (f"{site.path}:{site.line}", f"PyTorch {release}")
    assert d.releases == {"pytorch": f"PyTorch {release}"}  # (libtorch has no line here: torch 1.13.1 does not add it)
    assert diagnose_text(DESERIALIZE + "\n").findings[0].catalogue.releases.startswith("PyTorch 1.8.0–2.3.1")


def test_a_printed_release_outranks_the_installed_one_and_a_wheels_version_is_its_nccl_release():
    # nvidia-nccl-cu12 2.22.3 is NCCL 2.22.3-1; NCCL's own "NCCL version %s" banner (src/init.cc) says what runs
    warn = f"node1:1:1 [0] NCCL WARN {SHM_ATTACH}\n"
    listed = diagnose_text("nvidia-nccl-cu12==2.22.3\n" + warn)
    printed = diagnose_text("nvidia-nccl-cu12==2.22.3\nnode1:1:1 [0] NCCL INFO NCCL version 2.24.3+cuda12.4\n" + warn)
    assert next(f.catalogue for f in listed.findings if f.catalogue).releases == "NCCL 2.22.3-1"
    assert next(f.catalogue for f in printed.findings if f.catalogue).releases == "NCCL 2.24.3-1"


@pytest.mark.parametrize("package, version, project, release", [
    ("nvidia_nccl_cu12", "2.26.2.post1", "nccl", "2.26.2-1"),  # a wheel rebuild of NCCL 2.26.2-1
    ("torch", "2.6.0+cu124", "libtorch", "2.6.0"),
    ("vllm", "0.8.5.post1", "vllm", "0.8.5.post1"),  # a release of its own, not 0.8.5
    ("megatron_core", "0.12.1", "megatron", "0.12.1"),
])
def test_an_installed_version_is_the_release_of_that_name(package, version, project, release):
    from mltriage.catalogue.match import installed_releases

    (index,) = installed_releases({package: version}, CATALOGUE)[project]
    assert CATALOGUE.releases(project)[index].name == release
    assert installed_releases({"torch": "2.5.1"}, CATALOGUE).keys() == {"pytorch"}  # libtorch has no 2.5.1


# Real Dynamo graph breaks (fixtures/dynamo: torch 2.13.0+cpu, fullgraph=True): Unsupported is re-raised
# from torch/_dynamo/eval_frame.py with the traceback cut there, so the innermost frame is no site of it;
# the site is the unimplemented(gb_type=..., explanation=...) call the message's first lines come from.
DYNAMO = Path(__file__).parent / "fixtures" / "dynamo"


@pytest.mark.parametrize("name, path, function", [
    ("graph_break", "torch/_dynamo/variables/functions.py", "SkipFunctionVariable.call_function"),
    ("data_dependent_branch", "torch/_dynamo/symbolic_convert.py", "generic_jump.raise_jump_graph_break"),
])
def test_a_dynamo_graph_break_names_the_site_that_raised_it(name, path, function):
    d = diagnose_path(DYNAMO / f"{name}.log")
    (found,) = [f for f in d.findings if f.facts.get("exception_type") == "torch._dynamo.exc.Unsupported"]
    ref = found.catalogue
    assert ref is not None and ref.project == "pytorch" and ref.kind == "Unsupported"
    assert ref.site.startswith(path + ":") and ref.function == function
    first, _, last = ref.releases.removeprefix("PyTorch ").partition("–")
    assert tuple(map(int, first.split("."))) <= (2, 13, 0) <= tuple(map(int, last.split(".")))  # the run's torch


def test_search_finds_a_dynamo_graph_break_by_its_type_and_explanation():
    log = (DYNAMO / "data_dependent_branch.log").read_text().splitlines()
    start = next(n for n, line in enumerate(log) if line.startswith("torch._dynamo.exc.Unsupported: "))
    entry = _first("\n".join(log[start:start + 2]))
    assert entry["project"] == "pytorch" and entry["kind"] == "Unsupported"
    assert "2.13.0" in _names(entry) and {s["path"] for s in entry["sites"]} == {"torch/_dynamo/symbolic_convert.py"}


def test_search_finds_a_message_whose_start_reads_as_a_rank_prefix():
    # NCCL v2.30.7-1 src/init.cc ncclCommInitRankFunc: INFO "[Rank %d] %s comm %p rank %d nranks %d cudaDev %d
    # nvmlDev %d busId %lx commId 0x%llx - Init START"; "[Rank 3] " is also how a rank prefix reads
    found = _search("[Rank 3] ncclCommInitRank comm 0x55d1c0a8 rank 3 nranks 8 cudaDev 3 nvmlDev 3 busId 41000 "
                    "commId 0x9f1c2b3a4d5e6f70 - Init START")
    assert any(e["matched"] and e["project"] == "nccl" and e["format"].startswith("[Rank {") for e in found)


# ATen's native checks and the DataLoader's signal handlers (libtorch's kept folders include aten/src/ATen and
# torch/csrc/DataLoader.cpp). Real runs: fixtures/aten (torch 2.13.0+cpu; see its README).
ATEN = Path(__file__).parent / "fixtures" / "aten"
# torch v2.6.0 aten/src/ATen/core/adaption.cpp common_device_check_failure: TORCH_CHECK(false, "Expected all tensors
# to be on the same device, but " "found at least two devices, ", common_device, " and ", tensor.device(), "! "
# "(when checking argument for argument ", argName, " in method ", methodName, ")")
SAME_DEVICE = ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and "
               "cpu! (when checking argument for argument mat1 in method wrapper_CUDA_addmm)")


def test_a_cpp_check_under_python_frames_names_its_aten_site():
    # the innermost frame is torch/nn/modules/linear.py (F.linear): a Python frame is never a C++ site
    d = diagnose_path(ATEN / "mm_shapes.log")
    ref = next(f.catalogue for f in d.findings if f.catalogue is not None)
    assert ref.project == "libtorch" and ref.kind == "RuntimeError"
    # the dense check, not its sparse or CUDA copies in subfolders (aten/src/ATen/native/sparse/..., native/cuda/Blas.cpp)
    assert ref.site.startswith("aten/src/ATen/native/LinearAlgebra.cpp:"), ref.site
    assert ref.format.startswith("mat1 and mat2 shapes cannot be multiplied (")


def test_the_dataloader_workers_bus_error_names_the_signal_handler_that_wrote_it():
    d = diagnose_path(ATEN / "dataloader_bus.log")
    sites = {f.catalogue.site.rsplit(":", 1)[0]: f.catalogue for f in d.findings if f.catalogue is not None}
    assert sites["torch/csrc/DataLoader.cpp"].kind == "error"
    assert sites["torch/csrc/DataLoader.cpp"].format.startswith("ERROR: Unexpected bus error encountered in worker.")


def test_search_finds_atens_same_device_check_in_both_catalogued_releases():
    found = _first(SAME_DEVICE)
    assert (found["project"], found["site"]["path"]) == ("libtorch", "aten/src/ATen/core/adaption.cpp")
    assert _names(found) >= {"1.13.1", "2.6.0"}
    assert found["captured"]["common_device"] == "cuda:0" and found["captured"]["methodName"] == "wrapper_CUDA_addmm"


def test_c10s_triggered_internally_at_narrows_a_warning_to_the_release_of_that_line():
    # torch 2.13.0's Resize.cpp:30 is 2.6.0's site of the message (1.13.1 has it at line 17)
    log = (ATEN / "resize_warning.log").read_text()
    ref = next(f.catalogue for f in diagnose_text(log).findings if f.catalogue is not None)
    assert (ref.site, ref.releases.split(" (")[0]) == ("aten/src/ATen/native/Resize.cpp:30", "PyTorch C++ 2.6.0")
    bare = re.sub(r" \(Triggered internally at [^)]*\)", "", log)
    ref = next(f.catalogue for f in diagnose_text(bare).findings if f.catalogue is not None)
    assert ref.releases.startswith("PyTorch C++ 1.13.1–2.6.0")


# c10::Error's what() with its C++ stack (real torch 2.13.0 output: "Exception raised from meta at
# /__w/pytorch/pytorch/aten/src/ATen/native/LinearAlgebra.cpp:194 (most recent call first):"), here with the line of
# v2.6.0's ADDMM_META check (LinearAlgebra.cpp 183-185) rather than its mm meta function's (201)
MM = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x4 and 3x5)"
RAISED_FROM = "Exception raised from addmm_out at ../aten/src/ATen/native/LinearAlgebra.cpp:{} (most recent call first):"


def test_c10s_exception_raised_from_line_picks_the_site_it_names():
    assert _first(MM)["site"]["line"] == 201  # no hint: the newest site, of those alike the one with the highest line
    for line, site in ((184, 183), (201, 201)):
        found = _first(MM + "\n" + RAISED_FROM.format(line))
        assert (found["site"]["path"], found["site"]["line"]) == ("aten/src/ATen/native/LinearAlgebra.cpp", site)
        assert found["narrowed_to"].startswith("PyTorch C++ 2.6.0 ")
