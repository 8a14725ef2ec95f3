"""The run model's types. Every field is typed at capture; ``to_json`` writes them as they are."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import IntEnum, StrEnum

from mltriage.symptoms.vocabulary import Precision, Transport


class Phase(IntEnum):
    """Where a run can get to, in order: a stop is placed in the last one it reached."""

    LAUNCH = 0
    COMM_SETUP = 1  # a communicator is being created (NCCL version, bootstrap, ncclCommInitRank)
    CHANNELS = 2  # transports between GPUs chosen (via P2P / SHM / NET)
    COMM_READY = 3  # the communicator finished initialising (Init COMPLETE, Connected all rings)
    FIRST_COLLECTIVE = 4  # waiting for, or past, the first collective's result
    STEADY = 5  # steps or results repeating
    FINISH = 6  # the run said it finished

    @property
    def label(self) -> str:
        return self.name.lower().replace("_", "-")


class StopKind(StrEnum):
    ERROR = "error"  # an error line ended it
    WATCHDOG = "watchdog"  # a collective timed out (the library's own watchdog)
    HANG_NOTED = "hang-noted"  # the user wrote that it hangs
    HANG_DUMP = "hang-dump"  # a stack dump of a live process (py-spy, faulthandler)
    HANG_SILENT = "hang-silent"  # the log simply stops where a run waits (set-up, results header, progress at 0)
    CLEAN_END = "clean-end"  # it said it finished, or a benchmark printed its closing lines
    UNKNOWN = "unknown"

    @property
    def is_hang(self) -> bool:
        return self in (StopKind.WATCHDOG, StopKind.HANG_NOTED, StopKind.HANG_DUMP, StopKind.HANG_SILENT)


class Interconnect(StrEnum):
    PCIE = "pcie"
    NVLINK = "nvlink"
    UNKNOWN = "unknown"


class Framework(StrEnum):
    NCCL = "nccl"
    TORCH_DISTRIBUTED = "torch-distributed"
    VLLM = "vllm"
    TENSORRT_LLM = "tensorrt-llm"
    SGLANG = "sglang"
    DEEPSPEED = "deepspeed"
    NCCL_TESTS = "nccl-tests"
    CUDA_SAMPLES = "cuda-samples"


def package_key(name: str) -> str:
    """One key for a distribution and its import name (PEP 503 normalisation, '-' as '_'): unsloth-zoo is unsloth_zoo."""
    return re.sub(r"[-_.]+", "_", name).lower()


@dataclass(frozen=True, slots=True)
class PhaseMark:
    phase: Phase
    source: str
    line: int
    text: str


class Silence(StrEnum):
    """Where a log that simply ends stopped (a silent stop's kind)."""

    NCCL_SETUP = "nccl-setup"  # NCCL set-up lines, then nothing (a healthy paste can end so too)
    BENCHMARK_START = "benchmark-start"  # a benchmark's device list, no results header
    BENCHMARK_HEADER = "benchmark-header"  # the results header (or a matrix's title), no row under it
    BENCHMARK_ROWS = "benchmark-rows"  # result rows, then nothing: no summary (a paste of part of a table looks the same)
    BENCHMARK_ROW_OPEN = "benchmark-row-open"  # a row's size printed, its times never: that size's collective did not return
    PROGRESS_ZERO = "progress-zero"  # a progress bar at zero

    @property
    def could_be_a_cut(self) -> bool:
        """A pasted excerpt cut here looks the same as a run that hung here: what it suggests is a
        suspicion (a warning), not a verdict."""
        return self in (Silence.NCCL_SETUP, Silence.BENCHMARK_START, Silence.BENCHMARK_ROWS)


@dataclass(slots=True)
class Stop:
    kind: StopKind
    phase: Phase
    source: str | None = None
    line: int | None = None
    text: str = ""
    where: str = ""  # in words: "right after NCCL set up its channels"
    silence: Silence | None = None  # for a silent stop: where the log ended


@dataclass(frozen=True, slots=True)
class Fact:
    """A fact of the run in words, with the log line it comes from (line 0: not a line of the log)."""

    words: str
    line: int
    text: str

    def cited(self) -> str:
        return f"{self.words} (line {self.line})" if self.line else self.words


@dataclass(slots=True)
class Gpus:
    count: int = 0  # the most GPUs/ranks any line shows taking part (0: not known)
    models: list[str] = field(default_factory=list)
    interconnect: Interconnect = Interconnect.UNKNOWN
    evidence: list[PhaseMark] = field(default_factory=list)  # the lines naming models or the interconnect


@dataclass(frozen=True, slots=True)
class LastLine:
    """What one rank (or one input without ranks) printed last."""

    rank: int | None
    source: str
    line: int
    text: str


@dataclass(frozen=True, slots=True)
class Dump:
    """A stack dump of a live process (faulthandler, py-spy): where it was waiting."""

    source: str
    line: int
    rank: int | None
    waiting_in: str
    at: str  # file:line of the innermost frame


class IfaceKind(StrEnum):
    """What an interface NCCL or Gloo chose is, by its name and address: only a routable one reaches other nodes."""

    LOOPBACK = "loopback"  # lo, 127.0.0.0/8, ::1
    CONTAINER_BRIDGE = "container-bridge"  # docker0, veth*, br-*, cni0, Docker's default 172.17.0.0/16
    VIRTUAL = "virtual"  # a VM bridge, VPN or tunnel: virbr*, tailscale*, wg*, tun*, tap*, zt*
    LINK_LOCAL = "link-local"  # 169.254.0.0/16, fe80::/10: no route off the link
    ROUTABLE = "routable"

    @property
    def words(self) -> str:
        return {IfaceKind.LOOPBACK: "the loopback interface", IfaceKind.CONTAINER_BRIDGE: "a container bridge",
                IfaceKind.VIRTUAL: "a virtual (VM/VPN/tunnel) interface", IfaceKind.LINK_LOCAL: "a link-local address",
                IfaceKind.ROUTABLE: "a routable interface"}[self]


class NetTransport(StrEnum):
    """NCCL's transport between nodes."""

    SOCKET = "socket"
    IB = "ib"  # InfiniBand or RoCE verbs
    PLUGIN = "plugin"  # a net plugin (AWS Libfabric/EFA, FastSocket, ...)
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class ChosenInterface:
    """One interface NCCL said it uses: for its bootstrap, its socket transport, or IB's out-of-band socket."""

    role: str  # "Bootstrap", "NET/Socket", "NET" (NCCL 2.3), "IB-OOB", "Gloo" (its loopback fallback)
    name: str
    address: str
    kind: IfaceKind
    host: str | None  # the host of NCCL's "host:pid:tid" prefix, when the line has one
    source: str
    line: int
    text: str

    def cited(self) -> str:
        on = f" on {self.host}" if self.host else ""
        who = "Gloo" if self.role == "Gloo" else f"NCCL's {self.role}"
        return f"{who} uses {self.name}:{self.address}{on}, {self.kind.words} (line {self.line})"


@dataclass(slots=True)
class Network:
    """What the log says about the network the run met: chosen interfaces, hosts, nodes, transport, containers."""

    interfaces: list[ChosenInterface] = field(default_factory=list)  # at most 32
    hosts: dict[str, Fact] = field(default_factory=dict)  # distinct hosts in NCCL's "host:pid:tid" prefixes (first line each), at most 64
    nodes_said: Fact | None = None  # a launcher, a command line or the user says the run spans N > 1 nodes
    nodes: int = 0  # that N (0: not said)
    transport: NetTransport = NetTransport.UNKNOWN
    ib_absent: Fact | None = None  # NCCL found no IB/RoCE device
    containers: list[Fact] = field(default_factory=list)  # why we think ranks ran in containers (bridge addresses, container-id hosts)

    @property
    def multi_node(self) -> bool:
        return len(self.hosts) > 1 or self.nodes > 1

    def multi_node_evidence(self) -> list[Fact]:
        out: list[Fact] = []
        if len(self.hosts) > 1:
            first = list(self.hosts.values())[:4]
            out.append(Fact(f"{len(self.hosts)} hosts in NCCL's line prefixes ({', '.join(self.hosts)[:120]})", first[0].line, first[0].text))
            out += [Fact(f.words, f.line, f.text) for f in first[1:2]]
        if self.nodes_said is not None:
            out.append(self.nodes_said)
        return out

    def unusable(self) -> list[ChosenInterface]:
        return [i for i in self.interfaces if i.kind is not IfaceKind.ROUTABLE]

    def to_json(self) -> dict:
        return {"interfaces": [{"role": i.role, "name": i.name, "address": i.address, "kind": i.kind.value, "host": i.host,
                                "source": i.source, "line": i.line} for i in self.interfaces],
                "hosts": sorted(self.hosts), "nodes": self.nodes, "multi_node": self.multi_node, "transport": self.transport.value,
                "ib_absent": self.ib_absent is not None, "containers": [f.words for f in self.containers]}


@dataclass(slots=True)
class RunModel:
    frameworks: set[Framework] = field(default_factory=set)
    nccl_version: str | None = None
    # every NCCL release the log shows (first line of each): two of them in one job is a version skew
    nccl_versions: dict[str, Fact] = field(default_factory=dict)
    gpus: Gpus = field(default_factory=Gpus)
    transports: set[Transport] = field(default_factory=set)
    env: dict[str, str] = field(default_factory=dict)  # variables the run set, as the log reports them
    iommu_mentioned: bool = False
    custom_allreduce: bool | None = None  # vLLM / TRT-LLM custom all-reduce: on, off, or not said
    reached: dict[Phase, PhaseMark] = field(default_factory=dict)  # each phase's first line
    stop: Stop = field(default_factory=lambda: Stop(StopKind.UNKNOWN, Phase.LAUNCH))
    last_lines: list[LastLine] = field(default_factory=list)  # per rank, at most 8
    ranks: list[int] = field(default_factory=list)  # every rank the inputs show (prefixes, launcher logs), sorted
    # what puts GPU-to-GPU traffic on PCIe inside one node, where P2P can be broken (empty on NVLink)
    pcie_evidence: list[Fact] = field(default_factory=list)
    dumps: list[Dump] = field(default_factory=list)  # stack dumps that name where a process waited, at most 8
    # installed package versions the log states (pip freeze / install lines, collect_env), by normalised name
    packages: dict[str, Fact] = field(default_factory=dict)
    # the JIT extension build (torch cpp_extension, Megatron's fused kernels) the run stopped right after, if it did
    stopped_in_jit_build: Fact | None = None
    network: Network = field(default_factory=Network)
    # the numeric precision the run computes in (None: not said, or the log says both fp16 and bf16)
    precision: Precision | None = None
    precision_evidence: list[Fact] = field(default_factory=list)  # the first line stating each precision seen
    without_bf16: list[Fact] = field(default_factory=list)  # GPUs the log names that have no bf16 (compute capability < 8.0)

    @property
    def multi_gpu(self) -> bool:
        return self.gpus.count >= 2

    @property
    def last_phase(self) -> Phase:
        return max(self.reached, default=Phase.LAUNCH)

    def to_json(self) -> dict:
        return {
            "frameworks": sorted(self.frameworks),
            "nccl_version": self.nccl_version,
            "nccl_versions": sorted(self.nccl_versions),
            "gpus": {"count": self.gpus.count, "models": list(self.gpus.models), "interconnect": self.gpus.interconnect.value},
            "transports": sorted(t.value for t in self.transports),
            "env": dict(self.env),
            "iommu_mentioned": self.iommu_mentioned,
            "custom_allreduce": self.custom_allreduce,
            "phases_reached": [{"phase": p.label, "source": m.source, "line": m.line} for p, m in sorted(self.reached.items())],
            "precision": self.precision.value if self.precision else None,
            "gpus_without_bf16": [f.words for f in self.without_bf16],
            "packages": {name: fact.words for name, fact in sorted(self.packages.items())},
            "stopped_in_jit_build": {"line": self.stopped_in_jit_build.line, "text": self.stopped_in_jit_build.text}
            if self.stopped_in_jit_build else None,
            "dumps": [{"source": x.source, "line": x.line, "rank": x.rank, "waiting_in": x.waiting_in, "at": x.at} for x in self.dumps],
            "last_lines": [{"rank": x.rank, "source": x.source, "line": x.line} for x in self.last_lines],
            "ranks": list(self.ranks),
            "network": self.network.to_json(),
            "stop": {"kind": self.stop.kind.value, "phase": self.stop.phase.label, "source": self.stop.source,
                     "line": self.stop.line, "where": self.stop.where,
                     "silence": self.stop.silence.value if self.stop.silence else None},
        }
