"""Fixtures for the probe tests: fakes only at the NVML and CUDA boundaries.

The worker still runs as a real subprocess (``python -m mltriage.probe.worker``); the fake CUDA
backend is chosen inside it by ``MLTRIAGE_PROBE_FAKE``. Cache files go to a tmp dir.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

SERVER = os.path.join(os.path.dirname(__file__), "..", "..", "server")
if SERVER not in sys.path:
    sys.path.insert(0, os.path.abspath(SERVER))

from mltriage.probe.fake_nvml import FakeNvml  # noqa: E402

SMALL = [4, 4099, 65536 + 3]  # small but odd sizes: keeps the suite fast

# What the real 2xH200 host reported (shared/gpu/h200x2-recon.json), as an NVML spec.
H200X2_NVML = {
    "driver": "580.159.04",
    "gpus": [
        {"name": "NVIDIA H200", "uuid": "GPU-53c876d4-729b-3ef5-9154-60765ad3214d", "bus": "00000000:00:06.0"},
        {"name": "NVIDIA H200", "uuid": "GPU-eada4807-2ab2-1f43-b19b-ef0b073c9efe", "bus": "00000000:00:07.0"},
    ],
    "p2p": {"0,1,read": "TypeError", "1,0,read": "TypeError"},
    "nvlinks": {"0,1": 18},
    "nvlink_remote_unknown": True,
    "ancestor": {"0,1": 30},
}


def nvml_for(n: int, **extra) -> dict:
    """An NVML spec of ``n`` GPUs whose bus ids match the fake CUDA backend's."""
    spec = {"driver": "580.159.04",
            "gpus": [{"uuid": f"GPU-fake-{i}", "bus": f"00000000:{i + 6:02x}:00.0"} for i in range(n)]}
    spec.update(extra)
    return spec


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("MLTRIAGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MLTRIAGE_PROBE_FAKE", raising=False)
    monkeypatch.delenv("MLTRIAGE_PROBE_FAKE_NVML", raising=False)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    return tmp_path


@pytest.fixture
def fake_gpus(monkeypatch):
    """Set the fake CUDA runtime the worker subprocess will see."""
    def set_spec(**spec):
        monkeypatch.setenv("MLTRIAGE_PROBE_FAKE", json.dumps(spec))
    set_spec()
    return set_spec


@pytest.fixture
def empty_root(tmp_path):
    """A platform root with nothing in it: every platform fact must come back "unknown"."""
    root = tmp_path / "root"
    root.mkdir()
    return str(root)


def fake_nvml(spec: dict) -> FakeNvml:
    return FakeNvml(spec)
