"""Flight Recorder dumps are pickles: only plain data may load, anything else is refused."""

import os
import pickle

import pytest

from cli_runner import run_cli
from mltriage.flight_recorder import FlightRecorderError, load_dump


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
