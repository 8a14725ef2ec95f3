"""Flight Recorder dumps are pickles: only plain data may load, anything else is refused."""

import os
import pickle

import pytest

from cli_runner import run_cli
from mltriage.engine.flight_recorder import FlightRecorderError, load_dump


class _Exploit:
    def __reduce__(self):
        return (os.system, ("touch /tmp/mltriage-pwned",))


def test_pickle_that_would_run_code_is_refused(tmp_path):
    payload = pickle.dumps({"entries": [_Exploit()]})
    with pytest.raises(FlightRecorderError, match="refusing to load"):
        load_dump(payload)
    assert not os.path.exists("/tmp/mltriage-pwned")


def test_cli_refuses_a_hostile_dump_with_a_clear_error(tmp_path):
    dump = tmp_path / "nccl_trace_rank_0"
    dump.write_bytes(pickle.dumps({"entries": [_Exploit()]}))
    r = run_cli("diagnose", str(dump))
    assert r.returncode == 2
    assert b"refusing to load posix.system" in r.stderr or b"refusing to load os.system" in r.stderr
    assert b"Traceback" not in r.stderr
    assert not os.path.exists("/tmp/mltriage-pwned")


def test_not_a_dump():
    with pytest.raises(FlightRecorderError, match="not a pickle"):
        load_dump(b"hello")
    with pytest.raises(FlightRecorderError, match="no 'entries'"):
        load_dump(pickle.dumps([1, 2, 3]))


def test_real_dumps_alone_name_the_rank_that_never_issued_the_collective():
    # recorded on 2xH200: rank 1 slept before an all_reduce until rank 0's watchdog fired
    from pathlib import Path

    from mltriage.engine import diagnose_path

    dumps = Path(__file__).resolve().parent.parent / "zoo" / "gpu" / "nccl_stuck_fr" / "fr"
    d = diagnose_path(dumps)
    assert d.initiating_rank == 1
    assert d.status == "failure"
    assert "never issued collective SeqNum 2" in d.explanation
    assert {t.rank for t in d.flight_recorder} == {0, 1}


def test_cli_on_a_directory_of_dumps():
    from pathlib import Path

    dumps = Path(__file__).resolve().parent.parent / "zoo" / "gpu" / "nccl_stuck_fr" / "fr"
    r = run_cli("diagnose", str(dumps))
    assert r.returncode == 1
    out = r.stdout.decode()
    assert "initiated by rank 1" in out and "Flight Recorder (per rank):" in out
