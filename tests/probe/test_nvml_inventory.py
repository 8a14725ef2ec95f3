"""NVML inventory through the fake binding, including the real host's binding quirk."""

from __future__ import annotations

from conftest import H200X2_NVML, fake_nvml

from mltriage.probe import nvml_inventory
from mltriage.probe.nvml_inventory import collect, normalize_bus_id


def test_real_h200x2_answers():
    inv = collect(fake_nvml(H200X2_NVML))
    assert inv["available"] and inv["driver_version"] == "580.159.04" and inv["cuda_driver_version"] == "13.0"
    assert [g["pci_bus_id"] for g in inv["gpus"]] == ["0000:00:06.0", "0000:00:07.0"]
    p01 = inv["pairs"][0]
    # READ raised TypeError in nvidia-ml-py: unknown, and the other capabilities still read.
    assert p01["caps"] == {"read": "unknown", "write": "OK", "nvlink": "OK", "atomics": "OK"}
    assert p01["pcie_topology"] == "PHB" and p01["link"] == "NV18" and p01["nvlinks"] == 18
    assert any("Don't know how to convert parameter 3" in e for e in inv["errors"])


def test_missing_library():
    inv = collect(fake_nvml({"missing": True}))
    assert inv["available"] is False and "Not Found" in inv["error"] and inv["gpus"] == []


def test_every_query_failing_is_unknown_not_a_crash():
    class Broken:
        def nvmlInit(self):
            pass

        def nvmlShutdown(self):
            raise RuntimeError("shutdown")

        def nvmlDeviceGetCount(self):
            return 2

        def nvmlDeviceGetHandleByIndex(self, i):
            return i

        def __getattr__(self, name):
            def fail(*a):
                raise TypeError(f"{name} exploded")
            return fail

    inv = collect(Broken())
    assert inv["available"] and inv["driver_version"] == "unknown"
    assert inv["gpus"][0]["uuid"] == "unknown" and inv["gpus"][0]["nvlinks"] == []
    assert inv["pairs"][0]["caps"]["write"] == "unknown" and inv["pairs"][0]["link"] == "unknown"


def test_status_words_and_topology_levels():
    spec = {"gpus": [{}, {}, {}], "p2p": {"0,2,write": 1, "0,2,read": 4, "0,2,atomics": 5},
            "ancestor": {"0,1": 10, "0,2": 50, "1,2": 40}}
    inv = collect(fake_nvml(spec))
    by = {(p["a"], p["b"]): p for p in inv["pairs"]}
    assert by[0, 2]["caps"] == {"read": "DISABLED_BY_REGKEY", "write": "CHIPSET_NOT_SUPPORTED",
                                "nvlink": "NOT_SUPPORTED", "atomics": "NOT_SUPPORTED"}
    assert (by[0, 1]["link"], by[0, 2]["link"], by[1, 2]["link"]) == ("PIX", "SYS", "NODE")


def test_nvswitch_style_links_count_for_every_nvlink_peer():
    # Links ending at a switch (not at a GPU bus id): every NVLink-capable pair is NV<links>.
    spec = {"gpus": [{}, {}, {}], "nvlinks": {"0,1": 4, "0,2": 4, "1,2": 4}, "nvlink_remote_unknown": True}
    inv = collect(fake_nvml(spec))
    assert {p["link"] for p in inv["pairs"]} == {"NV8"}


def test_bus_id_normalisation():
    assert normalize_bus_id("00000000:00:06.0") == "0000:00:06.0"
    assert normalize_bus_id("0000:3B:00.0") == "0000:3b:00.0"
    assert normalize_bus_id("3b:00.0") == "0000:3b:00.0"


def test_env_fake_is_used(monkeypatch):
    monkeypatch.setenv("MLTRIAGE_PROBE_FAKE_NVML", '{"gpus": [{}]}')
    assert len(nvml_inventory.collect()["gpus"]) == 1
