"""Issue 13 items 1 and 6: numbers in a log never hang or abort a diagnosis.

Item 1: the pasted-matrix parser read numeric rows with one regex that backtracked exponentially
(a 28-digit row took 27 s, each digit doubling it). Item 6: ``int()`` on a 4,301-digit pid, a huge
SeqNum or ``rank=²`` (which passes ``str.isdigit``) turned the whole diagnosis into "internal
error". Each input below is a real recorded log with one field made hostile; everything else in
the diagnosis must stand.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from cli_runner import ROOT, run_cli
from mltriage.numbers import parse_float, parse_int

ZOO = ROOT / "zoo"
P2P_TEST = ROOT / "tests" / "probe" / "data" / "h200x2-p2pBandwidthLatencyTest.txt"


def _diagnose_json(path: Path):
    out = run_cli("diagnose", "--json", str(path))
    assert out.returncode in (0, 1), out.stderr.decode()
    return out.returncode, json.loads(out.stdout)


def test_long_digit_row_in_a_pasted_matrix_is_parsed_in_linear_time(tmp_path):
    real = P2P_TEST.read_text()
    # a row of 60 digits that ends in a non-number, right after the real connectivity matrix
    hostile = real.replace("     1\t     1     1\n", "     1\t     1     1\n     2 " + "1" * 60 + " x\n", 1)
    assert hostile != real
    log = tmp_path / "pasted.log"
    log.write_text(hostile)
    started = time.perf_counter()
    code, doc = _diagnose_json(log)
    elapsed = time.perf_counter() - started
    assert elapsed < 20, f"{elapsed:.1f}s: the row parser backtracks again (a 28-digit row took 27 s before)"
    topology = doc["topology"]
    assert topology["sources"] == ["p2pBandwidthLatencyTest"]
    assert topology["p2p_access"] == {"0->1": True, "1->0": True}
    # the matrices after the hostile row are still read
    assert topology["matrices"]["unidirectional_disabled"]["0->1"] == 37.26


def test_huge_pid_in_torchrun_summary_drops_only_that_field(tmp_path):
    real = (ZOO / "cpu" / "sigkill" / "console.log").read_text()
    huge = "9" * 4301
    log = tmp_path / "console.log"
    log.write_text(real.replace("(pid: 10109)", f"(pid: {huge})"))
    assert huge in log.read_text()
    code, doc = _diagnose_json(log)
    assert code == 1
    assert doc["initiating_rank"] == 1
    assert doc["findings"][doc["root_cause_index"]]["signature"] == "torchrun-worker-sigkill"
    killed = [w for w in doc["launcher"] if w["rank"] == 1]
    assert killed and all(w["pid"] is None and w["signal"] == "SIGKILL" for w in killed)


def test_huge_seqnum_keeps_the_hang_verdict(tmp_path):
    real = (ZOO / "gpu" / "nccl_stuck" / "console.log").read_text()
    log = tmp_path / "console.log"
    log.write_text(real.replace("SeqNum=2,", "SeqNum=" + "7" * 5000 + ","))
    code, doc = _diagnose_json(log)
    assert code == 1
    assert doc["initiating_rank"] == 1 and doc["failure_kind"] == "hang"


def test_superscript_rank_in_a_worker_tag_is_no_rank():
    # vLLM's worker tag with a rank that is no decimal number ("²".isdigit() is True)
    line = "(VllmWorker rank=² pid=52817) ERROR 11-30 09:20:31 [multiproc_executor.py:1057] " \
           "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    out = run_cli("diagnose", "--json", "-", input=line.encode())
    assert out.returncode == 1, out.stderr.decode()
    doc = json.loads(out.stdout)
    assert doc["findings"][0]["signature"] == "cuda-illegal-memory-access"
    assert doc["findings"][0]["rank"] is None


def test_glog_prefix_with_a_huge_pid_still_yields_its_finding():
    line = "E1130 09:00:00.000000 " + "1" * 5000 + " ProcessGroupNCCL.cpp:1] " \
           "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    out = run_cli("diagnose", "--json", "-", input=line.encode())
    assert out.returncode == 1, out.stderr.decode()
    assert json.loads(out.stdout)["findings"][0]["signature"] == "cuda-illegal-memory-access"


def test_the_one_parser():
    assert parse_int(" 42 ") == 42 and parse_int("-15") == -15 and parse_int("+3") == 3
    assert parse_int("²") is None and parse_int("①") is None and parse_int("") is None
    assert parse_int("9" * 4301) is None and parse_int("1_000") is None and parse_int("-") is None
    assert parse_int("٣") == 3  # a decimal digit of another script is still a digit
    assert parse_float("37.26") == 37.26 and parse_float("-0.5") == -0.5 and parse_float("12") == 12.0
    assert parse_float("nan") is None and parse_float("1e5") is None and parse_float(".") is None
    assert parse_float("1" * 100) is None
