"""Issue 13 items 7, 9, 10 and 12: what the CLI makes of inputs that are not plain UTF-8 logs.

Every case runs the real ``mltriage`` as a subprocess on real files. Logs are recorded zoo runs
(zoo/cpu/sigkill: torchrun with rank 1 SIGKILLed, local torch 2.13.0 CPU + gloo); what is made
hostile is the container around them: encoding, compression, NUL padding, permissions, links,
FIFOs, and Flight Recorder pickles shaped to exhaust memory, stack or integer printing.
"""

from __future__ import annotations

import ctypes
import gzip
import json
import os
import pickle
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_runner import ROOT, run_cli
import procs

SIGKILL_LOG = ROOT / "zoo" / "cpu" / "sigkill" / "console.log"
REAL_DUMPS = ROOT / "zoo" / "gpu" / "nccl_stuck_fr" / "fr"  # recorded on 2xH200: rank 1 never issued SeqNum 2
_PR_CAPBSET_DROP, _CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH = 24, 1, 2


def _without_file_override() -> None:
    """Run as root without the capabilities that ignore file permissions, so chmod 000 holds."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def run_cli_obeying_permissions(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
    env.pop("FORCE_COLOR", None)
    return procs.run([sys.executable, "-m", "mltriage", *args], capture_output=True, env=env, timeout=120,
                          preexec_fn=_without_file_override if os.geteuid() == 0 else None)


def _json(r: subprocess.CompletedProcess) -> dict:
    assert b"Traceback" not in r.stderr, r.stderr.decode()
    return json.loads(r.stdout)


def _sigkill_verdict(doc: dict) -> None:
    """What the recorded sigkill run must yield, whatever container it came in."""
    assert doc["status"] == "failure"
    assert doc["initiating_rank"] == 1
    assert doc["findings"][doc["root_cause_index"]]["signature"] == "torchrun-worker-sigkill"


# -- item 9: encodings and what stdin carries --------------------------------------------------
@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])  # "utf-16" writes a BOM
def test_utf16_log_is_decoded_from_a_file_and_from_stdin(tmp_path, encoding):
    log = tmp_path / "console.log"
    log.write_bytes(SIGKILL_LOG.read_text(encoding="utf-8").encode(encoding))
    assert log.read_bytes()[:2] in (b"\xff\xfe", b"\xfe\xff") or encoding != "utf-16"
    for r in (run_cli("diagnose", "--json", str(log)), run_cli("diagnose", "--json", "-", input=log.read_bytes())):
        assert r.returncode == 1, r.stderr.decode()
        _sigkill_verdict(_json(r))


def test_gzip_on_stdin_is_read_like_a_file_and_zstd_says_what_it_is(tmp_path):
    # issue 22: a compressed log is read as what it holds (tests/test_bad_input.py has the rest)
    packed = gzip.compress(SIGKILL_LOG.read_bytes())
    (tmp_path / "console.log.gz").write_bytes(packed)
    for r in (run_cli("diagnose", "--json", "-", input=packed), run_cli("diagnose", "--json", str(tmp_path / "console.log.gz"))):
        assert r.returncode == 1, r.stderr.decode()
        _sigkill_verdict(_json(r))
    if sys.version_info >= (3, 14):
        return  # compression.zstd reads it: nothing to refuse
    zstd = b"\x28\xb5\x2f\xfd" + os.urandom(64)  # Python 3.11 has no zstd decompressor
    (tmp_path / "console.log.zst").write_bytes(zstd)
    for r in (run_cli("diagnose", "-", input=zstd), run_cli("diagnose", str(tmp_path / "console.log.zst"))):
        assert r.returncode == 2
        err = r.stderr.decode()
        assert "zstd-compressed" in err and "zstdcat" in err and err.count("\n") == 1, err
        assert r.stdout == b""


def test_random_bytes_on_stdin_are_refused_with_exit_2():
    noise = os.urandom(200_000)
    r = run_cli("diagnose", "-", input=noise)
    assert r.returncode == 2
    assert "binary data, not a log" in r.stderr.decode()


# -- item 9: what could not be read makes the result incomplete -----------------------------------
def _job_dir(tmp_path: Path) -> Path:
    """A per-rank directory of the recorded run: rank 0's real log plus healthy rank lines."""
    job = tmp_path / "job"
    job.mkdir()
    lines = SIGKILL_LOG.read_text().splitlines(keepends=True)
    (job / "rank0.log").write_text("".join(lines[:8]))  # the launcher banner and healthy steps only
    return job


