"""The whole probe through the fakes: real worker subprocess, real timeout, real parsing."""

from __future__ import annotations

import time

from conftest import H200X2_NVML, SMALL, fake_nvml, nvml_for

from mltriage.probe import run_probe
from mltriage.probe.model import SCHEMA


def probe(nvml_spec, root, **kw):
    kw.setdefault("sizes", SMALL)
    kw.setdefault("timeout_s", 20)
    return run_probe(refresh=True, nvml=fake_nvml(nvml_spec), platform_root=root, **kw)


def test_healthy_pair_is_ok_with_bandwidth_and_nvlink(fake_gpus, empty_root):
    r = probe(nvml_for(2, nvlinks={"0,1": 18}), empty_root)
    assert r.machine_verdict == "OK" and r.exit_code == 0
    p = r.pair(0, 1)
    assert p.verdict == "OK" and p.link == "NV18" and p.can_access_peer
    # 2 patterns x 3 sizes x 2 placements x 2 paths, every one compared byte by byte
    assert p.checks == 24 and p.mismatch is None
    assert p.p2p_gbps == 390.0 and p.host_gbps == 25.0 and p.bidir_p2p_gbps == 780.0
    assert r.pair_summaries()[0] == "GPU0->GPU1: OK, P2P 390.0 GB/s, host path 25.0 GB/s [NV18]"
    assert r.to_json()["schema"] == SCHEMA
    assert r.timing["worker_probe_s"] is not None and r.advice["exports"] == []


def test_injected_corruption_reports_first_offset(fake_gpus, empty_root):
    fake_gpus(corrupt=[{"src": 0, "dst": 1, "path": "p2p", "offset": 4096}])
    r = probe(nvml_for(2), empty_root)
    assert r.machine_verdict == "CORRUPT" and r.exit_code == 1
    p = r.pair(0, 1)
    assert p.verdict == "CORRUPT"
    assert p.mismatch["offset"] == 4096 and p.mismatch["size"] == 4099 and p.mismatch["path"] == "p2p"
    assert p.mismatch["expected"] != p.mismatch["got"]
    assert r.pair_summaries()[0].startswith("GPU0->GPU1: CORRUPT at offset 4096")
    assert r.pair(1, 0).verdict == "OK"  # the other direction is clean
    assert "export NCCL_P2P_DISABLE=1" in r.advice["exports"]
    assert any("--disable-custom-all-reduce" in f for f in r.advice["flags"])
    assert any("all_reduce_perf" in v for v in r.advice["verify"])


def test_write_past_the_end_is_corruption(fake_gpus, empty_root):
    fake_gpus(overrun=[{"src": 1, "dst": 0, "path": "p2p"}])
    p = probe(nvml_for(2), empty_root).pair(1, 0)
    assert p.verdict == "CORRUPT" and p.mismatch["kind"] == "wrote past the end"
    assert p.mismatch["offset"] == p.mismatch["size"] == 4


def test_host_path_corruption_is_flagged_as_not_only_p2p(fake_gpus, empty_root):
    fake_gpus(corrupt=[{"src": 0, "dst": 1, "path": "host", "offset": 0}])
    r = probe(nvml_for(2), empty_root)
    assert r.pair(0, 1).verdict == "CORRUPT" and r.pair(0, 1).mismatch["path"] == "host"
    assert any("not only a P2P problem" in n for n in r.advice["notes"])


def test_hang_is_killed_at_the_timeout_and_names_the_pair(fake_gpus, empty_root):
    fake_gpus(hang={"stage": "correctness", "src": 1, "dst": 0})
    t0 = time.monotonic()
    r = probe(nvml_for(2), empty_root, timeout_s=2.5)
    assert time.monotonic() - t0 < 10
    assert r.machine_verdict == "HANG" and r.exit_code == 1
    assert r.pair(1, 0).verdict == "HANG" and "during correctness" in r.pair(1, 0).reason
    assert r.pair(0, 1).verdict == "OK"  # finished before the hang: keeps its verdict
    assert r.worker["status"] == "hang" and r.worker["in_flight"]["src"] == 1


def test_crash_with_abort_keeps_stderr(fake_gpus, empty_root):
    fake_gpus(crash={"stage": "bandwidth", "src": 0, "dst": 1, "stderr": "NVRM: Xid 79, GPU has fallen off the bus\n"})
    r = probe(nvml_for(2), empty_root)
    assert r.machine_verdict == "CRASH" and r.exit_code == 1
    assert r.pair(0, 1).verdict == "CRASH"
    assert "SIGABRT: NVRM: Xid 79, GPU has fallen off the bus" in r.pair(0, 1).reason
    assert r.worker["signal"] == "SIGABRT" and "fallen off the bus" in r.worker["stderr_tail"]


def test_segfault_in_runtime_start(fake_gpus, empty_root):
    fake_gpus(crash={"stage": "init", "signal": "segv", "stderr": "libcuda: boom\n"})
    r = probe(nvml_for(2), empty_root)
    assert r.machine_verdict == "CRASH" and r.pairs == []
    assert r.worker["signal"] == "SIGSEGV" and "boom" in r.worker["stderr_tail"]


