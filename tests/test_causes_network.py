"""The nccl-network family: the run model's network facts (which interfaces NCCL chose and what they
are, the hosts and nodes a run spans, its transport, containers) and the causes over them (an
interface the other nodes cannot reach, containers on bridge networks, blocked ports, an NCCL
version mismatch, a NCCL_SOCKET_IFNAME naming no interface).

Every line is a real recording (corpus/) or built from the named upstream release's format string
(NVIDIA/nccl tags in the fetched mirror, pytorch/pytorch 2.13.0 in the venv, sgl-project/sglang);
each symptom is tested in the words of at least two sources."""

import json

import pytest

from cli_runner import run_cli
from mltriage.engine import diagnose_path, diagnose_text
from mltriage.engine.prefixes import parse_prefixes
from mltriage.run_model.model import IfaceKind, NetTransport
from mltriage.run_model.network import classify
from mltriage.symptoms import Symptom, WORDINGS

from pathlib import Path
from observing import sources_by_symptom

ROOT = Path(__file__).resolve().parent.parent
NETWORK_CAUSES = {"nccl-interface-unreachable", "nccl-container-network-isolated", "nccl-nodes-port-blocked", "nccl-versions-differ",
                  "nccl-socket-ifname-no-address", "rendezvous-master-addr-loopback", "nccl-roce-gid-index"}

