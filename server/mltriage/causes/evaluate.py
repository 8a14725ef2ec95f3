"""Fire the causes whose evidence holds on this run."""

from __future__ import annotations

import re
from dataclasses import dataclass

from mltriage.library import Library, Rule
from mltriage.masking import clip
from mltriage.model import Finding
from mltriage.run_model.model import IfaceKind, Interconnect, Phase, RunModel, StopKind
from mltriage.symptoms.observe import Observation, Observations
from mltriage.symptoms.vocabulary import Precision, Symptom

# where numpy's cast warning comes from an image or video conversion (diffusers' numpy_to_pil, export_to_video, PIL)
_IMAGE_CAST = re.compile(r"image|video|frame|vae|diffusers|pil\b|PIL", re.IGNORECASE)
EVAL_TRACEBACK_LINES = 300  # an evaluation frame this far above an OOM line is in its traceback
MAX_EVIDENCE = 6  # observation lines cited per cause
EARLY_SEQ = 4  # a process group's first collectives: DDP's parameter broadcast, start-up barriers


@dataclass(frozen=True)
class Judged:
    holds: bool
    why: list[str]  # the run-model facts that made it hold, in words with their lines
    lines: tuple[str, ...] = ()  # the log lines those facts come from (cited as evidence)


def raise_causes(findings: list[Finding], observations: Observations, run: RunModel, library: Library) -> list[Finding]:
    """The findings of every cause that holds (at most one per cause), strongest evidence first.

    A cause whose ``explained_by`` names another cause that holds here steps aside too (a numerics
    cause for the more precise fp16 overflow, or for P2P corruption): causes are weighed together,
    and only those kept turn the errors they explain into context."""
    held: list[tuple[Rule, Finding, list[Observation]]] = []
    for rule in library.rules.values():
        if not rule.derived or not rule.cause:
            continue
        result = _evaluate(rule, findings, observations, run)
        if result is not None:
            held.append((rule, *result))
    fired = {rule.id for rule, _, _ in held}
    out: list[Finding] = []
    for rule, finding, seen in held:
        if fired & set((rule.cause or {}).get("explained_by") or []):
            continue
        _explain(rule, seen, findings)
        out.append(finding)
    return out


def _evaluate(rule: Rule, findings: list[Finding], observations: Observations,
              run: RunModel) -> tuple[Finding, list[Observation]] | None:
    spec = rule.cause or {}
    seen: list[Observation] = []
    needs_any = [Symptom(s) for s in spec.get("needs_any", [])]
    needs_all = [Symptom(s) for s in spec.get("needs_all", [])]
    if needs_any:
        found = [o for s in needs_any for o in observations.of(s)]
        if not found:
            return None
        seen += found
    for symptom in needs_all:
        found = observations.of(symptom)
        if not found:
            return None
        seen += found
    stops = spec.get("stop") or []
    if stops and run.stop.kind.value not in stops:
        return None
    phases = spec.get("stopped_in") or []
    if phases and run.stop.phase.label not in phases:
        return None
    silences = spec.get("silence") or []
    if silences and (run.stop.silence is None or run.stop.silence.value not in silences):
        return None
    silent_in = spec.get("silent_in")
    if silent_in is not None and run.stop.kind is StopKind.HANG_SILENT and run.stop.phase.label not in silent_in:
        return None
    judged = [_condition(c, run, findings, observations) for c in spec.get("requires", [])]
    if not all(j.holds for j in judged):
        return None
    any_of = [_condition(c, run, findings, observations) for c in spec.get("requires_any", [])]
    if any_of and not any(j.holds for j in any_of):
        return None
    if any(_condition(c, run, findings, observations).holds for c in spec.get("rules_out", [])):
        return None
    if _named_already(spec.get("explained_by") or [], seen, findings):
        return None
    held = judged + [j for j in any_of if j.holds]
    why = [w for j in held for w in j.why]
    lines = [line for j in held for line in j.lines]
    return _finding(rule, seen, why, lines, run, findings, observations), seen


