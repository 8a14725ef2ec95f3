"""Rendering and the JSON round trip of a report built by the real pipeline."""

from __future__ import annotations

from conftest import SMALL, fake_nvml, nvml_for

from mltriage.probe import ProbeReport, render, run_probe


def test_matrix_and_json_round_trip(fake_gpus, empty_root):
    fake_gpus(devices=3, corrupt=[{"src": 2, "dst": 0, "offset": 0}])
    r = run_probe(refresh=True, nvml=fake_nvml(nvml_for(3)), platform_root=empty_root, sizes=SMALL)
    text = render.text(r)
    rows = render.matrix(r).splitlines()
    assert rows[0].split() == ["src\\dst", "GPU0", "GPU1", "GPU2"]
    assert rows[3].split() == ["GPU2", "CORRUPT", "OK", "390", "-"]
    assert "GPU2->GPU0: P2P copy of 4 bytes (random pattern) wrong data at offset 0" in text
    assert "export NCCL_P2P_DISABLE=1" in text
    back = ProbeReport.from_json(r.to_json())
    assert back.to_json() == r.to_json() and back.machine_verdict == "CORRUPT"


def test_from_json_rejects_other_schemas():
    import pytest

    with pytest.raises(ValueError):
        ProbeReport.from_json({"schema": "something/v9"})