# (symptom, line, its source, facts it must carry)
WORDS = [
    (Symptom.INTERFACE_CHOSEN, "node-a:48213:48213 [0] NCCL INFO Bootstrap : Using [0]eth0:10.0.0.1<0> [1]docker0:172.17.0.1<0>",
     "NVIDIA/nccl v2.4.8-1 src/bootstrap.cc \"Bootstrap : Using%s\" with \" [%d]%s:%s\"", {"role": "Bootstrap"}),
    (Symptom.INTERFACE_CHOSEN, "[default0]:vm:2123:2123 [0] NCCL INFO Bootstrap: Using eth0:192.0.2.2<0>",
     "recorded: corpus/gpu/nccl_p2p_disable.log (NCCL 2.28.9)", {"role": "Bootstrap"}),
    (Symptom.INTERFACE_CHOSEN, "vclab:27377:27554 [1] NCCL INFO NET : Using interface eno2:10.1.2.3<0>",
     "NVIDIA/nccl v2.3.7-1 src/include/socket.h \"NET : Using interface %s:%s\"", {"role": "NET"}),
    (Symptom.INTERFACE_CHOSEN, "node-a:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE ; OOB ens7:10.0.0.1<0>",
     "NVIDIA/nccl v2.18.5-1 src/transport/net_ib.cc \"NET/IB : Using%s ; OOB %s:%s\"", {"role": "IB-OOB", "interfaces": "ens7:10.0.0.1<0>"}),
    (Symptom.INTERFACE_CHOSEN, "[W1201 09:14:02.318220417 ProcessGroupGloo.cpp:524] Warning: Unable to resolve hostname to a (local) address. Using the loopback address as fallback. Manually set the network interface to bind to with GLOO_SOCKET_IFNAME. (function operator())",
     "pytorch/pytorch ProcessGroupGloo.cpp createDefaultDevice TORCH_WARN_ONCE (torch 2.13.0 libtorch_cpu.so)", {"role": "Gloo", "interfaces": "lo:127.0.0.1<0>"}),
    (Symptom.NET_CHOSEN, "node-a:1:2 [0] NCCL INFO Using network Socket", "NVIDIA/nccl v2.21.5-1 src/init.cc \"Using network %s\"", {"net": "Socket"}),
    (Symptom.NET_CHOSEN, "node-a:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ens7:10.0.0.1<0>",
     "NVIDIA/nccl v2.7.8-1 src/transport/net_ib.cc \"NET/IB : Using%s ; OOB %s:%s\"", {"net": "IB"}),
    (Symptom.IB_ABSENT, "node-a:1:2 [0] NCCL INFO NET/IB : No device found.", "NVIDIA/nccl v2.21.5-1 src/transport/net_ib.cc", {}),
    (Symptom.IB_ABSENT, "node-a:1:2 [0] NCCL INFO Failed to open libibverbs.so[.1]", "NVIDIA/nccl v2.21.5-1 src/misc/ibvsymbols.cc", {}),
    (Symptom.ROCE_LINK, "node-a:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE ; OOB ens7:10.0.0.1<0>",
     "NVIDIA/nccl v2.18.5-1 src/transport/net_ib.cc \" [%d]%s:%d/%s\"", {"hca": "mlx5_0"}),
    (Symptom.ROCE_LINK, "\t\t\tlink_layer:\t\tEthernet", "linux-rdma/rdma-core ibv_devinfo devinfo.c \"link_layer:\\t\\t%s\"", {}),
    (Symptom.PEER_CONNECT_FAILED, "node-b:7731:7804 [2] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.12.0.5<41827> failed : No route to host",
     "NVIDIA/nccl v2.21.5-1 src/misc/socket.cc socketStartConnect", {"peer": "10.12.0.5", "port": 41827, "reason": "No route to host", "layer": "nccl"}),
    (Symptom.PEER_CONNECT_FAILED, "node-b:7731:7804 [2] misc/socket.cc:578 NCCL WARN socketPollConnect: connect to 10.12.0.5<41827> returned Connection refused, exceeded error retry count after 35 attempts",
     "NVIDIA/nccl v2.27.7-1 src/misc/socket.cc socketConnectCheck", {"peer": "10.12.0.5", "reason": "Connection refused"}),
    (Symptom.PEER_CONNECT_FAILED, "seyun:17283:17549 [3] include/core.h:298 WARN Call to connect timeout : Connection refused",
     "NVIDIA/nccl v2.3.7-1 src/include/core.h SYSCHECKNTIMES \"Call to \" name \" timeout : %s\"", {"reason": "Connection refused"}),
    (Symptom.PEER_CONNECT_FAILED, "[E1130 09:36:01.585255330 socket.cpp:1028] [c10d] The client socket has timed out after 8000ms while trying to connect to (127.0.0.1, 29531).",
     "recorded: corpus/cpu/init_pg_unreachable.log (torch 2.13.0)", {"peer": "127.0.0.1", "port": 29531, "reason": "timed out", "layer": "c10d"}),
    (Symptom.PEER_CONNECT_FAILED, "[W socket.cpp:663] [c10d] The client socket has failed to connect to [node-a]:29500 (errno: 111 - Connection refused).",
     "pytorch/pytorch 2.13.0 libtorch_cpu.so \"The client socket has failed to connect to {} {}.\"", {"peer": "node-a", "reason": "Connection refused"}),
    (Symptom.PEER_CONNECTION_CLOSED, "node-a:48213:48290 [0] misc/socket.cc:58 NCCL WARN socketProgress: Connection closed by remote peer node-c<41827>",
     "NVIDIA/nccl v2.30.7-1 src/misc/socket.cc socketProgress", {"peer": "node-c", "port": 41827, "layer": "nccl"}),
    (Symptom.PEER_CONNECTION_CLOSED, "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:537] Read error [127.0.0.1]:8075: Connection reset by peer",
     "pytorch/gloo gloo/transport/tcp/pair.cc Read error (as recorded in corpus/cpu/gloo_peer_killed.log)", {"peer": "127.0.0.1", "layer": "gloo"}),
    (Symptom.MULTI_NODE, "  min_nodes                : 2", "pytorch/pytorch 2.13.0 torch/distributed/launcher/api.py config dump", {"nodes": 2}),
    (Symptom.MULTI_NODE, "I1202 05:53:16.737000 13716 torch/distributed/launcher/api.py:254]   max_nodes                : 2",
     "recorded: corpus/cpu/rendezvous_join_timeout_two_nodes.log (LOGLEVEL=INFO torchrun --nnodes 2, torch 2.13.0)", {"nodes": 2}),
    (Symptom.MULTI_NODE, "+ torchrun --nnodes=4 --nproc-per-node=8 train.py", "pytorch/pytorch torch/distributed/run.py --nnodes", {"nodes": 4}),
    (Symptom.MULTI_NODE, "deepspeed --num_nodes 2 --num_gpus 8 train.py", "microsoft/DeepSpeed launcher/runner.py --num_nodes", {"nodes": 2}),
    (Symptom.MULTI_NODE, "Training on two nodes with 8 A100 each hangs", "a user's description", {"nodes": 2}),
    (Symptom.COMM_INIT_STARTED, "[2025-09-11 10:24:21 TP0] sglang is using nccl==2.27.3",
     "sgl-project/sglang pynccl.py logger.info(\"sglang is using nccl==%s\")", {"nccl_version": "2.27.3"}),
]


