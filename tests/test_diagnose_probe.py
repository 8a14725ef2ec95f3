"""`mltriage diagnose --probe`: the local P2P probe's verdict joins P2P-related findings.

The probe runs for real (worker subprocess, timeout, parsing); only the NVML and CUDA
boundaries are fakes, chosen through the probe's documented environment variables.
"""

import json
import tomllib

from cli_runner import ROOT, run_cli

SIG = ROOT / "signatures" / "nccl" / "nccl-p2p-peer-access-unsupported.toml"
NVML = {"driver": "580.159.04", "gpus": [{"uuid": f"GPU-fake-{i}", "bus": f"00000000:{i + 6:02x}:00.0"} for i in range(2)]}


def _log(tmp_path):
    sample = tomllib.loads(SIG.read_text())["samples"]["positive"][0]["text"]
    log = tmp_path / "nccl.log"
    log.write_text(sample)
    return log


def _diagnose(tmp_path, fake):
    env = {
        "MLTRIAGE_PROBE_FAKE": json.dumps(fake),
        "MLTRIAGE_PROBE_FAKE_NVML": json.dumps(NVML),
        "MLTRIAGE_CACHE_DIR": str(tmp_path / "cache"),
    }
    r = run_cli("diagnose", str(_log(tmp_path)), "--probe", "--json", env=env, timeout=180)
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    return doc, next(f for f in doc["findings"] if f["p2p_related"])


def test_probe_corruption_raises_confidence_and_names_the_offset(tmp_path):
    base = tomllib.loads(SIG.read_text()).get("confidence", 0.8)
    doc, finding = _diagnose(tmp_path, {"corrupt": [{"src": 0, "dst": 1, "path": "p2p", "offset": 4096}]})
    assert doc["probe"]["machine_verdict"] == "CORRUPT"
    assert any("GPU0->GPU1: CORRUPT at offset 4096" in n for n in finding["notes"])
    assert finding["confidence"] > base


def test_probe_ok_lowers_confidence(tmp_path):
    base = tomllib.loads(SIG.read_text()).get("confidence", 0.8)
    doc, finding = _diagnose(tmp_path, {})
    assert doc["probe"]["machine_verdict"] == "OK"
    assert finding["confidence"] < base
    assert any("verdict OK" in n for n in finding["notes"])


def test_pasted_topology_matrix_is_read(tmp_path):
    r = run_cli("diagnose", str(ROOT / "tests" / "probe" / "data" / "h200x2-nvidia-smi-topo-m.txt"), "--json")
    doc = json.loads(r.stdout)
    assert r.returncode == 0
    assert doc["topology"]["facts"] == ["GPU0<->GPU1: NV18 (NVLink, 18 links)"]
