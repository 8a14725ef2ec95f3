"""Issue 22, reliability items 2, 5, 7 and two of item 8: inputs of a bad shape, a hostile size, an
odd encoding or a moving length.

Every case runs the real ``mltriage diagnose`` as a subprocess on real files. The logs are the
recorded zoo run ``zoo/cpu/python_exception`` (torchrun, 4 ranks, local torch 2.13.0 CPU + gloo:
rank 2 raises IndexError, the others see gloo's connection close) in its ``--log-dir`` layout, and
the error files are the ones torch's ``@record`` wrote in that run. What is made hostile is the
container: a field of the error file, a Flight Recorder pickle's opcodes, the log's compression,
encoding, line ends, NUL bytes, or a writer still appending to it.

A changed input must give the verdict the clean input gives (each test computes that one too), or,
where a part could not be read, say so: exit 5 and the input listed under ``unread``, never exit 0
and never an internal error (exit 4).
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import procs
from cli_runner import ROOT, run_cli

ATTEMPT = next((ROOT / "zoo" / "cpu" / "python_exception" / "logdir").glob("*/attempt_0"))
RANK2_LOG = ATTEMPT / "2" / "stderr.log"  # the rank that raised IndexError
ERROR_FILE = ATTEMPT / "1" / "error.json"  # as torch's ErrorHandler.record_exception wrote it
REAL_DUMPS = ROOT / "zoo" / "gpu" / "nccl_stuck_fr" / "fr"  # recorded on 2xH200


def _cli(*args: str, **kw) -> tuple[int, dict, str]:
    r = run_cli("diagnose", "--json", *args, **kw)
    err = r.stderr.decode()
    assert "Traceback" not in err and "internal error" not in err, err
    return r.returncode, (json.loads(r.stdout) if r.stdout else {}), err


def _verdict(doc: dict) -> tuple:
    """What a diagnosis says: status, initiator and the root cause with its exception."""
    root = doc["findings"][doc["root_cause_index"]] if doc.get("root_cause_index") is not None else {}
    return (doc["status"], doc["initiating_rank"], root.get("signature"), root.get("facts", {}).get("exception_message"))


def _healthy_job(tmp_path: Path) -> Path:
    """The run's log folder without the failing rank's output: the healthy stdout of every rank."""
    job = tmp_path / "job"
    for rank in range(4):
        (job / "attempt_0" / str(rank)).mkdir(parents=True)
        shutil.copy(ATTEMPT / str(rank) / "stdout.log", job / "attempt_0" / str(rank) / "stdout.log")
    return job


def _job_with(tmp_path: Path, name: str, data: bytes) -> Path:
    """The healthy folder plus rank 2's stderr as ``name`` holding ``data``."""
    job = _healthy_job(tmp_path)
    (job / "attempt_0" / "2" / name).write_bytes(data)
    return job


def _clean_verdict(tmp_path: Path) -> tuple:
    job = _job_with(tmp_path / "clean", "stderr.log", RANK2_LOG.read_bytes())
    code, doc, _ = _cli(str(job))
    assert code == 1 and doc["status"] == "failure" and doc["initiating_rank"] == 2
    return _verdict(doc)


def _assert_unread(code: int, doc: dict, path: Path, reason: str) -> None:
    assert code == 5, doc
    assert doc["status"] == "incomplete" and doc["complete"] is False
    unread = {u["name"]: u["reason"] for u in doc["inputs"]["unread"]}
    name = next(n for n in unread if n.endswith(str(path.relative_to(path.parents[2]))))
    assert reason in unread[name], unread