def test_unreadable_failing_rank_log_makes_the_result_incomplete_not_healthy(tmp_path):
    job = _job_dir(tmp_path)
    shutil.copy(SIGKILL_LOG, job / "rank1.log")
    (job / "rank1.log").chmod(0)
    try:
        r = run_cli_obeying_permissions("diagnose", "--json", str(job))
        text = run_cli_obeying_permissions("diagnose", str(job))
        sarif = run_cli_obeying_permissions("diagnose", "--sarif", str(job))
    finally:
        (job / "rank1.log").chmod(0o644)
    assert r.returncode == 5, r.stderr.decode()
    doc = _json(r)
    assert doc["status"] == "incomplete" and doc["complete"] is False
    assert doc["inputs"]["unread"] == [{"name": "rank1.log", "reason": f"permission denied: {job / 'rank1.log'}"}]
    assert text.returncode == 5
    out = text.stdout.decode()
    assert out.startswith("mltriage: INCOMPLETE") and "NOT READ rank1.log: permission denied" in out
    assert "no failure found" not in out.splitlines()[0].split("—")[0]
    run = _json(sarif)["runs"][0]
    assert sarif.returncode == 5 and run["invocations"][0]["executionSuccessful"] is False
    assert "permission denied" in run["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"]


def test_unreadable_subdirectory_is_reported_not_ignored(tmp_path):
    job = _job_dir(tmp_path)
    hidden = job / "node1"
    hidden.mkdir()
    shutil.copy(SIGKILL_LOG, hidden / "rank1.log")
    hidden.chmod(0)
    try:
        r = run_cli_obeying_permissions("diagnose", "--json", str(job))
    finally:
        hidden.chmod(0o755)
    assert r.returncode == 5, r.stderr.decode()
    doc = _json(r)
    assert doc["status"] == "incomplete"
    assert doc["inputs"]["unread"] == [{"name": "node1/", "reason": f"permission denied: {hidden}"}]


def test_a_failure_found_with_an_input_unread_is_still_a_failure_and_says_incomplete(tmp_path):
    job = _job_dir(tmp_path)
    shutil.copy(SIGKILL_LOG, job / "rank1.log")
    (job / "rank2.log").symlink_to("/proc/self/mem")  # opens, then every read fails with EIO
    r = run_cli("diagnose", "--json", str(job))
    assert r.returncode == 1
    doc = _json(r)
    _sigkill_verdict(doc)
    assert doc["complete"] is False
    assert doc["inputs"]["unread"][0]["name"] == "rank2.log"
    assert "Input/output error" in doc["inputs"]["unread"][0]["reason"]


def test_a_single_unreadable_file_is_an_input_error(tmp_path):
    log = tmp_path / "rank1.log"
    shutil.copy(SIGKILL_LOG, log)
    log.chmod(0)
    try:
        r = run_cli_obeying_permissions("diagnose", str(log))
    finally:
        log.chmod(0o644)
    assert r.returncode == 2 and r.stderr.decode() == f"mltriage: error: permission denied: {log}\n"


# -- item 10: NUL-padded tail ---------------------------------------------------------------------
@pytest.mark.parametrize("padding", [5_000, 200_000])
def test_nul_padded_tail_is_diagnosed_on_its_text(tmp_path, padding):
    log = tmp_path / "console.log"
    log.write_bytes(SIGKILL_LOG.read_bytes() + b"\x00" * padding)  # what a crashed writer leaves
    r = run_cli("diagnose", "--json", str(log))
    assert r.returncode == 1, r.stderr.decode()
    _sigkill_verdict(_json(r))