def _observe(line: str):
    """As the scan does: a wording sees the line's message (its prefixes parsed off) unless it reads the whole line."""
    message = parse_prefixes(line).message
    return [(w.symptom, w.facts_of(m)) for w in WORDINGS if any(lit in line for lit in w.literals)
            for m in [w.compiled.search(line if w.whole_line else message)] if m]


@pytest.mark.parametrize("symptom, line, source, facts", WORDS, ids=[f"{w[0].value}-{i}" for i, w in enumerate(WORDS)])
def test_each_wording_gives_its_symptom_with_typed_facts(symptom, line, source, facts):
    got = [f for s, f in _observe(line) if s is symptom]
    assert got, f"{symptom.value} not observed on {line!r}"
    for name, value in facts.items():
        assert got[0].get(name) == value, (name, got[0])


def test_every_network_symptom_has_two_sources():
    by = sources_by_symptom(WORDS)
    for symptom in (Symptom.INTERFACE_CHOSEN, Symptom.NET_CHOSEN, Symptom.IB_ABSENT, Symptom.PEER_CONNECT_FAILED,
                    Symptom.PEER_CONNECTION_CLOSED, Symptom.MULTI_NODE):
        assert len(by.get(symptom, ())) >= 2, symptom


@pytest.mark.parametrize("line", [
    "node-b:7731:7804 [2] NCCL INFO socketPollConnect: connect to 10.12.0.5<41827> returned Connection refused, retrying (1/34) after sleep for 100 msec",
    "node-a:1:2 [0] NCCL INFO Bootstrap: Using N/A:-1",  # NCCL 2.27's bootstrap plugin line names no interface
    "  min_nodes                : 1",  # a launcher's dump of a one-node run says nodes=1, never multi-node (checked below)
    "Trains in 2 epochs",
])
def test_near_misses_are_not_network_failures(line):
    got = _observe(line)
    assert not [s for s, _ in got if s in (Symptom.PEER_CONNECT_FAILED, Symptom.INTERFACE_CHOSEN)]
    assert all(f.get("nodes", 1) <= 1 for s, f in got if s is Symptom.MULTI_NODE)


@pytest.mark.parametrize("name, address, kind", [
    ("lo", "127.0.0.1", IfaceKind.LOOPBACK), ("eth0", "127.0.1.1", IfaceKind.LOOPBACK), ("lo", "::1", IfaceKind.LOOPBACK),
    ("docker0", "172.17.0.1", IfaceKind.CONTAINER_BRIDGE), ("eth0", "172.17.0.2", IfaceKind.CONTAINER_BRIDGE),
    ("veth3a2b1c", "10.0.0.5", IfaceKind.CONTAINER_BRIDGE), ("br-1f2e3d4c5b6a", "172.18.0.1", IfaceKind.CONTAINER_BRIDGE),
    ("virbr0", "192.168.122.1", IfaceKind.VIRTUAL), ("tailscale0", "100.101.7.3", IfaceKind.VIRTUAL), ("wg0", "10.8.0.2", IfaceKind.VIRTUAL),
    ("eth1", "169.254.3.1", IfaceKind.LINK_LOCAL), ("ens7", "fe80::1%ens7", IfaceKind.LINK_LOCAL),
    ("ens7", "10.128.0.30", IfaceKind.ROUTABLE), ("bond0", "192.168.1.20", IfaceKind.ROUTABLE), ("ib0", "2001:db8::5", IfaceKind.ROUTABLE),
])
def test_interfaces_are_classified_by_name_and_address(name, address, kind):
    assert classify(name, address) is kind