def _condition(name: str, run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    gpus = run.gpus
    if name == "multi-gpu":
        return Judged(run.multi_gpu, [f"{gpus.count} GPUs or ranks take part"] if run.multi_gpu else [])
    if name == "nvlink":
        return Judged(gpus.interconnect is Interconnect.NVLINK, [])
    if name == "pcie":
        facts = run.pcie_evidence
        return Judged(bool(facts), [f.cited() for f in facts], tuple(f.text for f in facts if f.line))
    if name == "custom-allreduce":
        if run.custom_allreduce is False:
            return Judged(False, [])  # the run said it turned custom all-reduce off
        obs = observations.first(Symptom.CUSTOM_ALLREDUCE)
        if obs is not None:
            return Judged(True, [f"a custom all-reduce is on the failing path ({clip(str(obs.facts.get('where', '')), 60)}, line {obs.line})"])
        return Judged(run.custom_allreduce is True, ["the run enabled custom all-reduce"] if run.custom_allreduce else [])
    if name in ("tensorrt-llm", "vllm", "sglang"):
        held = any(f.value == name for f in run.frameworks)
        return Judged(held, [f"the run is {name}"] if held else [])
    if name == "p2p-disabled":
        return Judged(run.env.get("NCCL_P2P_DISABLE") == "1", [])
    if name == "nccl-versions-differ":
        # one job, two NCCL releases (major.minor): the ranks do not speak the same protocol
        releases = {".".join(v.split(".")[:2]): fact for v, fact in run.nccl_versions.items()}
        facts = list(releases.values())
        return Judged(len(releases) > 1, [f"the log shows {len(releases)} NCCL releases: " + ", ".join(f.cited() for f in facts)]
                      if len(releases) > 1 else [], tuple(f.text for f in facts))
    if name == "finished-before-timeout":
        # a rank said it finished its loop, then a collective timed out in the same input: the ranks left at different points
        done, timeout = run.reached.get(Phase.FINISH), observations.first(Symptom.COLLECTIVE_TIMEOUT)
        held = done is not None and timeout is not None and done.source == timeout.source and done.line < timeout.line
        return Judged(held, [f"the run said it finished (line {done.line}) before the collective timed out (line {timeout.line})"]
                      if held else [], (done.text,) if held else ())
    if name == "early-collective":
        seqs = [o.facts["seq"] for o in observations.of(Symptom.COLLECTIVE_TIMEOUT) if isinstance(o.facts.get("seq"), int)]
        held = bool(seqs) and min(seqs) <= EARLY_SEQ  # type: ignore[type-var]
        return Judged(held, [f"the collective that timed out is among the process group's first (SeqNum {min(seqs)})"] if held else [])
    if name == "socket-ifname-set":
        value = run.env.get("NCCL_SOCKET_IFNAME")
        return Judged(value is not None, [f"the run set NCCL_SOCKET_IFNAME={value}"] if value is not None else [])
    # -- the network between nodes (the nccl-network family; the facts are run.network's) ----------
    if name in _NETWORK_CONDITIONS:
        return _NETWORK_CONDITIONS[name](run, findings, observations)
    if name == "no-error":
        return Judged(not any(f.is_error for f in findings), [])
    # -- numeric precision (numerics helper) --
    if name == "precision-fp16":
        held = run.precision is Precision.FP16
        facts = [f for f in run.precision_evidence if "fp16" in f.words]
        return Judged(held, [f.cited() for f in facts] if held else [], tuple(f.text for f in facts) if held else ())
    if name == "precision-not-fp16":  # the run says it computes in bf16 or fp32: fp16's range is not what broke
        return Judged(run.precision in (Precision.BF16, Precision.FP32), [])
    if name == "gpu-without-bf16":
        facts = run.without_bf16
        return Judged(bool(facts), [f.cited() for f in facts], tuple(f.text for f in facts))
    if name == "beyond-fp16-range":
        obs = observations.first(Symptom.FP16_RANGE_EXCEEDED)
        if obs is None:
            return Judged(False, [])
        value, where = obs.facts.get("abs_max"), obs.facts.get("where")
        words = (f"values reach {value}, beyond float16's largest finite value 65504 (line {obs.line})" if value else
                 f"the {where} produced all-NaN output while running in half precision (line {obs.line})" if where else
                 f"a debug hook found inf/nan in a layer's output (line {obs.line})")
        return Judged(True, [words], (obs.text,))
    if name == "nan-image":
        obs = next((o for o in observations.of(Symptom.NONFINITE_CAST) if _IMAGE_CAST.search(o.text)), None)
        return Judged(obs is not None, [f"NaN pixel values were cast to 8-bit (line {obs.line}): the images come out black or "
                                        "empty; half-precision image decoders (a VAE in fp16) overflow so"] if obs else [],
                      (obs.text,) if obs else ())
    # -- shared memory --
    if name == "shared-memory":
        # the full filesystem is /dev/shm: the error names a shared-memory file, or shared-memory code raised it
        full = observations.of(Symptom.NO_SPACE_LEFT)
        named = next((o for o in full if o.facts.get("shm") or str(o.facts.get("path", "")).startswith("/dev/shm/")), None)
        if named is not None:
            return Judged(True, [f"the file that found no space is shared memory ({clip(str(named.facts.get('path', '/dev/shm')), 80)}, "
                                 f"line {named.line})"])
        sources = {o.source for o in full}
        user = next((o for o in observations.of(Symptom.SHM_IN_USE) if o.source in sources), None)
        return Judged(user is not None, [f"the code that failed was using POSIX shared memory ({user.facts.get('where')}, line "
                                         f"{user.line}): it lives in /dev/shm"] if user else [], (user.text,) if user else ())
    # -- which GPU a process sees --
    if name == "launch-timed-out":
        obs = observations.first(Symptom.LAUNCH_TIMEOUT)
        return Judged(obs is not None, [f"CUDA says the kernel launch timed out and was terminated (cudaErrorLaunchTimeout, line "
                                        f"{obs.line}): a watchdog ended it"] + _windows(observations) if obs else [])
    if name == "unknown-error-after-kernel":
        # error 999 where the program waited for its kernels (a synchronize, a copy back): the GPU was reset under them
        obs = next((o for o in observations.of(Symptom.CUDA_UNKNOWN_ERROR) if o.facts.get("call")), None)
        return Judged(obs is not None, [f"CUDA error 999 (unknown error) came back from {obs.facts['call']} (line {obs.line}), "
                                        "while the program waited for its kernels to finish"] + _windows(observations) if obs else [])
    # -- GPU memory of a serving engine --
    if name == "serving-engine":
        # vLLM or SGLang: its memory budget (gpu_memory_utilization / mem_fraction_static) is what ran out
        engines = sorted(f.value for f in run.frameworks if f.value in ("vllm", "sglang"))
        capture = observations.first(Symptom.CUDA_GRAPH_CAPTURE)
        why = [f"the run is {' and '.join(engines)}, which claims a fixed share of GPU memory at start-up"] if engines else []
        if capture is not None:
            why.append(f"it was capturing CUDA graphs (line {capture.line}): their memory comes on top of the profiled budget")
        return Judged(bool(engines) or capture is not None, why, (capture.text,) if capture else ())
    if name == "oom-in-eval":
        # the out-of-memory error's own traceback runs through an evaluation loop (its frames come before it)
        for oom in observations.of(Symptom.GPU_OOM):
            frame = next((o for o in observations.of(Symptom.EVAL_FRAME)
                          if o.source == oom.source and 0 < oom.line - o.line <= EVAL_TRACEBACK_LINES), None)
            if frame is not None:
                return Judged(True, [f"the allocation failed inside evaluation ({frame.facts.get('function')}, line {frame.line})"],
                              (frame.text,))
        return Judged(False, [])
    if name in _TIMEOUT_CONDITIONS:
        return _TIMEOUT_CONDITIONS[name](run, findings, observations)
    raise ValueError(f"unknown cause condition {name!r}")


def _multi_node(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    facts = run.network.multi_node_evidence()
    return Judged(run.network.multi_node, [f.cited() for f in facts], tuple(f.text for f in facts if f.line))


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


def _store_address_loopback(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    """c10d (the TCPStore / rendezvous client) connected to a loopback address: MASTER_ADDR is localhost."""
    from mltriage.run_model.network import address_kind

    for obs in observations.of(Symptom.PEER_CONNECT_FAILED):
        peer = str(obs.facts.get("peer", ""))
        if obs.facts.get("layer") == "c10d" and peer and address_kind(peer) is IfaceKind.LOOPBACK:
            return Judged(True, [f"the ranks connect to the store at {peer}:{obs.facts.get('port', '?')} (line {obs.line}), a loopback "
                                 "address: on every node but the master that is the node itself"], (obs.text,))
    return Judged(False, [])


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


def _connect_failed(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    """A TCP connect to a peer failed for good, or an open connection to one closed, during set-up."""
    seen = observations.of(Symptom.PEER_CONNECT_FAILED) + observations.of(Symptom.PEER_CONNECTION_CLOSED)
    if not seen:
        return Judged(False, [])
    first = seen[0]
    return Judged(True, [f"a connection between ranks failed: {clip(first.text.strip(), 120)} (line {first.line})"], (first.text,))


def _setup_not_finished(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    """The run stopped before any communicator was ready (bootstrap, rendezvous, connecting)."""
    held = run.stop.kind is not StopKind.CLEAN_END and not any(
        p in run.reached for p in (Phase.COMM_READY, Phase.FIRST_COLLECTIVE, Phase.STEADY, Phase.FINISH))
    return Judged(held, [f"the run stopped in set-up ({run.stop.phase.label}), before any communicator was ready"] if held else [])


def _setup_failed_unexplained(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    """Set-up failed with nothing that names why: an error line no signature knows, or a hang someone noted or dumped
    (a log that merely ends in set-up may be a cut paste, and says nothing)."""
    logged = observations.first(Symptom.ERROR_LOGGED)
    hung = run.stop.kind in (StopKind.HANG_NOTED, StopKind.HANG_DUMP, StopKind.WATCHDOG)
    return Judged((logged is not None or hung) and not any(f.is_error for f in findings), [])


def _garbage_address(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    """NCCL connected to an address whose family is garbage while the run left NCCL_SOCKET_IFNAME alone: the address came
    from a peer whose bootstrap message this rank misread, which is what a peer on another NCCL release sends."""
    obs = observations.first(Symptom.SOCKET_ADDRESS_INVALID)
    held = obs is not None and "NCCL_SOCKET_IFNAME" not in run.env
    return Judged(held, [f"NCCL read a peer's address with family {obs.facts.get('family', '?')} (line {obs.line}) and the run did not "
                         "set NCCL_SOCKET_IFNAME: a bootstrap message from a peer on another NCCL release"] if held and obs else [],
                  (obs.text,) if held and obs else ())


_NETWORK_CONDITIONS = {
    "multi-node": _multi_node,
    "interface-unusable": _interface_unusable,
    "peer-address-unusable": _peer_address_unusable,
    "container-network": _container_network,
    "connect-failed": _connect_failed,
    "setup-not-finished": _setup_not_finished,
    "garbage-address-unexplained": _garbage_address,
    "setup-failed-unexplained": _setup_failed_unexplained,
    "store-address-loopback": _store_address_loopback,
    "roce-transfer-failed": _roce_transfer_failed,
}


def _windows(observations: Observations) -> list[str]:
    obs = observations.first(Symptom.WINDOWS_HOST)
    return [f"the run is on Windows ({clip(str(obs.facts.get('where', '')), 60)}, line {obs.line}), whose display driver resets a GPU "
            "whose kernel runs past TdrDelay"] if obs else []


def _finding(rule: Rule, seen: list[Observation], why: list[str], condition_lines: list[str], run: RunModel,
             findings: list[Finding], observations: Observations) -> Finding:
    from mltriage.engine.run_reasoning import derived_finding, last_lines_notes

    cited = _distinct_lines(seen)[:MAX_EVIDENCE]
    stop = run.stop
    if cited:
        anchor = cited[0]
        source, line, text, rank = anchor.source, anchor.line, anchor.text, anchor.rank
        if rule.kind == "hang":
            rank = None  # a hang's lines come from the ranks that waited: which rank held them up is triage's to say
    elif stop.source is not None and stop.line is not None:
        source, line, text, rank = stop.source, stop.line, stop.text, None
    else:
        source, line, text, rank = "<run>", 1, "", None
    facts: dict[str, str] = {"stopped": stop.where or stop.kind.value, "stop_phase": stop.phase.label,
                             "gpus": str(run.gpus.count) if run.gpus.count else "unknown"}
    if stop.text:
        facts["last_line"] = clip(stop.text, 200)
    for obs in cited:
        for key, value in obs.facts.items():
            facts.setdefault(key, str(value.value if hasattr(value, "value") else value))
    evidence = list(dict.fromkeys([o.text for o in cited] + condition_lines))
    if stop.kind.is_hang and stop.text and stop.text not in evidence:
        evidence.append(stop.text)
    notes = [f"{o.symptom.value} at line {o.line}: {clip(o.text, 160)}" for o in cited]
    if stop.kind.is_hang:
        notes.append(f"the log stops {stop.where} and holds no error" if stop.kind is StopKind.HANG_SILENT
                     else f"the run stopped {stop.where} (phase: {stop.phase.label})")
    notes += why
    if stop.kind.is_hang:
        notes += last_lines_notes(run)
    finding = derived_finding(rule, facts, source, line, text, evidence, notes, rank)
    if stop.kind is StopKind.HANG_SILENT and stop.silence is not None and stop.silence.could_be_a_cut and not seen:
        # only the log's end says "hang", and an excerpt cut here reads the same: a suspicion, not a verdict
        finding.severity = "warning"
        finding.notes.insert(0, f"the log ends {stop.where} with no error: if the run was still going when this was "
                                "copied, this is not a failure; if it hung here, this is the first thing to check")
    if (rule.cause or {}).get("warns_alone") and not _timeout_or_hang(run, findings, observations).holds:
        finding.severity = "warning"  # the precursor alone: no collective timed out, the run did not hang
        finding.notes.insert(0, "no collective timed out and the log shows no hang: this is what makes such a run hang, "
                                "not yet a failure")
    return finding


def _explain(rule: Rule, seen: list[Observation], findings: list[Finding]) -> None:
    """The line findings a kept cause explains (``explains``) or outranks become its context."""
    explained = set((rule.cause or {}).get("explains") or [])
    if explained:
        sources = {o.source for o in seen}
        _to_context(findings, lambda f: f.signature in explained and f.source in sources, f"a consequence of {rule.id}: {rule.title}")
    if (rule.cause or {}).get("outranks"):
        lines = {(o.source, o.line) for o in seen}
        _to_context(findings, lambda f: _covers(f, lines), f"explained by {rule.id}: {rule.title}")


# -- collective timeouts: what the ranks were doing before one timed out -----------------------------

STEPS_NEAR_TIMEOUT_LINES = 1000  # the ranks' last steps count when printed this close before the timeout
NEAR_TIMEOUT_LINES = 100  # an activity this many lines before the timeout is what its rank was doing when the others waited
ACTIVITIES = (Symptom.DATA_PREPARATION, Symptom.EVALUATION_STARTED, Symptom.CHECKPOINT_SAVING)
PEER_GONE = frozenset({"torch-gloo-connection-closed", "torch-rank-left-early", "torch-nccl-watchdog-timeout", "torch-gloo-timeout"})


def _first_timeouts(observations: Observations) -> dict[str, Observation]:
    out: dict[str, Observation] = {}
    for o in observations.of(Symptom.COLLECTIVE_TIMEOUT):
        if o.source not in out or o.line < out[o.source].line:
            out[o.source] = o
    return out


def _last_activity(observations: Observations) -> tuple[Observation, Observation] | None:
    """(the activity, the timeout): the last preparation, evaluation or save shown shortly before a
    collective timed out in the same input."""
    timeouts = _first_timeouts(observations)
    best: tuple[Observation, Observation] | None = None
    for symptom in ACTIVITIES:
        for o in observations.of(symptom):
            t = timeouts.get(o.source)
            if o.facts.get("kind") == "barrier" or t is None or not 0 < t.line - o.line <= NEAR_TIMEOUT_LINES:
                continue  # (a frame of main_process_first is where ranks waited, not what one rank did)
            if best is None or o.line > best[0].line:
                best = (o, t)
    return best


def _activity_words(o: Observation) -> str:
    what = o.facts.get("what") or o.facts.get("path") or ""
    if o.symptom is Symptom.DATA_PREPARATION:
        return f"data preparation ({what})"
    if o.symptom is Symptom.EVALUATION_STARTED:
        return f"an evaluation ({what})"
    return f"a checkpoint save ({clip(str(what), 80)})" if what else "a checkpoint save"


def _preparation_before_timeout(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    found = _last_activity(observations)
    if found is None or found[0].symptom is not Symptom.DATA_PREPARATION:
        return Judged(False, [])
    o, t = found
    return Judged(True, [f"{_activity_words(o)} is the last thing the log shows (line {o.line}) before the collective timed out "
                         f"(line {t.line})"], (o.text,))


def _work_before_timeout(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    found = _last_activity(observations)
    if found is None or found[0].symptom is Symptom.DATA_PREPARATION:
        return Judged(False, [])
    o, t = found
    return Judged(True, [f"{_activity_words(o)} began at line {o.line}, and the next thing the log shows is the collective timing "
                         f"out (line {t.line}): the other ranks were already waiting in their next collective"], (o.text,))


def _long_step_before_timeout(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    """An unfinished progress bar had run about as long as the process-group timeout when the
    collective timed out: its rank started that work when the others started waiting."""
    bars = observations.of(Symptom.PROGRESS_BAR)
    for source, t in _first_timeouts(observations).items():
        timeout_ms = t.facts.get("timeout_ms")
        before = [b for b in bars if b.source == source and b.line < t.line]
        if not isinstance(timeout_ms, int) or not before:
            continue
        bar = max(before, key=lambda b: b.line)
        elapsed, percent = bar.facts.get("elapsed_s"), bar.facts.get("percent")
        if isinstance(elapsed, int) and isinstance(percent, int) and percent < 100 and 0.9 <= elapsed * 1000 / timeout_ms <= 1.2:
            desc = f" ({bar.facts['desc'].strip()})" if str(bar.facts.get("desc", "")).strip() else ""
            return Judged(True, [f"a progress bar{desc} had run for {elapsed} s, about the process-group timeout "
                                 f"({timeout_ms // 1000} s), and stood at {percent}% (line {bar.line}) when the collective timed "
                                 f"out (line {t.line}): its rank was still at that work while the others waited"], (bar.text,))
    return Judged(False, [])


def _failed_in_preparation_barrier(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    # a traceback through main_process_first is an exception raised while the replicas waited in its barrier;
    # an error of the ranks' own (the main process's tokeniser raising) is that error, not a timeout
    # (a generic "unhandled exception" whose traceback shows no exception line is only these frames)
    frames = [o for o in observations.of(Symptom.DATA_PREPARATION) if o.facts.get("kind") == "barrier"]
    own = [f for f in findings if f.is_error and f.role == "root-cause" and f.reported_by != "launcher"
           and not (f.generic and "exception_type" not in f.facts)]
    if not frames or own:
        return Judged(False, [])
    o = frames[0]
    return Judged(True, [f"the ranks that failed were waiting in {o.facts.get('what')}'s barrier (line {o.line}) while the main "
                         "process prepared the data"], (o.text,))


def _uneven_stop(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    uneven = observations.of(Symptom.UNEVEN_INPUTS)
    if not uneven:
        return Judged(False, [])
    stopped = _timeout_or_hang(run, findings, observations).holds or any(f.signature in PEER_GONE for f in findings)
    noted = next((o for o in uneven if o.facts.get("kind") == "note"), None)
    if not stopped and noted is None:
        return Judged(False, [])
    o = uneven[0]
    words = {"iterable-dataset-length": "the DataLoader fetched more samples than the IterableDataset's length said",
             "join": "torch's Join reported a rank that ran out of inputs",
             "note": "the log's own note says the ranks had different numbers of batches"}.get(str(o.facts.get("kind")), "uneven inputs")
    return Judged(True, [f"{words} (line {o.line})"], (o.text,))


def _timeout_or_hang(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    return Judged(observations.has(Symptom.COLLECTIVE_TIMEOUT) or run.stop.kind.is_hang, [])


def _no_root_error(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    own = [f for f in findings if f.is_error and f.role == "root-cause" and f.reported_by != "launcher"]
    return Judged(not own, [])


def _timeout_differential(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    """Always holds: what the timed-out collective was, and which of the usual causes that makes likelier."""
    t = min(_first_timeouts(observations).values(), key=lambda o: (o.source, o.line), default=None)
    if t is None:
        return Judged(True, [])
    op, numel, seq = t.facts.get("op_type"), t.facts.get("numel_in"), t.facts.get("seq")
    what = " ".join(x for x in (str(op) if op else "", f"SeqNum {seq}" if seq is not None else "",
                                f"NumelIn {numel}" if numel is not None else "") if x)
    missing = t.facts.get("missing_ranks")
    named = [f"monitored_barrier names rank(s) {missing} as the one(s) that never arrived (line {t.line}): read what they were doing"] \
        if missing else []
    if isinstance(seq, int) and seq <= EARLY_SEQ:
        hint = "one of the group's first collectives, so a rank still starting up or preparing data is likeliest"
    elif op in ("BARRIER", "BROADCAST") or numel == 1:
        hint = ("a barrier, a broadcast or a one-element all-reduce (a flag or a metric) comes from code around the training step: "
                "work only rank 0 does (evaluation, saving, logging) or a rank-dependent branch is likelier than uneven batches")
    elif isinstance(numel, int) and numel > 1:
        hint = ("a tensor-sized collective inside the steps (gradients, parameters): ranks with different numbers of batches or a "
                "data-dependent forward are likelier than rank-0 work")
    else:
        return Judged(True, named + ([f"the collective that timed out was {what}"] if what else []) + _where_the_ranks_were(t, observations))
    return Judged(True, named + [f"the collective that timed out was {what or 'at line ' + str(t.line)}: {hint}"] + _where_the_ranks_were(t, observations))


def _where_the_ranks_were(t: Observation, observations: Observations) -> list[str]:
    """What the log shows of the ranks' progress at the timeout: the last step each rank printed, and
    a training bar at the last step of its epoch."""
    notes: list[str] = []
    steps = {rank: o for (source, rank), o in observations.last_steps.items() if source == t.source and o.line < t.line}
    # only steps printed shortly before the timeout: past the scan's per-symptom cap a rank's later steps are not matched
    if len(steps) >= 2 and all(t.line - o.line <= STEPS_NEAR_TIMEOUT_LINES for o in steps.values()):
        at = {rank: (o.facts.get("epoch", 0), o.facts.get("step", 0)) for rank, o in steps.items()}
        if len(set(at.values())) > 1:
            behind = sorted(r for r, s in at.items() if s == min(at.values()))
            listed = ", ".join(f"rank {r} step {s[1]}" + (f" of epoch {s[0]}" if "epoch" in steps[r].facts else "") for r, s in sorted(at.items()))
            notes.append(f"the last step each rank printed before the timeout differs ({listed}): rank(s) "
                         f"{', '.join(map(str, behind))} ran fewer batches (uneven inputs) or are stuck or busy in the next step")
    bars = [b for b in observations.of(Symptom.PROGRESS_BAR) if b.source == t.source and b.line < t.line]
    if bars:
        bar = max(bars, key=lambda b: b.line)
        done, total = bar.facts.get("done"), bar.facts.get("total")
        if isinstance(done, int) and isinstance(total, int) and total > 1 and total - 1 <= done <= total:
            notes.append(f"the progress bar stood at {done}/{total} (line {bar.line}): the timeout came at the last step of the "
                         "epoch, where ranks with different numbers of batches part ways")
    return notes


_TIMEOUT_CONDITIONS = {
    "timeout-differential": _timeout_differential,
    "preparation-before-timeout": _preparation_before_timeout,
    "long-step-before-timeout": _long_step_before_timeout,
    "failed-in-preparation-barrier": _failed_in_preparation_barrier,
    "work-before-timeout": _work_before_timeout,
    "uneven-stop": _uneven_stop,
    "timeout-or-hang": _timeout_or_hang,
    "no-root-error": _no_root_error,
}


def _to_context(findings: list[Finding], which, note: str) -> None:
    """The root-cause errors ``which`` picks are what the cause explains: context, with the note why."""
    for f in findings:
        if f.is_error and f.role == "root-cause" and which(f):
            f.role = "context"
            f.notes.append(note)


def _covers(finding: Finding, lines: set[tuple[str, int]]) -> bool:
    """The finding was raised on one of these lines, or its report (a traceback) spans one."""
    first, last = finding.lines
    return any(source == finding.source and (line == finding.line or first <= line <= last) for source, line in lines)


def _named_already(signatures: list[str], seen: list[Observation], findings: list[Finding]) -> bool:
    """A signature that names this cause (or a more specific form of it) fired: it would be said
    twice, and less precisely."""
    if not signatures:
        return False
    # in any input: a Flight Recorder dump or another rank's log may be where the more specific finding was made
    return any(f.is_error and f.signature in signatures for f in findings)


def _distinct_lines(seen: list[Observation]) -> list[Observation]:
    out: list[Observation] = []
    keys: set[tuple[str, int]] = set()
    for obs in sorted(seen, key=lambda o: (o.source, o.line)):
        if (obs.source, obs.line) not in keys:
            keys.add((obs.source, obs.line))
            out.append(obs)
    return out


__all__ = ["raise_causes"]
