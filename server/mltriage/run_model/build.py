"""Build the run model from the scan: its observations, the run facts and the findings' levels.

How the run stopped is decided here and only here. A stop is a hang when the library's watchdog
fired, when the user wrote so, when somebody dumped the live process's stacks, or when the log
simply ends where a run waits (NCCL's channel set-up, a benchmark's results header, a progress bar
at zero); it is an error when an error line ended it, a clean end when it said it finished.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mltriage.engine.run_facts import FINISHED_LINE, NVLINK_GPU, PCIE_GPU, RunFacts, TailLine
from mltriage.lazy_pattern import lazy
from mltriage.masking import clip
from mltriage.model import Finding
from mltriage.run_model.model import (Dump, Fact, package_key, Framework, Gpus, Interconnect, LastLine, Phase, PhaseMark, RunModel, Silence,
                                      Stop, StopKind)
from mltriage.run_model.network import build_network
from mltriage.symptoms.observe import Observation, Observations, Waits
from mltriage.symptoms.vocabulary import Precision, Symptom, Transport

# (tail lines are at most 4 KiB; every pattern here is linear on them)
_QUOTE = lazy(re.compile, r"^(?:\s*>)+\s?")  # a log pasted as a quote
_NCCL_SETUP = lazy(re.compile,
    r"NCCL INFO (?:Channel \d+|[^\n]{0,400}\bvia (?:P2P|SHM|NET|direct)|Connected all (?:rings|trees)|[^\n]{0,400}Init COMPLETE|Setting affinity|"
    r"nranks \d+|Trees|threadThresholds|Ring \d+|\d+ coll channels|[^\n]{0,400}P2P Chunksize|CC Off|comm 0x)"
)
# any other NCCL line before the first collective is set-up too (bootstrap, plugins, the version); teardown is not
# NCCL's own debug lines (src/debug.cc): INFO, and with NCCL_DEBUG=TRACE its API calls ("NCCL CALL ncclGetUniqueId(...)",
# 2.13.4+) and TRACE lines; a WARN is an error's, never a set-up line
_NCCL_ANY = lazy(re.compile, r"NCCL (?:INFO|CALL|TRACE) |^NCCL version \d")
_NCCL_TEARDOWN = lazy(re.compile, r"Destroy COMPLETE|- Abort|Connection closed|Closing \w{0,12} ?plugin|comm 0x[0-9a-f]{1,16} [^\n]{0,200}(?:destroy|finalize)", re.IGNORECASE)
# nccl-tests' column header; p2pBandwidthLatencyTest's matrix titles ("Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)",
# "P2P=Enabled Latency (P2P Writes) Matrix (us)") and their column rows ("   D\\D     0      1", "   GPU     0      1")
_BENCH_HEADER = lazy(re.compile, r"\b(?:busbw|algbw)\b|\(B\)\s+\(elements\)|\bout-of-place\b|\bMatrix \((?:GB/s|us)\)|^\s*(?:D\\D|GPU|CPU)(?:\s+\d{1,3})+\s*$")
# nccl-tests' data types (1.x: char/int; 2.x: int8 ... fp8)
_BENCH_TYPES = r"(?:float|half|bfloat16|double|char|int|int8|uint8|int32|uint32|int64|uint64|fp8\w*)"
_BENCH_ROW = lazy(re.compile, r"^\s*(?:#\s*)?\d+\s+\d+\s+" + _BENCH_TYPES + r"\s"
                        r"|^\s*\d{1,3}(?:\s+\d{1,7}\.\d{1,3})+\s*$")  # a result row; a matrix row (device, then numbers)
# nccl-tests prints a row's size, count, type, op and root before it runs that size (v2.13.9 src/common.cu:
# PRINT("%12li  %12li  %8s  %6s  %6s", ...) then BenchTime twice, then "\n"; v2.0.0 src/all_gather.cu "%12li  %12li  %6s",
# all_reduce.cu "%12li  %12li  %6s  %6s"): the row's start alone is a collective in flight
_BENCH_ROW_OPEN = lazy(re.compile, r"^\s*\d+\s+\d+\s+" + _BENCH_TYPES + r"(?:\s+[a-z]\w{0,8})?(?:\s+-?\d+)?\s*$")
_PROGRESS_ZERO = lazy(re.compile, r"(?:^|[\s:])0%\s{0,4}\||\s0/\d{1,12}\s{0,4}\[")

_PHASE_OF = {
    Symptom.COMM_INIT_STARTED: Phase.COMM_SETUP,
    Symptom.CHANNELS_SET_UP: Phase.CHANNELS,
    Symptom.COMM_INIT_COMPLETE: Phase.COMM_READY,
    Symptom.COLLECTIVE_RESULT: Phase.STEADY,
}


_DIST_VERSION = lazy(re.compile, r"^(?P<package>[A-Za-z][\w.]{0,100}(?:-[A-Za-z][\w.]{0,100})*)-(?P<version>\d[\w.+!]{0,60})$")


def installed_versions(observations: Observations) -> dict[str, tuple[str, str, Observation]]:
    """The installed versions the log states (pip freeze, collect_env, pip install's own lines), the
    first per package: package key -> (name as written, version, the observation)."""
    out: dict[str, tuple[str, str, Observation]] = {}
    for obs in observations.of(Symptom.PACKAGE_VERSION):
        pairs: list[tuple[str, str]] = []
        if isinstance(obs.facts.get("installed"), str):
            for item in str(obs.facts["installed"]).split()[:400]:
                m = _DIST_VERSION.match(item)
                if m:
                    pairs.append((m.group("package"), m.group("version")))
        elif obs.facts.get("package") and obs.facts.get("version"):
            pairs.append((str(obs.facts["package"]), str(obs.facts["version"])))
        for name, version in pairs:
            out.setdefault(package_key(name), (name, version, obs))
    return out


def _packages(observations: Observations) -> dict[str, Fact]:
    return {key: Fact(f"{name} {version}", obs.line, obs.text)
            for key, (name, version, obs) in installed_versions(observations).items()}


@dataclass
class Stall:
    kind: Silence
    source: str
    last: TailLine
    where: str  # words: where the log stops
    phase: Phase | None  # None: the last phase the input reached


def build_run_model(observations: Observations, run: RunFacts, findings: list[Finding], ranks_seen: set[int],
                    pasted_heads: list[str] = ()) -> RunModel:
    """``pasted_heads``: the heads of the inputs that may hold a pasted ``nvidia-smi topo -m`` or
    p2pBandwidthLatencyTest output (engine.attach.TopologyHeads)."""
    observations.finish()
    model = RunModel()
    _frameworks(model, observations, run)
    _phases(model, observations, run)
    _gpus(model, observations, run, ranks_seen)
    model.ranks = sorted(ranks_seen)
    _pasted_topology(model, pasted_heads)
    for obs in observations.of(Symptom.CHANNELS_SET_UP):
        transport = obs.facts.get("transport")
        if isinstance(transport, Transport):
            model.transports.add(transport)
    for obs in observations.of(Symptom.ENV_SET):
        name, value = obs.facts.get("name"), obs.facts.get("value")
        if isinstance(name, str) and isinstance(value, str):
            model.env.setdefault(name, value)
    if "disable_custom_all_reduce" in model.env:
        model.custom_allreduce = model.env["disable_custom_all_reduce"] != "True"
    if observations.has(Symptom.CUSTOM_ALLREDUCE):
        model.custom_allreduce = True
    if run.has("custom_allreduce_off"):
        model.custom_allreduce = False
    model.iommu_mentioned = run.has("iommu") or observations.has(Symptom.IOMMU_FAULT)
    model.packages = _packages(observations)
    model.pcie_evidence = _pcie_evidence(model, observations, run)
    model.network = build_network(observations)
    _precision(model, observations, run)
    model.stop = _stop(model, observations, run, findings)
    model.last_lines = _last_lines(run)
    model.stopped_in_jit_build = _stopped_in_jit_build(model.stop, observations, run)
    seen: set[tuple] = set()
    for o in observations.of(Symptom.STACK_DUMP):  # faulthandler's "Timeout" line and its thread line name one dump
        key = (o.source, o.rank, o.facts.get("at"))
        if "waiting_in" in o.facts and key not in seen and len(model.dumps) < 8:
            seen.add(key)
            model.dumps.append(Dump(o.source, o.line, o.rank, str(o.facts["waiting_in"]), str(o.facts.get("at", ""))))
    return model


def _last_lines(run: RunFacts) -> list[LastLine]:
    out: list[LastLine] = []
    for source, tail in run.tails.items():
        last: dict[int | None, TailLine] = {}
        for t in meaningful(tail):
            last[t.rank] = t
        for rank, t in sorted(last.items(), key=lambda kv: (kv[0] is None, kv[0] or 0)):
            out.append(LastLine(rank, source, t.line, clip(t.message, 160)))
        if len(out) >= 8:
            break
    return out[:8]


def _frameworks(model: RunModel, observations: Observations, run: RunFacts) -> None:
    first = observations.first(Symptom.COMM_INIT_STARTED)
    for obs in observations.of(Symptom.COMM_INIT_STARTED):
        version = obs.facts.get("nccl_version")
        if isinstance(version, str):
            model.nccl_version = model.nccl_version or version
            if "NCCL version" in obs.text:  # the library's own banner (a framework's copy, vLLM's pynccl, may differ on purpose)
                model.nccl_versions.setdefault(version, Fact(f"NCCL {version} ({obs.source})", obs.line, obs.text))
    if first is not None or observations.has(Symptom.CHANNELS_SET_UP):
        model.frameworks.add(Framework.NCCL)
    if run.has("bench_started"):
        model.frameworks.add(Framework.NCCL_TESTS)
    if observations.matrix_texts or observations.has(Symptom.P2P_UNAVAILABLE) and any(
            "Access Peer" in o.text or "Peer access from" in o.text for o in observations.of(Symptom.P2P_UNAVAILABLE)):
        model.frameworks.add(Framework.CUDA_SAMPLES)
    for obs in observations.of(Symptom.P2P_UNAVAILABLE) + observations.of(Symptom.CUSTOM_ALLREDUCE) + observations.of(
            Symptom.PEER_ACCESS_UNSUPPORTED):
        if "TensorRT-LLM" in obs.text or "tensorrt_llm" in obs.text or "customAllReduce" in obs.text:
            model.frameworks.add(Framework.TENSORRT_LLM)
        elif "vllm" in obs.text.lower() or "Custom allreduce" in obs.text or "CustomAllreduce" in obs.text:
            model.frameworks.add(Framework.VLLM)
        elif "sglang" in obs.text.lower():
            model.frameworks.add(Framework.SGLANG)
    if any("vLLM" in o.text for o in observations.of(Symptom.COMM_INIT_STARTED)):
        model.frameworks.add(Framework.VLLM)
    for obs in observations.of(Symptom.FRAMEWORK_SEEN):
        named = obs.facts.get("framework")
        if isinstance(named, str) and named in Framework._value2member_map_:
            model.frameworks.add(Framework(named))
    if run.command is not None:
        words = run.command.text
        if "vllm" in words:
            model.frameworks.add(Framework.VLLM)
        if "torchrun" in words or "torch.distributed" in words:
            model.frameworks.add(Framework.TORCH_DISTRIBUTED)
        if "deepspeed" in words:
            model.frameworks.add(Framework.DEEPSPEED)


def _phases(model: RunModel, observations: Observations, run: RunFacts) -> None:
    for symptom, phase in _PHASE_OF.items():
        for obs in observations.of(symptom):  # each phase's first line (by input, then line)
            if phase not in model.reached or (obs.source, obs.line) < (model.reached[phase].source, model.reached[phase].line):
                model.reached[phase] = PhaseMark(phase, obs.source, obs.line, obs.text)
    if Phase.STEADY in model.reached:
        model.reached.setdefault(Phase.FIRST_COLLECTIVE, model.reached[Phase.STEADY])
    if run.finished:
        (source, _), mark = min(run.finished.items(), key=lambda kv: (kv[1].source, kv[1].line))
        model.reached[Phase.FINISH] = PhaseMark(Phase.FINISH, mark.source, mark.line, mark.text)


def _gpus(model: RunModel, observations: Observations, run: RunFacts, ranks_seen: set[int]) -> None:
    gpus = Gpus()
    counts = [len(ranks_seen)]
    for obs in observations.of(Symptom.COMM_INIT_STARTED):
        n = obs.facts.get("nranks")
        if isinstance(n, int):
            counts.append(n)
    # a channel joins two ranks: the ranks its lines name are that many processes, one GPU each
    channel_ranks = {r for o in observations.of(Symptom.CHANNELS_SET_UP) for r in (o.facts.get("from_rank"), o.facts.get("to_rank"))
                     if isinstance(r, int)}
    counts.append(len(channel_ranks))
    devices = {t.device for t in observations.tensors if t.device is not None}
    for symptom in (Symptom.P2P_UNAVAILABLE, Symptom.WRONG_VALUES, Symptom.DEVICE_LISTED):
        for obs in observations.of(symptom):
            for key in ("device", "peer_device", "from_device"):
                if isinstance(obs.facts.get(key), int):
                    devices.add(obs.facts[key])  # type: ignore[arg-type]
    counts.append(len(devices))
    if observations.topology is not None:
        counts.append(observations.topology.gpus)
    described = observations.of(Symptom.GPUS_DESCRIBED)
    counts += [o.facts["count"] for o in described if isinstance(o.facts.get("count"), int)]  # type: ignore[misc]
    # the run's own settings: a tensor-parallel size or a launcher's process count is that many GPUs (one per process)
    counts += [o.facts["count"] for o in observations.of(Symptom.PARALLEL_SIZE) if isinstance(o.facts.get("count"), int)]  # type: ignore[misc]
    gpus.count = max(counts)
    described_nvlink = [o for o in described if NVLINK_GPU.search(str(o.facts.get("model", "")))]
    described_pcie = [o for o in described if PCIE_GPU.search(str(o.facts.get("model", "")))]
    absent = observations.first(Symptom.NVLINK_ABSENT)
    if absent is not None:  # "no NVLink" names NVLink too: the negation decides
        gpus.interconnect = Interconnect.PCIE
        gpus.evidence.append(PhaseMark(Phase.LAUNCH, absent.source, absent.line, absent.text))
    elif run.nvlink_models or run.has("nvlink") or described_nvlink:
        gpus.interconnect = Interconnect.NVLINK
        mark = next(iter(run.nvlink_models.values()), None) or run.marks.get("nvlink")
        if mark is not None:
            gpus.evidence.append(PhaseMark(Phase.LAUNCH, mark.source, mark.line, mark.text))
        elif described_nvlink:
            gpus.evidence.append(PhaseMark(Phase.LAUNCH, described_nvlink[0].source, described_nvlink[0].line, described_nvlink[0].text))
    elif run.pcie_models or described_pcie:
        gpus.interconnect = Interconnect.PCIE
        for mark in list(run.pcie_models.values())[:2]:
            gpus.evidence.append(PhaseMark(Phase.LAUNCH, mark.source, mark.line, mark.text))
    gpus.models = sorted({*run.pcie_models, *run.nvlink_models, *(str(o.facts["model"]) for o in described if "model" in o.facts)})
    model.gpus = gpus


# GPUs before Ampere (compute capability < 8.0) have no bf16: runs on them use fp16 or fp32
_NO_BF16 = lazy(re.compile, r"\b(?:Tesla\s)?(?:V100|P100|P40|K80|M60|M40|T4)\b|\bTITAN\s?(?:V|Xp?|RTX)\b|\b(?:GTX\s?)?10[5-8]0(?:\s?Ti)?\b"
                      r"|\bGTX\s?16[5-6]0\b|\b(?:RTX\s?)?20[6-8]0(?:\s?(?:Ti|SUPER|Super))?\b|\bQuadro\s(?:RTX\s?\d{4}|P\d{3,4}|GV100)\b")


def _precision(model: RunModel, observations: Observations, run: RunFacts) -> None:
    """The precision the run computes in, from what its frameworks print or its command asks; and the
    GPUs it names that have no bf16."""
    first: dict[Precision, Observation] = {}
    for obs in observations.of(Symptom.PRECISION_SET):
        value = obs.facts.get("precision")
        if isinstance(value, Precision) and value not in first:
            first[value] = obs
    for value, obs in first.items():
        model.precision_evidence.append(Fact(f"the run computes in {value.value}", obs.line, obs.text))
    half = {p for p in first if p is not Precision.FP32}
    if len(half) == 1:  # fp32 beside fp16 is AMP's master weights; fp16 beside bf16 says nothing certain
        model.precision = next(iter(half))
    elif not half and first:
        model.precision = Precision.FP32
    texts = [(m.line, m.text) for m in (*run.pcie_models.values(), *run.nvlink_models.values())]
    texts += [(o.line, str(o.facts.get("model", ""))) for o in observations.of(Symptom.GPUS_DESCRIBED)]
    seen: set[str] = set()
    for line, text in texts:
        m = _NO_BF16.search(text)
        if m and m.group(0) not in seen and len(seen) < 4:
            seen.add(m.group(0))
            model.without_bf16.append(Fact(f"the {m.group(0)} has no bf16 (compute capability below 8.0): runs on it use fp16", line, text))


def _pasted_topology(model: RunModel, heads: list[str]) -> None:
    """A pasted ``nvidia-smi topo -m`` says how the GPUs are linked, better than model names do."""
    if not heads:
        return
    from mltriage.probe.pasted import parse_pasted_matrices

    for text in heads:
        topo = parse_pasted_matrices(text)
        if topo is None or not topo.links:
            continue
        model.gpus.count = max(model.gpus.count, topo.gpus)
        nvlink, pcie = topo.nvlink_pairs(), topo.pcie_pairs()
        if nvlink and not pcie:
            model.gpus.interconnect = Interconnect.NVLINK
        elif pcie and not nvlink:
            model.gpus.interconnect = Interconnect.PCIE
        else:
            continue  # some pairs on NVLink, some not: the model names or transports decide
        pair, link = next(iter((nvlink or pcie).items()))
        model.gpus.evidence.insert(0, PhaseMark(Phase.LAUNCH, "<pasted topology>", 0,
                                                f"nvidia-smi topo -m: GPU{pair[0]}<->GPU{pair[1]} {link}"))
        return


def _pcie_evidence(model: RunModel, observations: Observations, run: RunFacts) -> list[Fact]:
    """Facts that put GPU-to-GPU traffic on PCIe inside one node (where P2P can be broken): NCCL's
    P2P or SHM transports, vLLM turning custom all-reduce off, PCIe-only GPU models or a pasted
    topology of PCIe links. None where the GPUs are NVLink-linked."""
    if model.gpus.interconnect is Interconnect.NVLINK:
        return []
    facts: list[Fact] = []
    absent = observations.first(Symptom.NVLINK_ABSENT)
    if absent is not None:
        facts.append(Fact("the log says the GPUs have no NVLink: their traffic crosses PCIe", absent.line, absent.text))
    channels = observations.of(Symptom.CHANNELS_SET_UP)
    for transport, words in ((Transport.P2P, "NCCL moves data between GPUs with direct peer-to-peer (P2P) copies"),
                             (Transport.SHM, "NCCL moves data between these GPUs through host shared memory (no usable P2P between them)")):
        first = next((o for o in channels if o.facts.get("transport") is transport), None)
        if first is not None:
            facts.append(Fact(words, first.line, first.text))
    if run.has("custom_allreduce_off"):
        mark = run.marks["custom_allreduce_off"]
        facts.append(Fact("vLLM turned custom all-reduce off: it found no working GPU P2P", mark.line, mark.text))
    by_line: dict[int, list[str]] = {}
    for name, mark in run.pcie_models.items():
        by_line.setdefault(mark.line, []).append(name)
    for line, names in list(by_line.items())[:2]:
        facts.append(Fact(f"the GPUs are {' '.join(names)} cards, which talk over PCIe", line, run.pcie_models[names[0]].text))
    if not by_line:
        for obs in observations.of(Symptom.GPUS_DESCRIBED):
            model_name = str(obs.facts.get("model", ""))
            if PCIE_GPU.search(model_name):
                facts.append(Fact(f"the GPUs are {model_name} cards, which talk over PCIe", obs.line, obs.text))
                break
    pasted = next((m for m in model.gpus.evidence if m.line == 0), None)
    if pasted is not None and model.gpus.interconnect is Interconnect.PCIE:
        facts.append(Fact(f"the pasted topology links the GPUs over PCIe ({pasted.text})", 0, pasted.text))
    return facts


# -- how the run stopped ----------------------------------------------------------------------------


def _stop(model: RunModel, observations: Observations, run: RunFacts, findings: list[Finding]) -> Stop:
    timeout = observations.first(Symptom.COLLECTIVE_TIMEOUT)
    if timeout is not None:
        phase = Phase.STEADY if Phase.STEADY in model.reached else Phase.FIRST_COLLECTIVE
        return _at(StopKind.WATCHDOG, phase, timeout, "in a collective the watchdog timed out")
    if any(f.is_error for f in findings):
        first = next(f for f in findings if f.is_error)
        return Stop(StopKind.ERROR, _phase_before(model, first.source, first.line), first.source, first.line,
                    clip(first.evidence[-1] if first.evidence else "", 200), "at an error")
    interrupt = observations.first(Symptom.USER_INTERRUPT)
    if interrupt is not None:
        return _at(StopKind.HANG_NOTED, _phase_before(model, interrupt.source, interrupt.line), interrupt,
                   "where the user interrupted it (Ctrl-C): it was not ending on its own")
    setup = {(o.source, o.line) for symptom in _SETUP_SYMPTOMS for o in observations.of(symptom)}
    stall = find_stall(run, setup)
    noted = observations.first(Symptom.HANG_NOTED)
    if noted is not None:
        # a report's opening words ("it hangs with 2 GPUs") describe the run the log then shows: it hangs
        # where its input ends, not where the note stands
        if stall is not None and stall.source == noted.source and stall.last.line > noted.line:
            return _at_stall(model, stall, StopKind.HANG_NOTED, "; a note above says it hangs")
        tail = meaningful(run.tails.get(noted.source, []))
        if tail and tail[-1].line > noted.line:
            return Stop(StopKind.HANG_NOTED, _phase_before(model, noted.source, tail[-1].line), noted.source, tail[-1].line,
                        clip(tail[-1].message, 200), "where the log ends (a note above says it hangs)")
        return _at(StopKind.HANG_NOTED, _phase_before(model, noted.source, noted.line), noted,
                   "where the log's own note says it hangs")
    dump = observations.first(Symptom.STACK_DUMP)
    if dump is not None:
        return _at_dump(model, observations, dump)
    waiting = observations.of(Symptom.PEERS_WAITING)
    if waiting and _at_the_end(waiting[-1], run):
        # the framework's own words, repeated until the log ends: its workers waited for each other and never got on
        return _at(StopKind.HANG_NOTED, _phase_before(model, waiting[-1].source, waiting[-1].line), waiting[-1],
                   f"where its workers had waited for each other for {waiting[-1].facts.get('seconds', '?')} s and more")
    if stall is not None:
        return _at_stall(model, stall, StopKind.HANG_SILENT)
    if Phase.FINISH in model.reached or run.has("bench_finished"):
        return Stop(StopKind.CLEAN_END, Phase.FINISH)
    return Stop(StopKind.UNKNOWN, model.last_phase)


JIT_BUILD_REACH = 8  # lines from a JIT build's line to a hang's stop, where the tail no longer shows what lay between


def _stopped_in_jit_build(stop: Stop, observations: Observations, run: RunFacts) -> Fact | None:
    """The JIT extension build the run stopped in: the last build line of the input it stopped in,
    with only the stop after it (a Ctrl-C, a user's note, a dump), or the last thing its input printed."""
    started = observations.of(Symptom.JIT_BUILD_STARTED)
    if not started:
        return None
    last = started[-1]
    if stop.kind.is_hang and stop.source == last.source and stop.line is not None and stop.line >= last.line:
        tail = meaningful(run.tails.get(last.source, []))
        if tail and tail[0].line <= last.line:  # the input's tail holds the build line: nothing may come between it and the stop
            right_after = not any(last.line < t.line < stop.line for t in tail)
        else:  # a long report after the stop pushed both out of the tail
            right_after = stop.line - last.line <= JIT_BUILD_REACH
        if right_after:
            return Fact(f"the run stopped {stop.where} right after a JIT extension build began", last.line, last.text)
    if stop.kind in (StopKind.UNKNOWN, StopKind.HANG_SILENT) and _at_the_end(last, run):
        return Fact("the log ends right after a JIT extension build began", last.line, last.text)
    return None


def _at_the_end(obs: Observation, run: RunFacts) -> bool:
    """The observation is among the last lines its input printed (nothing but more of the same after it)."""
    lines = meaningful(run.tails.get(obs.source, []))
    return not lines or obs.line >= lines[-1].line


# what says a run went on after its set-up: a step, an epoch, a loss, a progress bar, a result
_PROGRESS = lazy(re.compile, r"\b(?:step|epoch|iter(?:ation)?|loss|batch|it/s|s/it|tokens?/s|throughput|finished|done|complete[ds]?|ready|loaded|"
                       r"started|success\w*|took|secs?|seconds)\b|\d%\s{0,4}\||\d/\d{1,12} \[", re.IGNORECASE)
_INFO_LEVEL = lazy(re.compile, r"^(?:[ID]\d{4} |[^\n]{0,80}?\b(?:INFO|DEBUG)\b)")


def _setup_then_chatter(recent: list[TailLine], source: str, setup: set[tuple[str, int]]) -> bool:
    """A framework's set-up line among the last lines, and after it only INFO-level lines that show no progress
    (TensorFlow logs where each reduce goes right after its first NCCL all-reduce; vLLM its back-end choices)."""
    at = next((i for i in range(len(recent) - 1, -1, -1) if (source, recent[i].line) in setup), None)
    if at is None or at == len(recent) - 1:
        return False
    after = recent[at + 1:]
    return all(_INFO_LEVEL.search(t.text) and not _PROGRESS.search(t.message) for t in after)


def _at_stall(model: RunModel, stall: Stall, kind: StopKind, note: str = "") -> Stop:
    """The stop where the log goes silent, in the phase it had reached, in words: NCCL's set-up lines say
    "channels" only once it connected some."""
    phase = stall.phase if stall.phase is not None else _phase_before(model, stall.source, stall.last.line)
    where = stall.where
    if stall.kind is Silence.NCCL_SETUP and phase is Phase.COMM_SETUP and _NCCL_ANY.search(stall.last.message):
        where = "while NCCL was setting up its communicator, before it connected any channel"
    return Stop(kind, phase, stall.source, stall.last.line, clip(stall.last.message, 200), where + note, stall.kind)


def _at_dump(model: RunModel, observations: Observations, first: Observation) -> Stop:
    """A dump of a live process: in the phase the log reached, or later where a dumped thread's own frames wait in an
    NCCL set-up call or a collective (a dump of a hung server says where it hangs, whatever the log before it shows).
    A torch.distributed call alone names no backend: it places the stop only past an NCCL communicator's Init COMPLETE."""
    phase = _phase_before(model, first.source, first.line)
    dumps = [o for o in observations.of(Symptom.STACK_DUMP) if "waits_in" in o.facts]
    # NCCL's own frames (py-spy --native) say more than the Python call above them
    waiting = next((o for o in dumps if o.facts["waits_in"] is not Waits.COLLECTIVE), dumps[0] if dumps else None)
    if waiting is None:
        return _at(StopKind.HANG_DUMP, phase, first, "with a stack dump of the live process (it was stuck)")
    waits = waiting.facts["waits_in"]
    if waits in (Waits.NCCL_SETUP, Waits.NCCL_BOOTSTRAP):
        words = "NCCL's bootstrap (waiting for the other ranks)" if waits is Waits.NCCL_BOOTSTRAP else "an NCCL communicator's set-up"
        return _at(StopKind.HANG_DUMP, max(phase, Phase.COMM_SETUP), waiting, f"with a stack dump of the live process stuck in {words}")
    # (a Python collective before NCCL said Init COMPLETE may still be creating its communicator: the log's phase stands)
    if waits is Waits.NCCL_COLLECTIVE or Phase.COMM_READY in model.reached:
        phase = max(phase, Phase.STEADY if Phase.STEADY in model.reached else Phase.FIRST_COLLECTIVE)
    return _at(StopKind.HANG_DUMP, phase, waiting, "with a stack dump of the live process stuck in a collective")


def _at(kind: StopKind, phase: Phase, obs: Observation, where: str) -> Stop:
    return Stop(kind, phase, obs.source, obs.line, obs.text, where)


def _phase_before(model: RunModel, source: str, line: int) -> Phase:
    """The last phase this input reached before ``line``."""
    before = [p for p, m in model.reached.items() if m.source == source and m.line <= line]
    return max(before, default=max((p for p, m in model.reached.items() if m.source != source), default=Phase.LAUNCH))


def meaningful(tail: list[TailLine]) -> list[TailLine]:
    out = []
    for t in tail:
        message = _QUOTE.sub("", t.message).strip()
        if message and not re.fullmatch(r"[#=\-*\s]*|\S*[$#]\s*", message):
            out.append(TailLine(t.line, t.text, message, t.rank))
    return out


# p2pBandwidthLatencyTest's last matrix: "P2P=Enabled Latency Matrix (us)" (CUDA 8-10 samples, which print no closing
# note), "P2P=Enabled Latency (P2P Writes) Matrix (us)" / "(P2P Reads)" (cuda-samples 11+)
_FINAL_MATRIX = lazy(re.compile, r"P2P=Enabled Latency (?:\(P2P (?:Writes|Reads)\) )?Matrix \(us\)")


def _last_matrix_is_final(lines: list[TailLine]) -> bool:
    titles = [t for t in lines if "Matrix (" in t.message]
    return bool(titles) and bool(_FINAL_MATRIX.search(titles[-1].message))


_SETUP_SYMPTOMS = (Symptom.COMM_INIT_STARTED, Symptom.CHANNELS_SET_UP, Symptom.COMM_INIT_COMPLETE)


def find_stall(run: RunFacts, setup: set[tuple[str, int]] = frozenset()) -> Stall | None:
    """``setup``: the (source, line) of every line a framework or NCCL printed while setting up its communicators."""
    for source, tail in run.tails.items():
        lines = meaningful(tail)
        if not lines:
            continue
        last = lines[-1]
        if any(FINISHED_LINE.search(t.message) for t in lines[-3:]):
            continue  # it said it finished (what follows is teardown: plugins closing, handles freed)
        if run.has("bench_started") and not run.has("bench_finished"):
            if _BENCH_HEADER.search(last.message) or (len(lines) > 1 and _BENCH_HEADER.search(lines[-2].message)):
                return Stall(Silence.BENCHMARK_HEADER, source, last, "right after the benchmark printed a results header, "
                             "before its first row", Phase.FIRST_COLLECTIVE)
            rows = [t for t in lines if _BENCH_ROW.search(t.message) and not _BENCH_ROW_OPEN.search(t.message)]
            if _BENCH_ROW_OPEN.search(last.message):
                done = len(rows)
                return Stall(Silence.BENCHMARK_ROW_OPEN, source, last,
                             "in the benchmark's " + ("next size" if done else "first size")
                             + ": the row's size printed and its times never came", Phase.STEADY if done else Phase.FIRST_COLLECTIVE)
            if not rows:
                # no results header yet: from the log's view the run is still setting up (a paste cut here looks healthy too)
                return Stall(Silence.BENCHMARK_START, source, last, "before the benchmark printed any result", None)
            if rows[-1] is last and _last_matrix_is_final(lines):
                continue  # an older p2pBandwidthLatencyTest ends on its last matrix's rows, with no closing note
            if rows[-1] is last:
                # a larger size (or the next matrix) never finished; a paste of part of the table ends the same way
                return Stall(Silence.BENCHMARK_ROWS, source, last, "partway through the benchmark's table "
                             "(after a result row, with no summary)", None)
        if _PROGRESS_ZERO.search(last.message):
            return Stall(Silence.PROGRESS_ZERO, source, last, "with its progress bar still at zero", Phase.FIRST_COLLECTIVE)
        recent = lines[-3:]

        def in_setup(t: TailLine) -> bool:
            return (source, t.line) in setup or bool(
                _NCCL_SETUP.search(t.message) or _NCCL_ANY.search(t.message) and not _NCCL_TEARDOWN.search(t.message))

        # the last line is the framework's own "set-up starts" line, or the last three are all set-up, or a set-up
        # line is followed only by the same logger's chatter (INFO lines that show no progress)
        if (source, last.line) in setup or all(in_setup(t) for t in recent) or _setup_then_chatter(recent, source, setup):
            return Stall(Silence.NCCL_SETUP, source, last, "right after NCCL set up its communicator and channels" if _NCCL_ANY.search(last.message)
                         else "right after the framework began setting up its distributed communicators", None)
    return None