def _run(text: str):
    d = diagnose_text(text, source="net.log")
    return d, d.run["network"]


def test_run_model_network_facts():
    text = "\n".join([
        "node-a:5257:5257 [0] NCCL INFO Bootstrap : Using ens7:10.128.0.30<0>",
        "node-a:5257:5301 [0] NCCL INFO NET/IB : No device found.",
        "node-a:5257:5301 [0] NCCL INFO NET/Socket : Using [0]ens7:10.128.0.30<0> [1]docker0:172.17.0.1<0>",
        "node-a:5257:5301 [0] NCCL INFO Using network Socket",
        "node-b:1017:1017 [0] NCCL INFO Bootstrap : Using ens7:10.128.0.33<0>",
    ])  # built from NVIDIA/nccl v2.21.5-1 bootstrap.cc, net_ib.cc, net_socket.cc, init.cc format strings
    _, net = _run(text)
    assert net["hosts"] == ["node-a", "node-b"] and net["multi_node"] is True
    assert net["transport"] == NetTransport.SOCKET.value and net["ib_absent"] is True
    kinds = {(i["role"], i["name"], i["host"]): i["kind"] for i in net["interfaces"]}
    assert kinds[("NET/Socket", "docker0", "node-a")] == "container-bridge"
    assert kinds[("Bootstrap", "ens7", "node-b")] == "routable"
    assert json.dumps(net)  # typed values, JSON as they are


def test_nccl_tests_rank_list_names_the_hosts():
    text = "\n".join([
        "# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0",
        "#  Rank  0 Group  0 Pid  41200 on     node-a device  0 [0x1b] NVIDIA H100 80GB HBM3",
        "#  Rank  1 Group  0 Pid  39911 on     node-b device  0 [0x1b] NVIDIA H100 80GB HBM3",
    ])  # NVIDIA/nccl-tests v2.13.13 src/common.cu "#  Rank %2d Group %2d Pid %6d on %10s device %2d [0x%02x] %s"
    _, net = _run(text)
    assert net["hosts"] == ["node-a", "node-b"] and net["multi_node"] is True


def test_a_real_two_node_launch_is_multi_node_and_keeps_its_own_finding():
    """torchrun --nnodes 2 whose second node never joined (recorded): the run model says two nodes; the rendezvous
    timeout, which names the missing node, stays first (no connect failed, so no network cause takes it)."""
    d = diagnose_path(ROOT / "corpus" / "cpu" / "rendezvous_join_timeout_two_nodes.log")
    assert d.run["network"]["multi_node"] is True and d.run["network"]["nodes"] == 2
    assert d.findings[0].signature == "torchrun-rendezvous-timeout", [f.signature for f in d.findings]


@pytest.mark.parametrize("name", ["nccl_p2p_disable.log", "nccl_p2p_shm_disable.log"])
def test_a_one_node_recording_is_not_multi_node(name):
    """Real runs on one 2xH200 host; with P2P and SHM off NCCL even prints 'nNodes 2', which is its grouping, not hosts."""
    d = diagnose_path(ROOT / "corpus" / "gpu" / name)
    net = d.run["network"]
    assert net["multi_node"] is False and [i["kind"] for i in net["interfaces"]] and {i["kind"] for i in net["interfaces"]} == {"routable"}