# Runs the CLI as its child and writes the child's peak RSS (KiB) to argv[1]. The peak is measured
# from this small process because a child's ru_maxrss starts at its parent's resident size at fork
# (Linux keeps the high-water mark across exec): forked from pytest it would report pytest's.
_MEASURE = """
import os, subprocess, sys
child = subprocess.Popen([sys.executable, "-m", "mltriage", "diagnose", "--json", *sys.argv[2:]])
_, status, usage = os.wait4(child.pid, 0)
open(sys.argv[1], "w").write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def _run_measured(*args: str, timeout: float = 120) -> tuple[int, bytes, bytes, int]:
    """The CLI's exit code, stdout, stderr and peak resident memory in MiB (of that process alone)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile("r") as peak:
        proc = procs.popen([sys.executable, "-c", _MEASURE, peak.name, *args], stdout=out, stderr=err, env=env)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            procs.kill_group(proc.pid)  # the CLI and the process measuring it
            proc.wait()
            pytest.fail(f"mltriage diagnose {args} ran past {timeout} s")
        out.seek(0), err.seek(0)
        return proc.returncode, out.read(), err.read(), int(peak.read() or 0) // 1024


# -- item 2: torchrun error files of a wrong shape ------------------------------------------------
def _error_doc() -> dict:
    return json.loads(ERROR_FILE.read_text())


def _with(path: tuple[str, ...], value) -> bytes:
    doc = _error_doc()
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return json.dumps(doc).encode()


BAD_ERROR_FILES = {
    "extraInfo a list": (_with(("message", "extraInfo"), ["Traceback (most recent call last):"]), "'extraInfo' is a list"),
    "extraInfo a string": (_with(("message", "extraInfo"), "Traceback (most recent call last):"), "'extraInfo' is a str"),
    "message a list": (_with(("message",), ["IndexError"]), "'message' is a list"),
    "message.message a dict": (_with(("message", "message"), {"a": 1}), "'message.message' is an object"),
    "py_callstack a number": (_with(("message", "extraInfo", "py_callstack"), 3), "'py_callstack' is an int"),
    "timestamp a list": (_with(("message", "extraInfo", "timestamp"), [1796030675]), "'timestamp' is a list"),
    "timestamp not a number": (_with(("message", "extraInfo", "timestamp"), "yesterday"), "'timestamp'"),
    "100,000 nested brackets": (b"[" * 100_000 + b"]" * 100_000, "nests deeper than"),
    "a dict 100,000 deep": (b'{"message":' * 100_000 + b"1" + b"}" * 100_000, "nests deeper than"),
    "not JSON": (b'{"message": {"message": "IndexError', "not valid JSON"),
}


@pytest.mark.parametrize("case", sorted(BAD_ERROR_FILES))
def test_error_file_of_a_wrong_shape_is_listed_as_not_read(tmp_path, case):
    data, reason = BAD_ERROR_FILES[case]
    job = _healthy_job(tmp_path)
    error_file = job / "attempt_0" / "1" / "error.json"
    error_file.write_bytes(data)
    code, doc, _ = _cli(str(job))
    _assert_unread(code, doc, error_file, reason)
    text = run_cli("diagnose", str(job))
    assert text.returncode == 5 and f"NOT READ {error_file}" in text.stdout.decode()


@pytest.mark.parametrize("case", ["extraInfo a list", "extraInfo a string", "100,000 nested brackets"])
def test_error_file_of_a_wrong_shape_given_alone_is_not_read_exit_5(tmp_path, case):
    """Alone as in a directory: an input of a wrong shape is unreadable input (README: exit 5, listed
    as NOT READ), not a usage error and never an internal one."""
    error_file = tmp_path / "attempt_0" / "1" / "error.json"
    error_file.parent.mkdir(parents=True)
    error_file.write_bytes(BAD_ERROR_FILES[case][0])
    code, doc, _ = _cli(str(error_file))
    _assert_unread(code, doc, error_file, BAD_ERROR_FILES[case][1])
    text = run_cli("diagnose", str(error_file))
    assert text.returncode == 5 and f"NOT READ {error_file}" in text.stdout.decode(), text.stderr.decode()