def test_short_log_with_a_long_nul_tail_is_read(tmp_path):
    # 3 KB of text then 60 KB of NULs: over half of the sniffed head is NUL
    text = b"".join(SIGKILL_LOG.read_bytes().splitlines(keepends=True)[:40])
    log = tmp_path / "rank2.log"
    log.write_bytes(text + b"\x00" * 60_000)
    r = run_cli("diagnose", "--json", str(log))
    assert r.returncode == 1, r.stderr.decode()
    assert _json(r)["findings"][0]["signature"] == "torch-gloo-connection-closed"


def test_only_nuls_is_refused(tmp_path):
    log = tmp_path / "rank0.log"
    log.write_bytes(b"\x00" * 10_000)
    r = run_cli("diagnose", str(log))
    assert r.returncode == 2 and "not a log" in r.stderr.decode()


# -- item 12: links, FIFOs, no command --------------------------------------------------------------
def test_symlink_loop_is_named_as_one(tmp_path):
    loop = tmp_path / "loop.log"
    loop.symlink_to(loop)
    r = run_cli("diagnose", str(loop))
    assert r.returncode == 2
    assert r.stderr.decode() == f"mltriage: error: symbolic link loop: {loop}\n"


def test_fifos_devices_and_dead_links_inside_a_directory_are_listed(tmp_path):
    job = tmp_path / "job"
    job.mkdir()
    shutil.copy(SIGKILL_LOG, job / "rank1.log")
    os.mkfifo(job / "rank3.log")
    (job / "rank4.log").symlink_to("/dev/zero")
    (job / "rank5.log").symlink_to(job / "gone.log")
    (job / "rank6.log").symlink_to(job / "rank6.log")
    started = time.perf_counter()
    r = run_cli("diagnose", "--json", str(job), timeout=60)
    assert time.perf_counter() - started < 30  # a FIFO read would block forever
    assert r.returncode == 1
    doc = _json(r)
    _sigkill_verdict(doc)
    assert doc["inputs"]["skipped"] == [
        {"name": "rank3.log", "reason": "not a regular file: a FIFO (named pipe)"},
        {"name": "rank4.log", "reason": "not a regular file: a character device"},
    ]
    assert doc["inputs"]["unread"] == [
        {"name": "rank5.log", "reason": f"broken symbolic link (its target is missing): {job / 'rank5.log'}"},
        {"name": "rank6.log", "reason": f"symbolic link loop: {job / 'rank6.log'}"},
    ]


def test_fifo_given_directly_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "run.log"
    os.mkfifo(fifo)
    r = run_cli("diagnose", str(fifo), timeout=60)
    assert r.returncode == 2 and "a FIFO" in r.stderr.decode()


def test_no_command_prints_usage_on_stderr_and_exits_2():
    r = run_cli()
    assert r.returncode == 2 and r.stdout == b""
    err = r.stderr.decode()
    assert err.startswith("usage: mltriage") and "a command is required" in err


def test_exit_code_5_is_documented():
    from mltriage import cli

    readme = (ROOT / "README.md").read_text()
    schema = (ROOT / "docs" / "diagnosis-schema.md").read_text()
    assert cli.EXIT_INCOMPLETE == 5 and "- 5: ``diagnose`` only: incomplete" in cli.__doc__
    assert "**5** `diagnose` only: incomplete" in readme
    assert "**5**\nincomplete" in schema and '`"incomplete"`' in schema


# -- item 7: Flight Recorder dumps shaped to exhaust memory, stack or printing ----------------------
def _dumps_with(tmp_path: Path, name: str, payload: bytes) -> Path:
    folder = tmp_path / "fr"
    shutil.copytree(REAL_DUMPS, folder)
    (folder / name).write_bytes(payload)
    return folder


def _shared_lists_pickle() -> bytes:
    """1.5 KB that a reader walking it (or str()) expands to 10^14 values."""
    nested: list = [0] * 100
    for _ in range(6):
        nested = [nested] * 100
    entry = {"collective_seq_id": 2, "state": "scheduled", "profiling_name": "nccl:all_reduce", "input_sizes": nested}
    return pickle.dumps({"entries": [entry], "rank": 2}, protocol=4)