# -- causes --------------------------------------------------------------------------------------
LOOPBACK_TWO_NODES = """node-a:5257:5257 [0] NCCL INFO Bootstrap : Using lo:127.0.0.1<0>
node-b:1017:1017 [0] NCCL INFO Bootstrap : Using lo:127.0.0.1<0>
node-b:1017:1090 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 127.0.0.1<45069> failed : Connection refused
node-b:1017:1090 [0] NCCL INFO bootstrap.cc:256 -> 2
"""  # NVIDIA/nccl v2.21.5-1 bootstrap.cc / misc/socket.cc format strings
NCCL_CONNECT_TO_LOOPBACK = """[rank10]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1331, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.5
[rank10]: Last error:
[rank10]: socketStartConnect: Connect to 127.0.0.1<45069> failed : Software caused connection abort
"""  # pytorch/pytorch v2.1.0 NCCLUtils.hpp C10D_NCCL_CHECK + NVIDIA/nccl v2.18.5-1 socketStartConnect
CONTAINERS = """3f2a9b1c4d5e:61:61 [0] NCCL INFO Bootstrap : Using eth0:172.17.0.2<0>
9c0d8e7f6a5b:58:58 [0] NCCL INFO Bootstrap : Using eth0:172.17.0.2<0>
9c0d8e7f6a5b:58:120 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 172.17.0.2<43111> failed : Connection refused
"""  # the same v2.21.5-1 strings in two Docker containers (hosts named by container id)
FIREWALL = """node-a:5257:5257 [0] NCCL INFO Bootstrap : Using ens7:10.128.0.30<0>
node-b:1017:1017 [0] NCCL INFO Bootstrap : Using ens7:10.128.0.33<0>
node-b:1017:1090 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.128.0.30<45069> failed : Connection timed out
"""
FIREWALL_C10D = """  min_nodes                : 2
  max_nodes                : 2
[E1201 10:12:01.585255330 socket.cpp:1028] [c10d] The client socket has timed out after 8000ms while trying to connect to (10.0.0.1, 29500).
"""  # torch 2.13.0 launcher/api.py config dump + the c10d line recorded in corpus/cpu/init_pg_unreachable.log
FIREWALL_SGLANG = """[2026-12-01 10:02:12 TP0] sglang is using nccl==2.21.5
[2026-12-01 10:04:20 TP0] Scheduler hit an exception: Traceback (most recent call last):
# two nodes, 8 GPUs each
"""  # sglang pynccl.py / scheduler.py logger lines and a user's note
GLOO_LOOPBACK_TWO_NODES = """+ torchrun --nnodes=2 --node-rank=0 --master-addr=10.0.0.1 train.py
[W1201 09:14:02.318220417 ProcessGroupGloo.cpp:524] Warning: Unable to resolve hostname to a (local) address. Using the loopback address as fallback. Manually set the network interface to bind to with GLOO_SOCKET_IFNAME. (function operator())
RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:537] Read error [10.0.0.2]:40112: Connection reset by peer
"""  # torch/distributed/run.py flags, ProcessGroupGloo.cpp's warning and gloo pair.cc's Read error (corpus/cpu/gloo_peer_killed.log form)
ROCE_RETRY = """gpu-017:20933:20990 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE ; OOB ens7:10.20.1.17<0>
gpu-017:20933:21087 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 10.20.1.33<53061> with error 12, opcode 0, len 0, vendor err 129 (Send)
"""  # NVIDIA/nccl v2.18.5-1 src/transport/net_ib.cc format strings
IB_RETRY = ROCE_RETRY.replace("mlx5_0:1/RoCE ; OOB ens7", "mlx5_0:1/IB ; OOB ib0")  # an InfiniBand port: no GID index to choose
MASTER_LOCALHOST = """+ torchrun --nnodes=2 --node-rank=1 --master-addr=localhost --master-port=29500 train.py
[W socket.cpp:663] [c10d] The client socket has failed to connect to [localhost]:29500 (errno: 111 - Connection refused).
"""  # torch/distributed/run.py flags and the c10d socket.cpp string of torch 2.13.0's libtorch_cpu.so
VERSIONS_GARBAGE = """[rank0]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:2027, internal error - please report this issue to the NCCL developers, NCCL version 2.19.3
[rank0]: ncclInternalError: Internal check failed.
[rank0]: Last error:
[rank0]: ncclSocketInit: connecting to address  with family 0 is neither AF_INET(2) nor AF_INET6(10)
"""  # pytorch v2.2.0 C10D_NCCL_CHECK + NVIDIA/nccl v2.19.3-1 src/misc/socket.cc:714
IFNAME_GARBAGE = """node3:1958:1958 [3] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth2
node3:1958:2011 [3] misc/socket.cc:814 NCCL WARN ncclSocketInit: connecting to address  with family 59936 is neither AF_INET(2) nor AF_INET6(10)
"""  # NVIDIA/nccl v2.27.3-1 param.cc + socket.cc:814
TWO_VERSIONS = """node-a:5257:5257 [0] NCCL INFO Bootstrap : Using ens7:10.128.0.30<0>
NCCL version 2.14.3+cuda11.7
node-b:1017:1017 [0] NCCL INFO Bootstrap : Using ens7:10.128.0.33<0>
NCCL version 2.19.3+cuda12.3
"""


