"""The component behind a message: a failure no curated entry names still points at its layer, from
the site it is raised at, with the switch that takes that layer out of the path.

The WARN lines are NCCL's own format: src/debug.cc's prefix "%s:%d:%d [%d] %s:%d NCCL WARN " (file of the
call site, as __FILE__ expands there) with include/checks.h's CUDACHECK message "Cuda failure '%s'" and its
"%s:%d -> %d" INFO chain (NVIDIA/nccl v2.21.5-1); the recordings are real runs (corpus/gpu)."""

from pathlib import Path

import pytest

from mltriage.catalogue.components import Component, layer_of
from mltriage.engine import diagnose_path, diagnose_text

ROOT = Path(__file__).resolve().parent.parent


def warn_chain(site: str, message: str) -> str:
    return (f"node1:2123:2140 [0] {site} NCCL WARN {message}\n"
            f"node1:2123:2140 [0] NCCL INFO {site.split(':')[0]}:{int(site.split(':')[1]) + 6} -> 1\n"
            "node1:2123:2140 [0] NCCL INFO transport.cc:165 -> 1\n"
            "node1:2123:2140 [0] NCCL INFO init.cc:1222 -> 1\n")


@pytest.mark.parametrize("site,env,component", [
    ("transport/p2p.cc:275", {"NCCL_P2P_DISABLE": "1"}, Component.NCCL_P2P),
    ("transport/net_ib.cc:601", {"NCCL_IB_DISABLE": "1"}, Component.NCCL_IB),
])
def test_a_cuda_failure_inside_a_transport_names_that_transport_and_its_switch(site, env, component):
    d = diagnose_text(warn_chain(site, "Cuda failure 'invalid argument'"), "rank0.log")
    top = d.findings[0]
    assert top.facts.get("component") == component.value
    assert all(top.fix.env.get(k) == v for k, v in env.items())
    assert top.fix.steps[0].startswith("To confirm the layer")
    assert layer_of("nccl", site.split(":")[0]).short in top.title


def test_a_curated_entry_that_names_the_failure_keeps_its_own_words():
    d = diagnose_text(warn_chain("transport/nvls.cc:118", "Cuda failure 'invalid argument'"), "rank0.log")
    top = d.findings[0]
    assert top.signature == "nccl-nvls-setup-failed"
    assert not any(step.startswith("To confirm the layer") for step in top.fix.steps)


def test_the_same_failure_outside_any_layer_gets_no_switch():
    d = diagnose_text(warn_chain("init.cc:1411", "Cuda failure 'invalid argument'"), "rank0.log")
    top = d.findings[0]
    assert "component" not in top.facts
    assert not {"NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE", "NCCL_IB_DISABLE"} & set(top.fix.env)


def test_a_recorded_socket_warn_points_at_nccl_sockets_without_guessing_an_interface():
    d = diagnose_path(ROOT / "corpus" / "gpu" / "nccl_warn_chain_comm_id.log")
    socket_findings = [f for f in d.findings if f.facts.get("component") == Component.NCCL_SOCKETS.value]
    assert socket_findings
    assert all("NCCL_SOCKET_IFNAME" not in f.fix.env for f in socket_findings)  # its value is the host's own
    assert any("NCCL_SOCKET_IFNAME" in step for f in socket_findings for step in f.fix.steps)


def test_paths_map_to_layers_in_every_spelling_the_catalogue_and_nccl_use():
    assert layer_of("nccl", "src/transport/p2p.cc").component is Component.NCCL_P2P
    assert layer_of("nccl", "transport/net_ib/connect.cc").component is Component.NCCL_IB  # 2.19+: a directory
    assert layer_of("nccl", "src/misc/shmutils.cc").component is Component.NCCL_SHM
    assert layer_of("vllm", "vllm/distributed/device_communicators/custom_all_reduce.py").component is Component.VLLM_CUSTOM_ALLREDUCE
    assert layer_of("libtorch", "torch/csrc/distributed/c10d/TCPStore.cpp").component is Component.TORCH_STORE
    assert layer_of("nccl", "src/init.cc") is None
    assert layer_of("vllm", "src/transport/p2p.cc") is None  # a layer belongs to its project
