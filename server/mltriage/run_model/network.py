"""The run's network, from the scan's observations: which interfaces NCCL chose and what they are,
which hosts took part, how many nodes the run spans, NCCL's transport between nodes, and whether
ranks ran in containers. One owner: causes read ``RunModel.network``, nothing else classifies an
interface.

An interface's kind is decided by its name and address (``classify``): loopback, a container
bridge, a virtual (VM/VPN/tunnel) interface, link-local, or routable. Only a routable one carries
traffic to another node, which is what a multi-node run needs of its bootstrap and socket transport.
"""

from __future__ import annotations

import ipaddress
import re

from mltriage.lazy_pattern import lazy
from mltriage.run_model.model import ChosenInterface, Fact, IfaceKind, Network, NetTransport
from mltriage.symptoms.observe import Observations
from mltriage.symptoms.vocabulary import Symptom

MAX_INTERFACES = 32
MAX_HOSTS = 64
_ONE = lazy(re.compile, r"(?:\[\d{1,2}\] ?)?([^\s:<\[\]]{1,32}):([^\s<]{1,64})<\d{1,5}>")
# interface names by what they are (Linux, Docker, libvirt, Kubernetes CNIs, VPNs)
_LOOPBACK_NAMES = lazy(re.compile, r"lo\d{0,3}$")
_BRIDGE_NAMES = lazy(re.compile, r"(?:docker\d{0,3}|veth\w{0,16}|br-[0-9a-f]{1,16}|cni\d{0,3}|flannel\.\d{1,4}|cali\w{0,16}|podman\d{0,3}|cbr0)$")
_VIRTUAL_NAMES = lazy(re.compile, r"(?:virbr\d{1,3}|vnet\d{1,3}|tailscale\d{0,3}|wg\d{0,3}|tun\d{0,3}|tap\d{0,3}|zt\w{0,16}|utun\d{0,3}|"
                            r"vmnet\d{0,3}|vboxnet\d{0,3}|ppp\d{0,3}|ipsec\d{0,3})(?:[.:]\w{1,8})?$")
_DOCKER_DEFAULT = ipaddress.ip_network("172.17.0.0/16")  # Docker's default bridge network
_CONTAINER_ID = lazy(re.compile, r"[0-9a-f]{12}$")  # Docker names a container's host after its 12-hex-digit id


def classify(name: str, address: str) -> IfaceKind:
    """What an interface is, from its name and its address (an address NCCL printed, ``10.0.0.1`` or ``fe80::1%eth0``)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        ip = None
    if _LOOPBACK_NAMES.match(name) or (ip is not None and ip.is_loopback):
        return IfaceKind.LOOPBACK
    if _BRIDGE_NAMES.match(name) or (ip is not None and ip.version == 4 and ip in _DOCKER_DEFAULT):
        return IfaceKind.CONTAINER_BRIDGE
    if _VIRTUAL_NAMES.match(name):
        return IfaceKind.VIRTUAL
    if ip is not None and ip.is_link_local:
        return IfaceKind.LINK_LOCAL
    return IfaceKind.ROUTABLE


def address_kind(address: str) -> IfaceKind | None:
    """The kind of a peer's address alone (a connect's target); None for a host name."""
    try:
        ip = ipaddress.ip_address(address.strip("[]").split("%", 1)[0])
    except ValueError:
        return IfaceKind.LOOPBACK if address == "localhost" else None
    return classify("", str(ip))


def build_network(observations: Observations) -> Network:
    net = Network()
    seen: set[tuple] = set()
    for obs in observations.of(Symptom.INTERFACE_CHOSEN):
        host = obs.host
        for name, address in _ONE.findall(str(obs.facts.get("interfaces", ""))):
            key = (str(obs.facts.get("role", "NET")), name, address, host)
            if key not in seen and len(net.interfaces) < MAX_INTERFACES:
                seen.add(key)
                net.interfaces.append(ChosenInterface(str(obs.facts.get("role", "NET")), name, address, classify(name, address),
                                                      host, obs.source, obs.line, obs.text))
    _hosts(net, observations)
    for obs in observations.of(Symptom.MULTI_NODE):
        nodes = obs.facts.get("nodes")
        if isinstance(nodes, int) and nodes > net.nodes and nodes > 1:
            net.nodes = nodes
            net.nodes_said = Fact(f"the run spans {nodes} nodes ({obs.text.strip()[:80]})", obs.line, obs.text)
    for obs in observations.of(Symptom.NET_CHOSEN):
        word = str(obs.facts.get("net", ""))
        transport = NetTransport.IB if word == "IB" else NetTransport.SOCKET if word == "Socket" else NetTransport.PLUGIN
        if net.transport is NetTransport.UNKNOWN or transport is NetTransport.IB:
            net.transport = transport
    absent = observations.first(Symptom.IB_ABSENT)
    if absent is not None:
        net.ib_absent = Fact("NCCL found no InfiniBand/RoCE device: traffic between nodes goes over TCP sockets", absent.line, absent.text)
    for i in net.interfaces:
        if i.kind is IfaceKind.CONTAINER_BRIDGE and len(net.containers) < 4:
            net.containers.append(Fact(f"{i.name}:{i.address} is a container bridge address", i.line, i.text))
    ids = [h for h in net.hosts if _CONTAINER_ID.match(h)]
    if ids:
        fact = net.hosts[ids[0]]
        net.containers.append(Fact(f"the host name {ids[0]} is a container's id (Docker names a container's host so)", fact.line, fact.text))
    return net


def _hosts(net: Network, observations: Observations) -> None:
    """Distinct hosts in the prefixes of the network's and NCCL's own lines (each kept observation's line)."""
    for symptom in (Symptom.INTERFACE_CHOSEN, Symptom.COMM_INIT_STARTED, Symptom.CHANNELS_SET_UP, Symptom.COMM_INIT_COMPLETE,
                    Symptom.PEER_CONNECT_FAILED, Symptom.PEER_CONNECTION_CLOSED, Symptom.NET_CHOSEN, Symptom.IB_ABSENT,
                    Symptom.ENV_SET, Symptom.SOCKET_ADDRESS_INVALID):
        for obs in observations.of(symptom):
            host = obs.host
            if host and host not in net.hosts and len(net.hosts) < MAX_HOSTS:
                net.hosts[host] = Fact(f"host {host}", obs.line, obs.text)
    for obs in observations.of(Symptom.DEVICE_LISTED):  # nccl-tests lists every rank with its host ("#  Rank  0 ... on node-a")
        host = obs.facts.get("host")
        if isinstance(host, str) and host not in net.hosts and len(net.hosts) < MAX_HOSTS:
            net.hosts[host] = Fact(f"host {host} (nccl-tests' rank list)", obs.line, obs.text)


def same_address_on_hosts(net: Network) -> list[ChosenInterface]:
    """Interfaces with one address on different hosts: each container got the same private bridge address."""
    by_address: dict[str, ChosenInterface] = {}
    out: list[ChosenInterface] = []
    for i in net.interfaces:
        if i.kind in (IfaceKind.LOOPBACK, IfaceKind.LINK_LOCAL):
            continue  # every host has these: the same one twice says nothing about containers
        other = by_address.setdefault(i.address, i)
        if other.host and i.host and other.host != i.host and other not in out:
            out += [other, i]
    return out