@pytest.mark.parametrize("text, cause", [
    (LOOPBACK_TWO_NODES, "nccl-interface-unreachable"),
    (NCCL_CONNECT_TO_LOOPBACK, "nccl-interface-unreachable"),
    (CONTAINERS, "nccl-container-network-isolated"),
    (FIREWALL, "nccl-nodes-port-blocked"),
    (FIREWALL_C10D, "nccl-nodes-port-blocked"),
    (FIREWALL_SGLANG, "nccl-nodes-port-blocked"),
    (MASTER_LOCALHOST, "rendezvous-master-addr-loopback"),
    (GLOO_LOOPBACK_TWO_NODES, "nccl-interface-unreachable"),
    (ROCE_RETRY, "nccl-roce-gid-index"),
    (IB_RETRY, "nccl-ib-completion-error"),
    (VERSIONS_GARBAGE, "nccl-versions-differ"),
    (TWO_VERSIONS, "nccl-versions-differ"),
    (IFNAME_GARBAGE, "nccl-socket-ifname-no-address"),
], ids=["loopback-two-nodes", "nccl-connect-to-loopback", "containers", "firewall", "firewall-c10d", "firewall-sglang",
        "master-addr-localhost", "gloo-loopback-two-nodes", "roce-retry-exceeded",
        "ib-retry-exceeded", "versions-garbage-address", "two-versions", "ifname-garbage-address"])
def test_the_cause_is_named_first_and_its_neighbours_stay_quiet(text, cause):
    d, _ = _run(text)
    assert d.findings and d.findings[0].signature == cause, [f.signature for f in d.findings]
    others = {f.signature for f in d.findings if f.is_error and f.role == "root-cause"} & NETWORK_CAUSES - {cause}
    assert not others, others


EXCLUSION_LETS_LO_IN = """node-a:5257:5257 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to ^docker0
node-a:5257:5257 [0] NCCL INFO Bootstrap : Using lo:127.0.0.1<0>
node-b:1017:1017 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to ^docker0
node-b:1017:1017 [0] NCCL INFO Bootstrap : Using lo:127.0.0.1<0>
node-b:1017:1090 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 127.0.0.1<45069> failed : Connection refused
"""  # NVIDIA/nccl v2.21.5-1 src/misc/socket.cc INFO(NCCL_ENV, "NCCL_SOCKET_IFNAME set by environment to %s") + bootstrap.cc


def test_an_exclusion_that_lets_loopback_in_is_named():
    d, _ = _run(EXCLUSION_LETS_LO_IN)
    f = d.findings[0]
    assert f.signature == "nccl-interface-unreachable"
    assert any("NCCL_SOCKET_IFNAME=^docker0" in n and "^docker0,lo" in n for n in f.notes), f.notes