HOSTILE_DUMPS = {
    "shared references": (_shared_lists_pickle(), True, "expands to more than"),
    # PROTO 2, 100,000 EMPTY_LIST, 99,999 APPEND, STOP: a list 100,000 levels deep
    "100k-deep list": (b"\x80\x02" + b"]" * 100_000 + b"a" * 99_999 + b".", True, "nests deeper than"),
    # a dump with a corrupt value may be real: not read, the diagnosis incomplete
    "20,000-digit int": (pickle.dumps({"entries": [{"collective_seq_id": 10**20_000}]}, protocol=4), True, "an integer of"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_DUMPS))
def test_hostile_dump_is_skipped_with_the_reason_and_the_real_ones_still_decide(tmp_path, case):
    payload, unread, reason = HOSTILE_DUMPS[case]
    folder = _dumps_with(tmp_path, "nccl_trace_rank_2", payload)
    r = run_cli("diagnose", "--json", str(folder))
    assert r.returncode == 1, r.stderr.decode()
    doc = _json(r)
    assert doc["initiating_rank"] == 1 and {t["rank"] for t in doc["flight_recorder"]} == {0, 1}
    listed = doc["inputs"]["unread"] if unread else doc["inputs"]["skipped"]
    assert [s["name"] for s in listed] == [str(folder / "nccl_trace_rank_2")]
    assert reason in listed[0]["reason"]
    assert doc["complete"] is not unread


def test_huge_sparse_dump_is_refused_before_it_is_read(tmp_path):
    folder = _dumps_with(tmp_path, "nccl_trace_rank_2", b"\x80\x04")
    with open(folder / "nccl_trace_rank_2", "r+b") as fh:
        fh.truncate(2 * 1024**3)  # 2 GiB, sparse: no disk used, but read whole it would be 2 GiB of memory
    started = time.perf_counter()
    r = run_cli("diagnose", "--json", str(folder))
    assert time.perf_counter() - started < 30
    assert r.returncode == 1
    doc = _json(r)
    assert doc["inputs"]["unread"] == [{"name": str(folder / "nccl_trace_rank_2"),
                                        "reason": "dump of 2048 MiB is over the 256 MiB limit: not read"}]


def test_the_cache_folder_stays_small_and_a_second_process_compiles_nothing(tmp_path):
    """The pre-filter's database was keyed by its literals in a set's order, which differs per
    process: every run compiled it afresh and left one more file (1.9 GB of them on a developer's
    machine). Now two processes share one file of each kind, and old files beyond CACHE_KEEP go."""
    import os
    import subprocess
    import sys

    from mltriage.library import CACHE_KEEP, write_cache_file

    env = dict(os.environ, MLTRIAGE_CACHE_DIR=str(tmp_path))
    log = ROOT / "examples" / "torchrun-rank2-indexerror.log"
    for seed in ("1", "2", "3"):  # a different string hash order each time
        run = procs.run([sys.executable, "-m", "mltriage", "diagnose", str(log)], env=dict(env, PYTHONHASHSEED=seed),
                             capture_output=True)
        assert run.returncode == 1, run.stderr
    prefilters = sorted(p.name for p in tmp_path.glob("prefilter-*"))
    assert len(prefilters) <= 3, prefilters  # the engine's, the masker's keywords and its stopwords: once each
    first = {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()}
    procs.run([sys.executable, "-m", "mltriage", "diagnose", str(log)], env=dict(env, PYTHONHASHSEED="4"), capture_output=True)
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()} == first  # nothing rewritten

    for n in range(CACHE_KEEP + 5):
        path = tmp_path / f"prefilter-old{n:04d}.hsdb"
        write_cache_file(path, b"x")
        os.utime(path, (n, n))  # older first
    kept = sorted(p.name for p in tmp_path.glob("prefilter-*.hsdb"))
    assert len(kept) == CACHE_KEEP and "prefilter-old0000.hsdb" not in kept
