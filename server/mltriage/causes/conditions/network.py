"""What causes ask of the network between ranks and nodes (the facts are run.network's)."""

from __future__ import annotations

import re

from mltriage.causes.conditions.registry import Judged, condition
from mltriage.lazy_pattern import lazy
from mltriage.masking import clip
from mltriage.model import Finding
from mltriage.run_model.model import IfaceKind, Phase, RunModel, StopKind
from mltriage.symptoms.observe import Observations, Waits
from mltriage.symptoms.vocabulary import Symptom

@condition("socket-ifname-set", "the run set NCCL_SOCKET_IFNAME (NCCL reported it)")
def _socket_ifname_set(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    value = run.env.get("NCCL_SOCKET_IFNAME")
    return Judged(value is not None, [f"the run set NCCL_SOCKET_IFNAME={value}"] if value is not None else [])


@condition("multi-node", "the run spans nodes: two hosts in NCCL's prefixes, or a launcher/command line/user says N > 1 nodes")
def _multi_node(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    facts = run.network.multi_node_evidence()
    return Judged(run.network.multi_node, [f.cited() for f in facts], tuple(f.text for f in facts if f.line))


@condition("interface-unusable", "a multi-node run's NCCL uses loopback, a container bridge, a VPN/VM interface or link-local")
def _interface_unusable(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    """A run that spans nodes bootstraps or sends over an interface no other node can reach."""
    bad = run.network.unusable()
    if not bad or not run.network.multi_node:
        return Judged(False, [])
    why = [i.cited() for i in bad[:3]]
    value = run.env.get("NCCL_SOCKET_IFNAME")
    if value is not None:  # the setting let it through: say how NCCL read it
        how = ("an exclusion list: every interface not named is allowed, so `lo` must be excluded too (`^docker0,lo`)"
               if value.startswith("^") else "an exact name" if value.startswith("=") else "a list of name prefixes")
        why.append(f"the run set NCCL_SOCKET_IFNAME={value}, which NCCL reads as {how}, and it let {bad[0].name} through")
    return Judged(True, why, tuple(dict.fromkeys(i.text for i in bad[:3])))


@condition("peer-address-unusable", "a connect failed to a loopback/bridge/link-local peer address (NCCL's own, or across nodes)")
def _peer_address_unusable(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    """A connect failed to a peer address that is loopback, a bridge or link-local: the address NCCL advertised is
    one the peer cannot be reached at. NCCL's own connects go to what its peers advertised (a connect to 127.0.0.1 that
    fails means a peer advertised its loopback); c10d's go to MASTER_ADDR, which is the user's: only across nodes."""
    from mltriage.run_model.network import address_kind

    for obs in observations.of(Symptom.PEER_CONNECT_FAILED) + observations.of(Symptom.PEER_CONNECTION_CLOSED):
        peer = str(obs.facts.get("peer", ""))
        kind = address_kind(peer) if peer else None
        if kind is None or kind.value == "routable":
            continue
        if obs.facts.get("layer") == "c10d":
            continue  # c10d connects to MASTER_ADDR, the user's setting: store-address-loopback
        if obs.facts.get("layer") == "nccl" and obs.symptom is Symptom.PEER_CONNECT_FAILED or run.network.multi_node:
            return Judged(True, [f"a connect to {peer} failed ({clip(str(obs.facts.get('reason', 'closed')), 60)}, line {obs.line}): "
                                 f"{peer} is {kind.words}, which no other node can reach"], (obs.text,))
    return Judged(False, [])


@condition("container-network", "a multi-node run's ranks advertise container-bridge addresses (or one address on two hosts)")
def _container_network(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    """Ranks on different hosts advertise container-bridge addresses (or one same private address): each container
    has its own network namespace behind NAT, which the other node cannot connect into."""
    from mltriage.run_model.network import same_address_on_hosts

    net = run.network
    if not net.multi_node:
        return Judged(False, [])
    twins = same_address_on_hosts(net)
    if twins:
        return Judged(True, [f"{twins[0].address} is the address of ranks on {twins[0].host} and on {twins[1].host}: each container "
                             "has its own private network"], (twins[0].text, twins[1].text))
    bridges = [i for i in net.interfaces if i.kind.value == "container-bridge"]
    if bridges:
        return Judged(True, [i.cited() for i in bridges[:2]], tuple(dict.fromkeys(i.text for i in bridges[:2])))
    return Judged(False, [])


@condition("connect-failed", "a TCP connect to a peer failed for good, or an open connection to one closed")
def _connect_failed(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    """A TCP connect to a peer failed for good, or an open connection to one closed, during set-up."""
    seen = observations.of(Symptom.PEER_CONNECT_FAILED) + observations.of(Symptom.PEER_CONNECTION_CLOSED)
    if not seen:
        return Judged(False, [])
    first = seen[0]
    return Judged(True, [f"a connection between ranks failed: {clip(first.text.strip(), 120)} (line {first.line})"], (first.text,))


@condition("setup-not-finished", "the run stopped before any communicator was ready")
def _setup_not_finished(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    """The run stopped before any communicator was ready (bootstrap, rendezvous, connecting)."""
    held = run.stop.kind is not StopKind.CLEAN_END and not any(
        p in run.reached for p in (Phase.COMM_READY, Phase.FIRST_COLLECTIVE, Phase.STEADY, Phase.FINISH))
    return Judged(held, [f"the run stopped in set-up ({run.stop.phase.label}), before any communicator was ready"] if held else [])


@condition("garbage-address-unexplained", "NCCL read a garbage peer address and the run left NCCL_SOCKET_IFNAME alone")
def _garbage_address(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    """NCCL connected to an address whose family is garbage while the run left NCCL_SOCKET_IFNAME alone: the address came
    from a peer whose bootstrap message this rank misread, which is what a peer on another NCCL release sends."""
    obs = observations.first(Symptom.SOCKET_ADDRESS_INVALID)
    held = obs is not None and "NCCL_SOCKET_IFNAME" not in run.env
    return Judged(held, [f"NCCL read a peer's address with family {obs.facts.get('family', '?')} (line {obs.line}) and the run did not "
                         "set NCCL_SOCKET_IFNAME: a bootstrap message from a peer on another NCCL release"] if held and obs else [],
                  (obs.text,) if held and obs else ())


@condition("setup-failed-unexplained", "an unrecognised error line or a noted/dumped hang, and no line error finding")
def _setup_failed_unexplained(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    """Set-up failed with nothing that names why: an error line no signature knows, or a hang someone noted or dumped
    (a log that merely ends in set-up may be a cut paste, and says nothing)."""
    logged = observations.first(Symptom.ERROR_LOGGED)
    hung = run.stop.kind in (StopKind.HANG_NOTED, StopKind.HANG_DUMP, StopKind.WATCHDOG)
    return Judged((logged is not None or hung) and not any(f.is_error for f in findings), [])


@condition("store-address-loopback", "c10d's store/rendezvous client connected to a loopback address (MASTER_ADDR=localhost)")
def _store_address_loopback(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    """c10d (the TCPStore / rendezvous client) connected to a loopback address: MASTER_ADDR is localhost."""
    from mltriage.run_model.network import address_kind

    for obs in observations.of(Symptom.PEER_CONNECT_FAILED):
        peer = str(obs.facts.get("peer", ""))
        if obs.facts.get("layer") == "c10d" and peer and address_kind(peer) is IfaceKind.LOOPBACK:
            return Judged(True, [f"the ranks connect to the store at {peer}:{obs.facts.get('port', '?')} (line {obs.line}), a loopback "
                                 "address: on every node but the master that is the node itself"], (obs.text,))
    return Judged(False, [])


@condition("roce-transfer-failed", "a RoCE port, and a retry-exceeded completion (status 12) or a noted hang between nodes")
def _roce_transfer_failed(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    """A RoCE port, and the first transfers between nodes never completed: a retry-exceeded work completion
    (status 12), or a hang someone noted or dumped once the communicator was being set up."""
    roce = observations.first(Symptom.ROCE_LINK)
    if roce is None:
        return Judged(False, [])
    retry = next((f for f in findings if f.signature == "nccl-ib-completion-error" and str(f.facts.get("status")) == "12"), None)
    hung = run.stop.kind in (StopKind.HANG_NOTED, StopKind.HANG_DUMP, StopKind.WATCHDOG) and run.network.multi_node
    if retry is None and not hung:
        return Judged(False, [])
    why = [f"the RDMA port is RoCE (line {roce.line}: {clip(roce.text.strip(), 100)})"]
    why.append(f"a work completion came back with status 12, retry exceeded (line {retry.line})" if retry is not None
               else f"the run stopped {run.stop.where or 'in a hang'} between nodes")
    gid = run.env.get("NCCL_IB_GID_INDEX")
    if gid is not None:
        why.append(f"the run set NCCL_IB_GID_INDEX={gid}: check it against show_gids on every node")
    return Judged(True, why, (roce.text,))


# an HTTP client's words on a failed lookup or connect: a download (a model hub, a package index), not a rank's peer
_WEB_REQUEST = lazy(re.compile, r"HTTPS?Connection|urllib|requests\.exceptions|Max retries exceeded|https?://|\bcurl\b|huggingface\.co|hf\.co\b|"
                          r"pypi\.org|pythonhosted|NameResolutionError|NewConnectionError|ProxyError")
WEB_FINDINGS = frozenset({"hf-hub-offline-or-unreachable"})


@condition("web-request-failed", "the failed lookup or connect was an HTTP download (a model hub, a package index), not a rank's peer")
def _web_request_failed(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    for obs in observations.of(Symptom.HOST_UNRESOLVED) + observations.of(Symptom.PEER_CONNECT_FAILED):
        if _WEB_REQUEST.search(obs.text):
            return Judged(True, [f"the request that failed was a download (line {obs.line}): {clip(obs.text.strip(), 100)}"])
    web = next((f for f in findings if f.is_error and f.signature in WEB_FINDINGS), None)
    return Judged(web is not None, [f"{web.title} (line {web.line})"] if web else [])


_REASON_HINTS = {
    "connection refused": "nothing listens at that address and port: the side that should accept (rank 0's TCPStore, the master's "
                          "rendezvous, the other node's listener) had not started yet, had already exited, or listens on another "
                          "address or port",
    "no route to host": "no route reaches that address: the address is on a network this host is not on (the wrong interface or "
                        "subnet), or a firewall rejects the packets",
    "host is unreachable": "no route reaches that address: the wrong interface or subnet, or a firewall rejecting the packets",
    "network is unreachable": "this host has no route to that network at all: the address belongs to another network (a private "
                              "address of another site or container, an IPv6 address without IPv6 routing)",
    "connection timed out": "the connection attempt got no answer: a firewall or security group drops the packets, or the address "
                            "is not the peer's",
}


@condition("connect-failed-reason", "always holds: why the first connect to a peer failed, from its errno (refused, no route, unreachable, timed out)")
def _connect_failed_reason(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    first = observations.first(Symptom.PEER_CONNECT_FAILED)
    reason = str(first.facts.get("reason", "")).lower() if first is not None else ""
    hint = next((h for k, h in _REASON_HINTS.items() if k in reason), None)
    if first is None or hint is None:
        return Judged(True, [])
    where = f"{first.facts['peer']}:{first.facts['port']}" if first.facts.get("peer") and first.facts.get("port") else "the peer"
    return Judged(True, [f"the connect to {where} failed with \"{first.facts.get('reason')}\" (line {first.line}): {hint}"])


@condition("dump-waits-in-bootstrap", "a stack dump shows a thread waiting in NCCL's bootstrap (bootstrapInit, bootstrapAllGather...): its peers never connected")
def _dump_waits_in_bootstrap(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    dump = next((o for o in observations.of(Symptom.STACK_DUMP) if o.facts.get("waits_in") is Waits.NCCL_BOOTSTRAP), None)
    if dump is None:
        return Judged(False, [])
    return Judged(True, [f"the stack dump at line {dump.line} waits in NCCL's bootstrap: the other ranks never connected to it"], (dump.text,))
