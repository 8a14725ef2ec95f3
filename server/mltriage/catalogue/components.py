"""The component behind a message: where a message is raised says which layer failed.

A message no curated entry names still has a site (the catalogue's, or the ``file:line`` an NCCL WARN
prints). The source file is the layer: NCCL's peer-to-peer transport, its shared-memory transport,
its sockets, InfiniBand verbs, NVLink SHARP; vLLM's custom all-reduce; PyTorch's rendezvous store.
Each layer has a switch that takes it out of the path, which is how a user confirms it in one run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum


class Component(StrEnum):
    NCCL_P2P = "nccl-p2p-transport"
    NCCL_SHM = "nccl-shm-transport"
    NCCL_SOCKETS = "nccl-sockets"
    NCCL_IB = "nccl-ib-verbs"
    NCCL_NVLS = "nccl-nvls"
    NCCL_TOPOLOGY = "nccl-topology"
    VLLM_CUSTOM_ALLREDUCE = "vllm-custom-allreduce"
    TORCH_STORE = "torch-rendezvous-store"


@dataclass(frozen=True)
class Layer:
    component: Component
    short: str  # its name, for a title ("in NCCL's P2P transport")
    what: str  # the layer in words, for "raised in ..."
    confirm: str  # the one-run experiment that takes the layer out of the path
    env: tuple[tuple[str, str], ...] = ()  # the switch as exports (empty where its value is the host's own)


# (project, path pattern) -> layer. Paths are as the catalogue records them and as NCCL's WARN prefix prints them
# (src/ may be absent); every NCCL release since 2.4 keeps these files (net_ib became a directory in 2.19).
_LAYERS: tuple[tuple[str, re.Pattern[str], Layer], ...] = (  # (projects, separated by spaces)
    ("nccl", re.compile(r"(?:^|/)transport/p2p\.cc$"), Layer(
        Component.NCCL_P2P, "NCCL's P2P transport", "NCCL's peer-to-peer transport (direct GPU-to-GPU copies over NVLink or PCIe, CUDA IPC between processes)",
        "rerun with NCCL_P2P_DISABLE=1: if the failure is gone, peer-to-peer between these GPUs is what fails "
        "(PCIe ACS, the IOMMU, a VM or container blocking CUDA IPC, consumer GPUs)",
        (("NCCL_P2P_DISABLE", "1"),))),
    ("nccl", re.compile(r"(?:^|/)(?:transport/shm\.cc|misc/shmutils\.cc)$"), Layer(
        Component.NCCL_SHM, "NCCL's shared-memory transport", "NCCL's shared-memory transport (/dev/shm segments, or cuMem host memory, between processes of one node)",
        "rerun with NCCL_SHM_DISABLE=1: if the failure is gone, shared memory between the ranks is what fails "
        "(a small /dev/shm in a container: --shm-size or --ipc=host)",
        (("NCCL_SHM_DISABLE", "1"),))),
    ("nccl", re.compile(r"(?:^|/)(?:transport/net_socket\.cc|misc/socket\.cc|include/socket\.h|bootstrap\.cc|socket\.cc)$"), Layer(
        Component.NCCL_SOCKETS, "NCCL's sockets", "NCCL's TCP sockets (bootstrap and the socket transport between nodes)",
        "rerun with NCCL_DEBUG=INFO and check the interface and address in `Bootstrap : Using` / `NET/Socket : Using`: "
        "set NCCL_SOCKET_IFNAME to the interface the nodes reach each other on, and check that no firewall blocks TCP between them")),
    ("nccl", re.compile(r"(?:^|/)(?:transport/net_ib(?:\.cc|/[\w.]+)|misc/ibvwrap\.cc|misc/ibvsymbols\.cc)$"), Layer(
        Component.NCCL_IB, "NCCL's InfiniBand transport", "NCCL's InfiniBand/RoCE transport (ibverbs)",
        "rerun with NCCL_IB_DISABLE=1 (sockets instead of IB): if the failure is gone, the IB/RoCE set-up is what fails "
        "(NCCL_IB_HCA, NCCL_IB_GID_INDEX for RoCE, memlock limits)",
        (("NCCL_IB_DISABLE", "1"),))),
    ("nccl", re.compile(r"(?:^|/)transport/nvls\.cc$"), Layer(
        Component.NCCL_NVLS, "NCCL's NVLink SHARP transport", "NCCL's NVLink SHARP transport (NVSwitch multicast)",
        "rerun with NCCL_NVLS_ENABLE=0: if the failure is gone, NVSwitch multicast (fabric manager, driver) is what fails",
        (("NCCL_NVLS_ENABLE", "0"),))),
    ("nccl", re.compile(r"(?:^|/)graph/[\w.]+\.cc$"), Layer(
        Component.NCCL_TOPOLOGY, "NCCL's topology detection", "NCCL's topology detection (what it reads of the PCIe/NVLink tree from sysfs and NVML)",
        "rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH and NCCL_TOPO_DUMP_FILE=topo.xml: a VM or container that hides "
        "/sys PCI paths often shows up here")),
    ("vllm", re.compile(r"(?:^|/)device_communicators/(?:custom_all_reduce[\w]*|cuda_wrapper)\.py$"), Layer(
        Component.VLLM_CUSTOM_ALLREDUCE, "vLLM's custom all-reduce", "vLLM's custom all-reduce (CUDA IPC buffers written by peer GPUs)",
        "relaunch with --disable-custom-all-reduce: if the failure is gone, peer-to-peer/CUDA IPC between the GPUs is what fails")),
    ("pytorch libtorch", re.compile(r"(?:^|/)(?:TCPStore\w*\.cpp|socket\.cpp|rendezvous\.py|elastic/rendezvous/[\w.]+\.py)$"), Layer(
        Component.TORCH_STORE, "PyTorch's rendezvous store", "PyTorch's rendezvous (the TCPStore every rank connects to at MASTER_ADDR:MASTER_PORT)",
        "check from every node that MASTER_ADDR resolves and MASTER_PORT is reachable (`nc -zv $MASTER_ADDR $MASTER_PORT`), "
        "and that every rank was started with the same address, port and world size")),
)


def layer_of(project: str, path: str) -> Layer | None:
    """The layer a source file of ``project`` belongs to, or None where its file says nothing about one."""
    for owner, pattern, layer in _LAYERS:
        if project in owner.split() and pattern.search(path):
            return layer
    return None


__all__ = ["Component", "Layer", "layer_of"]