def test_real_error_files_are_still_read_and_other_json_still_read_as_text(tmp_path):
    job = _healthy_job(tmp_path)
    shutil.copy(ATTEMPT / "2" / "error.json", job / "attempt_0" / "2" / "error.json")
    (job / "metrics.json").write_text('{"step": 3, "loss": 0.2}\n{"step": 4, "loss": 0.1}\n')  # JSON lines: text
    (job / "deep.json").write_bytes(b"[" * 100_000 + b"]" * 100_000)  # no error file by name or shape: text
    code, doc, _ = _cli(str(job))
    assert code == 1 and doc["complete"] is True
    assert _verdict(doc) == ("failure", 2, "python-unhandled-exception", "list index out of range")


def test_error_file_of_torchs_string_message_form_is_read(tmp_path):
    # ProcessFailure._get_error_data's other form, {"message": str, "timestamp": int}, says what the first does
    real = ATTEMPT / "2" / "error.json"
    job = _healthy_job(tmp_path / "dict")
    shutil.copy(real, job / "attempt_0" / "2" / "error.json")
    _, as_written, _ = _cli(str(job))
    extra = json.loads(real.read_text())["message"]["extraInfo"]
    job = _healthy_job(tmp_path / "str")
    (job / "attempt_0" / "2" / "error.json").write_text(json.dumps({"message": extra["py_callstack"],
                                                                     "timestamp": int(extra["timestamp"])}))
    code, doc, _ = _cli(str(job))
    assert code == 1 and doc["complete"] is True
    assert _verdict(doc) == _verdict(as_written) == ("failure", 2, "python-unhandled-exception", "list index out of range")


# -- item 2 and 7: Flight Recorder pickles of a wrong shape or a hostile size ----------------------
def _dump_with(**changes) -> bytes:
    import pickle

    doc = pickle.loads((REAL_DUMPS / "nccl_trace_rank_1").read_bytes())  # plain data: dicts, lists, str, int
    for key, value in changes.items():
        if key.startswith("entry_"):
            doc["entries"][0][key[len("entry_"):]] = value
        else:
            doc[key] = value
    return pickle.dumps(doc, protocol=2)


BAD_DUMPS = {
    "entries an int": (_dump_with(entries=7), "'entries' is an int"),
    "entries a string": (_dump_with(entries="all_reduce"), "'entries' is a str"),
    "an entry an int": (_dump_with(entries=[3]), "entry 0 is an int"),
    "seq id a string": (_dump_with(entry_collective_seq_id="1"), "'collective_seq_id' is a str"),
    "state a list": (_dump_with(entry_state=["completed"]), "'state' is a list"),
    "rank a string": (_dump_with(rank="one"), "'rank' is a str"),
    "cut short": (_dump_with()[:700], "corrupt pickle"),
}


@pytest.mark.parametrize("case", sorted(BAD_DUMPS))
def test_dump_of_a_wrong_shape_is_listed_as_not_read(tmp_path, case):
    payload, reason = BAD_DUMPS[case]
    job = _healthy_job(tmp_path)
    dump = job / "attempt_0" / "1" / "nccl_trace_rank_1"
    dump.write_bytes(payload)
    code, doc, _ = _cli(str(job))
    _assert_unread(code, doc, dump, reason)


def test_dump_of_a_wrong_shape_given_alone_is_not_read_exit_5(tmp_path):
    dump = tmp_path / "attempt_0" / "1" / "nccl_trace_rank_1"
    dump.parent.mkdir(parents=True)
    dump.write_bytes(BAD_DUMPS["entries an int"][0])
    code, doc, _ = _cli(str(dump))
    _assert_unread(code, doc, dump, "'entries' is an int")


HOSTILE_DUMPS = {
    # PROTO 2, NONE, LONG_BINPUT 2**31-1, STOP: 9 bytes whose memo slot the C unpickler allocates
    "9-byte memo index": (b"\x80\x02Nr\xff\xff\xff\x7f.", "memo index"),
    # PROTO 2, NONE, 64 Mi DUP, STOP: every DUP pushes one more reference
    "64 MB of DUP": (b"\x80\x02N" + b"2" * (64 * 2**20) + b".", "more than"),
    # PROTO 2, EMPTY_LIST, then 16 Mi (MARK, EMPTY_DICT, APPENDS): a list of 16 Mi empty dicts
    "16 Mi dicts": (b"\x80\x02]" + b"(}e" * (16 * 2**20) + b".", "more than"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_DUMPS))
