"""CLI exit codes through real subprocesses: ``python -m mltriage.probe``."""

from __future__ import annotations

import json
import os
import sys

from conftest import SERVER, nvml_for
import procs

SIZES = "4,4099"


def cli(*args, fake=None, nvml=None, timeout=60):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.abspath(SERVER)
    if fake is not None:
        env["MLTRIAGE_PROBE_FAKE"] = json.dumps(fake)
    if nvml is not None:
        env["MLTRIAGE_PROBE_FAKE_NVML"] = json.dumps(nvml)
    return procs.run([sys.executable, "-m", "mltriage.probe", *args], capture_output=True,
                          text=True, env=env, timeout=timeout)


def test_ok_is_exit_0_with_matrix():
    r = cli("--sizes", SIZES, fake={}, nvml=nvml_for(2, nvlinks={"0,1": 18}))
    assert r.returncode == 0, r.stderr
    assert "OK 390" in r.stdout and "GPU0->GPU1" in r.stdout and "NV18" in r.stdout


def test_corrupt_is_exit_1_and_json_follows_the_schema():
    r = cli("--json", "--sizes", SIZES, "--no-bandwidth",
            fake={"corrupt": [{"src": 1, "dst": 0, "offset": 2}]}, nvml=nvml_for(2))
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc["schema"] == "mltriage.probe/v1" and doc["machine_verdict"] == "CORRUPT"
    bad = [p for p in doc["pairs"] if p["verdict"] == "CORRUPT"]
    assert [(p["src"], p["dst"]) for p in bad] == [(1, 0)]
    assert bad[0]["correctness"]["first_mismatch"]["offset"] == 2
    assert doc["exit_code"] == 1 and doc["advice"]["exports"] == ["export NCCL_P2P_DISABLE=1"]


def test_hang_is_exit_1_quickly():
    r = cli("--sizes", SIZES, "--timeout", "2", fake={"hang": {"stage": "bandwidth", "src": 0, "dst": 1}},
            nvml=nvml_for(2), timeout=30)
    assert r.returncode == 1 and "HANG" in r.stdout and "Traceback" not in r.stderr


def test_no_gpu_is_exit_3_one_line_no_traceback():
    r = cli(fake={"no_runtime": True}, nvml={"missing": True})
    assert r.returncode == 3
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mltriage probe: no usable GPU")
    assert "Traceback" not in r.stderr and r.stdout == ""


def test_single_gpu_is_exit_0_and_says_so():
    r = cli(fake={"devices": 1}, nvml=nvml_for(1))
    assert r.returncode == 0 and "only one GPU" in r.stdout


def test_bad_arguments_are_exit_2():
    assert cli("--sizes", "abc", fake={}).returncode == 2
    assert cli("--devices", "0,x", fake={}).returncode == 2
    r = cli("--devices", "0,7", fake={}, nvml=nvml_for(2))
    assert r.returncode == 2 and "not visible" in r.stderr and "Traceback" not in r.stderr


def test_worker_interpreter_that_does_not_exist_is_exit_2():
    r = cli("--python", "/nonexistent/python3", fake={}, nvml=nvml_for(2))
    assert r.returncode == 2 and "cannot start the probe worker" in r.stderr
    assert "Traceback" not in r.stderr