def test_missing_nvml_still_probes_but_caches_nothing(fake_gpus, empty_root):
    r = probe({"missing": True}, empty_root)
    assert r.inventory["available"] is False and "Not Found" in r.inventory["error"]
    assert r.machine_verdict == "OK" and r.pair(0, 1).link == "unknown"
    assert r.cache["key"] is None and r.cache["path"] is None


def test_failing_capability_query_is_unknown_not_a_crash(fake_gpus, empty_root):
    r = probe({**H200X2_NVML, "gpus": nvml_for(2)["gpus"]}, empty_root)
    p = r.pair(0, 1)
    assert p.nvml_caps == {"read": "unknown", "write": "OK", "nvlink": "OK", "atomics": "OK"}
    assert p.link == "NV18"  # remote bus ids unknown in the VM: the single NVLink peer gets them
    assert any("TypeError" in e for e in r.inventory["errors"])
    assert r.machine_verdict == "OK"


def test_single_gpu_has_nothing_to_test(fake_gpus, empty_root):
    fake_gpus(devices=1)
    r = probe(nvml_for(1), empty_root)
    assert r.machine_verdict == "SINGLE_GPU" and r.exit_code == 0 and r.pairs == []


def test_no_runtime_is_exit_3(fake_gpus, empty_root):
    fake_gpus(no_runtime=True)
    r = probe(nvml_for(2), empty_root)
    assert r.machine_verdict == "NO_GPU" and r.exit_code == 3 and "no GPU runtime" in r.message


def test_nvml_sees_no_gpu_is_exit_3_without_a_worker(fake_gpus, empty_root):
    fake_gpus(crash={"stage": "init"})  # would crash if a worker were started
    r = probe(nvml_for(0), empty_root)
    assert r.exit_code == 3 and "no NVIDIA GPU" in r.message and r.worker == {}


def test_not_supported_pairs_still_check_the_host_path(fake_gpus, empty_root):
    fake_gpus(peer={"0->1": False, "1->0": False})
    r = probe(nvml_for(2), empty_root)
    p = r.pair(0, 1)
    assert p.verdict == "NOT_SUPPORTED" and r.exit_code == 1
    assert p.checks == 12 and p.p2p_gbps is None and p.host_gbps == 25.0


def test_p2p_slower_than_host_is_slow(fake_gpus, empty_root):
    fake_gpus(gbps={"p2p": 10, "host": 25})
    r = probe(nvml_for(2), empty_root)
    assert r.machine_verdict == "SLOW" and "no faster than staging" in r.pair(0, 1).reason


def test_bad_sys_paths_get_a_p2p_level_not_a_blanket_disable(fake_gpus, empty_root):
    # 4 GPUs: 0-1 and 2-3 NVLinked, the rest across sockets (SYS) and corrupt.
    fake_gpus(devices=4, corrupt=[{"src": s, "dst": d, "path": "p2p", "offset": 3}
                                  for s in range(4) for d in range(4) if s // 2 != d // 2 and s != d])
    r = probe(nvml_for(4, nvlinks={"0,1": 4, "2,3": 4}), empty_root, bandwidth=False)
    assert {p.verdict for p in r.pairs if p.link.startswith("NV")} == {"OK"}
    assert {p.verdict for p in r.pairs if p.link == "SYS"} == {"CORRUPT"}
    assert r.advice["exports"] == ["export NCCL_P2P_LEVEL=NVL"]


def test_devices_subset_and_bad_device(fake_gpus, empty_root):
    fake_gpus(devices=3)
    r = probe(nvml_for(3), empty_root, devices=[0, 2], bandwidth=False)
    assert sorted((p.src, p.dst) for p in r.pairs) == [(0, 2), (2, 0)]
    bad = probe(nvml_for(3), empty_root, devices=[0, 5])
    assert bad.exit_code == 2 and "not visible" in bad.message


def test_hang_before_any_pair_is_still_a_machine_hang(fake_gpus, empty_root):
    fake_gpus(hang={"stage": "prepare"})
    r = probe(nvml_for(2), empty_root, timeout_s=2.5)
    assert r.machine_verdict == "HANG" and r.exit_code == 1
    assert {p.verdict for p in r.pairs} == {"UNTESTED"}
    assert r.worker["in_flight"] == {"stage": "prepare", "src": None, "dst": None}


def test_hang_in_bidirectional_stage_marks_both_directions(fake_gpus, empty_root):
    fake_gpus(hang={"stage": "bidirectional", "src": 0, "dst": 1})
    r = probe(nvml_for(2), empty_root, timeout_s=2.5)
    assert r.pair(0, 1).verdict == r.pair(1, 0).verdict == "HANG"
    assert r.pair(0, 1).p2p_gbps == 390.0  # the one-way numbers measured before the hang stay