def test_words_name_the_cause_and_the_fix():
    d, _ = _run(NCCL_CONNECT_TO_LOOPBACK)
    f = d.findings[0]
    assert "NCCL_SOCKET_IFNAME" in f.fix.env and "GLOO_SOCKET_IFNAME" in f.fix.env
    assert any("127.0.0.1" in n and "loopback" in n for n in f.notes), f.notes
    d, _ = _run(VERSIONS_GARBAGE)
    assert "NCCL version mismatch" in d.findings[0].title
    d, _ = _run(CONTAINERS)
    assert {(x.flag, x.value) for x in d.findings[0].fix.flags} >= {("--network", "host"), ("--ipc", "host")}
    d, _ = _run(FIREWALL)
    words = " ".join([d.findings[0].title, d.findings[0].fix.summary, *d.findings[0].fix.steps])
    assert "firewall" in words and "nc -zv" in words


def test_a_roce_log_that_merely_ends_is_not_a_gid_verdict():
    """A RoCE port and a two-host rank list, then the log ends (a paste may be cut there): no cause claims a GID index."""
    text = "\n".join(["\t\t\tlink_layer:\t\tEthernet",
                      "#  Rank  0 Group  0 Pid  41200 on     node-a device  0 [0x1b] NVIDIA H100 80GB HBM3",
                      "#  Rank  1 Group  0 Pid  39911 on     node-b device  0 [0x1b] NVIDIA H100 80GB HBM3"])
    d, _ = _run(text)
    assert "nccl-roce-gid-index" not in {f.signature for f in d.findings}


@pytest.mark.parametrize("name", ["cpu/init_pg_unreachable.log", "cpu/tcpstore_connect_timeout.log", "cpu/gloo_peer_killed.log",
                                  "cpu/tcpstore_host_unresolvable.log", "gpu/nccl_socket_ifname.log"])
def test_one_node_recordings_keep_their_own_finding(name):
    """Real one-node failures on loopback: nobody is across a network, so no network cause takes them."""
    d = diagnose_path(ROOT / "corpus" / name)
    assert not {f.signature for f in d.findings} & (NETWORK_CAUSES - {"nccl-versions-differ"}), [f.signature for f in d.findings]


HEALTHY_TWO_NODES = """node-a:5257:5257 [0] NCCL INFO Bootstrap : Using ens7:10.128.0.30<0>
node-a:5257:5257 [0] NCCL INFO NET/IB : No device found.
node-a:5257:5301 [0] NCCL INFO NET/Socket : Using [0]ens7:10.128.0.30<0>
node-a:5257:5301 [0] NCCL INFO Using network Socket
node-b:1017:1017 [0] NCCL INFO Bootstrap : Using ens7:10.128.0.33<0>
node-b:1017:1101 [0] NCCL INFO Using network Socket
node-a:5257:5301 [0] NCCL INFO comm 0x55d0c8a0 rank 0 nranks 16 cudaDev 0 busId 1000 - Init COMPLETE
node-b:1017:1101 [0] NCCL INFO comm 0x55d0c8b0 rank 8 nranks 16 cudaDev 0 busId 1000 - Init COMPLETE
"""  # NVIDIA/nccl v2.21.5-1 bootstrap.cc, net_ib.cc, net_socket.cc, init.cc format strings


def test_healthy_multi_node_start_is_silent_on_the_command_line(tmp_path):
    log = tmp_path / "two-nodes.log"
    log.write_text(HEALTHY_TWO_NODES)
    p = run_cli("diagnose", "--json", str(log))
    out = json.loads(p.stdout)
    assert not [f["signature"] for f in out["findings"] if f["severity"] in ("error", "critical")], out["findings"]
    assert out["run"]["network"]["multi_node"] is True


def test_the_cause_through_the_real_cli(tmp_path):
    log = tmp_path / "loopback.log"
    log.write_text(LOOPBACK_TWO_NODES)
    p = run_cli("diagnose", "--json", str(log))
    out = json.loads(p.stdout)
    assert out["findings"][0]["signature"] == "nccl-interface-unreachable"
    assert out["findings"][0]["fix"]["env"]["NCCL_SOCKET_IFNAME"]