def test_dump_shaped_to_exhaust_memory_is_refused_while_it_loads(tmp_path, case):
    payload, reason = HOSTILE_DUMPS[case]
    job = _healthy_job(tmp_path)
    dump = job / "attempt_0" / "1" / "nccl_trace_rank_1"
    dump.write_bytes(payload)
    code, out, err, peak_mib = _run_measured(str(job))
    assert b"Traceback" not in err, err.decode()
    _assert_unread(code, json.loads(out), dump, reason)
    assert peak_mib < 400, f"{peak_mib} MiB resident for a {len(payload):,}-byte dump"


def test_real_dumps_still_decide_and_load_within_the_memory_bound(tmp_path):
    code, out, err, peak_mib = _run_measured(str(REAL_DUMPS))
    doc = json.loads(out)
    assert code == 1 and doc["initiating_rank"] == 1 and doc["complete"] is True, err.decode()
    assert peak_mib < 400


# -- item 5: what a log folder holds that is not plain UTF-8 with LF line ends --------------------
def test_log_behind_a_run_of_nul_bytes_is_read(tmp_path):
    # logrotate copytruncate: the writer goes on at its old offset, the start of the file is NULs
    clean = _clean_verdict(tmp_path)
    code, doc, _ = _cli(str(_job_with(tmp_path, "stderr.log", b"\x00" * 70_000 + RANK2_LOG.read_bytes())))
    assert code == 1 and _verdict(doc) == clean and doc["complete"] is True


def test_log_behind_a_sparse_hole_is_read(tmp_path):
    clean = _clean_verdict(tmp_path)
    job = _healthy_job(tmp_path)
    with open(job / "attempt_0" / "2" / "stderr.log", "wb") as fh:
        fh.seek(2**30)  # 1 GiB hole: what copytruncate leaves when the writer's offset was 1 GiB
        fh.write(RANK2_LOG.read_bytes())
    code, doc, _ = _cli(str(job))
    assert code == 1 and _verdict(doc) == clean


NCCL_LOG = ROOT / "corpus" / "gpu" / "nccl_socket_ifname.log"  # recorded on 2xH200: NCCL_SOCKET_IFNAME=doesnotexist
RANK1_LOG = ATTEMPT / "1" / "stderr.log"  # gloo: Connection closed by peer


@pytest.mark.parametrize("log, phrase, hidden", [
    (NCCL_LOG, b"NCCL WARN Bootstrap : no socket interface", b"NCCL WA\x00RN Bootstrap : no socket inter\x00face"),
    (NCCL_LOG, b"no socket interface", b"no socket inter\x00\x00\x00\x00\x00face"),
    (RANK1_LOG, b"Connection closed by peer", b"Connection clo\x00sed by peer"),
], ids=["NCCL WA-NUL-RN", "a run of 5 NULs", "gloo"])
def test_nul_inside_a_trigger_phrase_does_not_hide_it(tmp_path, log, phrase, hidden):
    text = log.read_bytes()
    assert phrase in text
    (tmp_path / "x.log").write_bytes(text.replace(phrase, hidden))
    _, clean, _ = _cli(str(log))
    code, doc, _ = _cli(str(tmp_path / "x.log"))
    signatures = lambda d: [f["signature"] for f in d["findings"]]
    assert code == 1 and _verdict(doc) == _verdict(clean) and signatures(doc) == signatures(clean)


COMPRESSORS = {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}


@pytest.mark.parametrize("suffix", sorted(COMPRESSORS))
def test_compressed_rank_log_is_read(tmp_path, suffix):
    clean = _clean_verdict(tmp_path)
    job = _job_with(tmp_path, f"stderr.log.{suffix}", COMPRESSORS[suffix](RANK2_LOG.read_bytes()))
    code, doc, _ = _cli(str(job))
    assert code == 1 and _verdict(doc) == clean and doc["complete"] is True
    assert str(job / "attempt_0" / "2" / f"stderr.log.{suffix}") in doc["inputs"]["sources"]


def test_compressed_log_on_stdin_and_as_one_file_is_read(tmp_path):
    packed = gzip.compress(RANK2_LOG.read_bytes())
    (tmp_path / "stderr.log.gz").write_bytes(packed)
    _, plain, _ = _cli(str(RANK2_LOG))
    for code, doc, _ in (_cli("-", input=packed), _cli(str(tmp_path / "stderr.log.gz"))):
        assert code == 1 and _verdict(doc) == _verdict(plain)


def test_compressed_log_cut_short_is_read_as_far_as_it_goes_and_incomplete(tmp_path):
    packed = gzip.compress(HEALTHY_LINES * 8 + RANK2_LOG.read_bytes())
    job = _job_with(tmp_path, "stderr.log.gz", packed[: len(packed) // 2])
    code, doc, _ = _cli(str(job))
    _assert_unread(code, doc, job / "attempt_0" / "2" / "stderr.log.gz", "ends part-way")
    assert doc["inputs"]["lines"] > 5_000


def test_zstd_log_that_cannot_be_decompressed_makes_the_result_incomplete(tmp_path):
    if sys.version_info >= (3, 14):
        pytest.skip("this Python reads zstd (3.14's compression.zstd)")
    job = _job_with(tmp_path, "stderr.log.zst", b"\x28\xb5\x2f\xfd" + os.urandom(200))
    code, doc, _ = _cli(str(job))
    _assert_unread(code, doc, job / "attempt_0" / "2" / "stderr.log.zst", "zstd")


def test_decompression_bomb_is_bounded(tmp_path):
    # 2 MB of gzip members of 16 MiB of NULs each: 2 GiB once decompressed
    member = gzip.compress(b"\x00" * (16 * 2**20), compresslevel=9)
    job = _job_with(tmp_path, "stderr.log.gz", member * 128)
    code, out, err, peak_mib = _run_measured(str(job))
    _assert_unread(code, json.loads(out), job / "attempt_0" / "2" / "stderr.log.gz", "times its compressed size")
    assert peak_mib < 400


@pytest.mark.parametrize("encoding", ["utf-32", "utf-32-le", "utf-32-be"])  # "utf-32" writes a BOM
def test_utf32_log_is_read(tmp_path, encoding):
    clean = _clean_verdict(tmp_path)
    code, doc, _ = _cli(str(_job_with(tmp_path, "stderr.log", RANK2_LOG.read_text().encode(encoding))))
    assert code == 1 and _verdict(doc) == clean


# 80 KB of UTF-8: more than the head a reader looks at to tell the encoding
HEALTHY_LINES = b"".join(f"rank 2: step {i} loss 0.4258\n".encode() for i in range(3_000))


@pytest.mark.parametrize("tail", ["utf-16", "utf-16-le", "utf-16-be", "utf-32-le"])
def test_utf8_log_with_a_tail_of_another_encoding_is_read(tmp_path, tail):
    # what appending to a UTF-8 log from a Windows shell (PowerShell 5's >>) leaves
    clean = _clean_verdict(tmp_path)
    data = HEALTHY_LINES + RANK2_LOG.read_text().encode(tail)
    code, doc, _ = _cli(str(_job_with(tmp_path, "stderr.log", data)))
    assert code == 1 and _verdict(doc) == clean


def test_utf16_region_after_nul_padding_and_back_to_utf8_is_read(tmp_path):
    clean = _clean_verdict(tmp_path)
    data = HEALTHY_LINES + b"\x00" * 4097 + RANK2_LOG.read_text().encode("utf-16-be") + b"rank 2: step 3 loss 0.2011\n"
    code, doc, _ = _cli(str(_job_with(tmp_path, "stderr.log", data)))
    assert code == 1 and _verdict(doc) == clean


@pytest.mark.parametrize("size", ["short", "over 64 KB", "over a 4 MB block"])
def test_log_with_cr_only_line_ends_is_read(tmp_path, size):
    clean = _clean_verdict(tmp_path)
    text = RANK2_LOG.read_bytes()
    if size != "short":
        text = HEALTHY_LINES * (1 if size == "over 64 KB" else 64) + text
    code, doc, _ = _cli(str(_job_with(tmp_path, "stderr.log", text.replace(b"\n", b"\r"))))
    assert code == 1 and _verdict(doc) == clean


def test_progress_bars_keep_their_line_numbers(tmp_path):
    # CR rewrites within LF lines are one line each, as grep -n and less count them
    bar = b"".join(b"\r%3d%%|" % i + b"#" * (i // 5) for i in range(101)) + b"\n"
    text = bar * 3 + RANK2_LOG.read_bytes()
    _, doc, _ = _cli(str(_job_with(tmp_path, "stderr.log", text)))
    _, plain, _ = _cli(str(RANK2_LOG))
    lines = lambda d: [tuple(f["lines"]) for f in d["findings"] if f["signature"] == "python-unhandled-exception"]
    assert lines(doc) == [(a + 3, b + 3) for a, b in lines(plain)]


# -- item 8: a log still being written ------------------------------------------------------------
WRITER = """
import sys, time
line = b"rank 2: NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC step loss 0.4258\\n"
chunk = line * (2**20 // len(line))
with open(sys.argv[1], "ab", buffering=0) as fh:
    print("writing", flush=True)
    while True:  # 20 MB/s: 1 MiB every 50 ms, for as long as it lives
        fh.write(chunk)
        time.sleep(0.05)
"""


def test_log_growing_at_20_mb_per_second_is_read_to_its_size_at_open(tmp_path):
    log = tmp_path / "stderr.log"
    log.write_bytes(RANK2_LOG.read_bytes() + b"rank 2: NCCL INFO step loss 0.4258\n" * 300_000)  # ~10 MB
    writer = procs.popen([sys.executable, "-c", WRITER, str(log)], stdout=subprocess.PIPE)
    try:
        assert writer.stdout.readline() == b"writing\n"
        time.sleep(0.5)
        code, out, err, _ = _run_measured(str(log), timeout=120)
        grown_to = log.stat().st_size
    finally:
        procs.kill_group(writer.pid)
        writer.wait()
    doc = json.loads(out)
    assert code == 1 and doc["status"] == "failure", err.decode()
    assert doc["inputs"]["bytes"] < grown_to
    assert any("still growing" in w for w in doc["warnings"]), doc["warnings"]


def test_the_reader_ends_on_any_bytes_whatever_the_block_and_read_sizes():
    # a decision that waited for bytes past the buffer once spun forever when a read returned less
    # than the look-ahead window (a pipe's short reads, a small block): every read must end
    import io
    import random

    from mltriage.engine.reader import LogStream, iter_blocks

    class ShortReads(io.RawIOBase):
        def __init__(self, data: bytes, most: int) -> None:
            self._data, self._most = io.BytesIO(data), most

        def read(self, size: int = -1) -> bytes:
            return self._data.read(min(size if size > 0 else self._most, self._most))

    rng = random.Random(22)
    pieces = [b"\x00", b"\xff", b"\xfe", b"a", b"\n", b"\r", b"\x00" * 4, b"\xff\xfe", b"\xfe\xff", b"line\n", b"\r\n"]
    for _ in range(100):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 400)))
        for most, block in ((1, 16), (5, 16), (64, 1024), (4096, 4 * 2**20)):
            out = b"".join(iter_blocks(LogStream(ShortReads(data, most)), block_size=block))
            assert b"\x00" not in out and len(out) <= 2 * len(data)
