"""What a whole log says about its run, beyond single failure lines.

The scanner records two things here while it reads: phrases that describe the run's set-up
(which NCCL transports the GPUs use, which GPU models, whether a benchmark started and finished,
whether the IOMMU spoke), and the last lines of every input. The run-level reasoning reads these
facts; nothing here decides anything.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field

from mltriage.engine import linear_regex
from mltriage.engine.prefixes import parse_prefixes
from mltriage.engine.reader import clean_line
from mltriage.lazy_pattern import lazy
from mltriage.masking import clip

TAIL_BYTES = 16 * 1024
TAIL_LINES = 40

# name -> literals (case-sensitive, fed to the same pre-filter as the signatures' triggers)
MARKERS: dict[str, tuple[str, ...]] = {
    "p2p_transport": ("via P2P/", "via P2P "),
    "shm_transport": ("via SHM/", "via direct shared memory"),
    "net_transport": ("via NET/",),
    "nvlink": ("SXM", "NVSwitch", "NVLink", "HGX"),
    "nccl_init_done": ("Init COMPLETE",),
    "nccl_version": ("NCCL version",),
    # nccl-tests (before 2.0 it printed "Rank  0 uses device  0"), and its results header, which a pasted table keeps
    # ("out-of-place" then spaces: NCCL 1.x test/single/*_test.cu and nccl-tests 2.x src/common.cu); CUDA's p2pBandwidthLatencyTest
    "bench_started": ("# Using devices", " uses device ", "out-of-place      ", "[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]"),
    # nccl-tests' summary; the CUDA samples' closing note (cuda-samples p2pBandwidthLatencyTest.cu: printf("\nNOTE: The CUDA
    # Samples are not meant for performance measurements. Results may vary when GPU Boost is enabled.\n"), every release)
    "bench_finished": ("Avg bus bandwidth", "Out of bounds values", "Samples are not meant for performance measurements"),
    "custom_allreduce_off": ("Custom allreduce is disabled",),
    "iommu": ("AMD-Vi", "DMAR:", "IO_PAGE_FAULT", "iommu"),
    # the command that started the run, as a shell prompt, `bash -x` or a launcher echoed it
    "launch": ("torchrun ", "torch.distributed.launch", "torch.distributed.run", "deepspeed ", "accelerate launch",
               "vllm serve", "mpirun ", "srun ", "_perf ", "python ", "python3 "),
    # a process saying it finished its work (training loops, Lightning, NCCL tearing its communicator down)
    "finished": ("training finished", "Training finished", "Training completed", "training completed", "finished training",
                 "Finished training", "Destroy COMPLETE", "stopped: `max_epochs=", "stopped: `max_steps="),
    "gpu_model": ("GeForce", "RTX", "Quadro", "TITAN", "Tesla", "PCIE", "PCIe", "Instinct", "Radeon", "NVIDIA A", "NVIDIA L", "NVIDIA H"),
}
MARKER_LITERALS = tuple(lit for lits in MARKERS.values() for lit in lits)
# A shell prompt or `+ ` (bash -x) then a launcher or interpreter: the line the user typed.
_COMMAND = linear_regex.compile(
    r"^\s*(?:[\w.@~:/()\[\] -]{0,120}?[$#%>]\s+|\+\s+|cmd = )"
    r"(?P<command>(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:\S*/)?(?:python3?(?:\.\d++)?|torchrun|deepspeed|accelerate|vllm|mpirun|srun|\w+_perf)\b[^\n]{0,600})$"
)
_MARKER_NAME = {lit: name for name, lits in MARKERS.items() for lit in lits}
PER_RANK_MARKERS = {"finished"}  # needed for every rank, never dropped
MAX_COMMAND_LINE = 2048  # a prompt, environment assignments and a command: a longer line is none
MAX_GPU_MODELS = 64  # GPU model names kept per run
MODEL_SEARCH_CHARS = 4096  # a line names its GPUs near its start (nvidia-smi, NCCL, torch)
SATURATED = 64  # after this many lines a marker says nothing new (NCCL prints a channel line per channel and peer)


# A line saying the work is done: the "finished" markers, and the same in other cases and words.
FINISHED_LINE = lazy(re.compile,
    "|".join(re.escape(lit) for lit in MARKERS["finished"])
    + r"|\b(?:training (?:completed|finished|done)|finished training|completed successfully|all done)\b",
    re.IGNORECASE,
)


def is_marker(literal: str) -> bool:
    return literal in _MARKER_NAME


# GPU families sold only as PCIe cards (no NVLink between them in the usual server), where
# peer-to-peer traffic crosses PCIe switches and root ports: ACS, IOMMU and driver matter.
PCIE_GPU = linear_regex.compile(
    r"GeForce|\bRTX\b|Quadro|TITAN|-PCIE|PCIe|\bTesla (?:K\d+|M\d+|P4|P40|T4)\b|\b(?:A2|A10G?|A16|A30|A40|L4|L40S?|T4|A[456]000)\b"
    r"|Instinct MI(?:50|60|100|210)\b|Radeon",
)
NVLINK_GPU = linear_regex.compile(r"SXM|HGX|\bH200\b|GH200|GB200|NVL\b")


@dataclass(slots=True)
class Mark:
    count: int
    source: str
    line: int
    text: str


@dataclass
class TailLine:
    line: int
    text: str  # cleaned line
    message: str  # launcher prefixes removed
    rank: int | None


@dataclass
class RunFacts:
    marks: dict[str, Mark] = field(default_factory=dict)
    pcie_models: dict[str, Mark] = field(default_factory=dict)  # PCIe-only GPU family -> first line naming it
    nvlink_models: dict[str, Mark] = field(default_factory=dict)
    tails: dict[str, list[TailLine]] = field(default_factory=dict)  # source -> its last lines
    finished: dict[tuple[str, int | None], Mark] = field(default_factory=dict)  # (source, rank) -> first "finished" line
    command: Mark | None = None  # the first launch command the log shows (text: the command itself)

    def note(self, name: str, source: str, line: int, text: str) -> None:
        mark = self.marks.get(name)
        if mark is None:
            self.marks[name] = Mark(1, source, line, clip(text, 400))
        else:
            mark.count += 1
        if name in ("gpu_model", "nvlink") and len(self.pcie_models) + len(self.nvlink_models) < MAX_GPU_MODELS:
            # a line may name a model thousands of times: the line is clipped once, the search stops at the cap
            models = self.nvlink_models if linear_regex.search(NVLINK_GPU, text) else self.pcie_models
            pattern = NVLINK_GPU if models is self.nvlink_models else PCIE_GPU
            clipped = None
            for m in linear_regex.finditer(pattern, text[:MODEL_SEARCH_CHARS]):
                if m.group(0) not in models:
                    clipped = clip(text, 400) if clipped is None else clipped
                    models[m.group(0)] = Mark(1, source, line, clipped)
                    if len(self.pcie_models) + len(self.nvlink_models) >= MAX_GPU_MODELS:
                        break

    def saturated(self, literal: str) -> bool:
        """Whether the marker ``literal`` has been seen often enough to say nothing new."""
        name = _MARKER_NAME.get(literal)
        if name is None or name in PER_RANK_MARKERS:
            return False
        mark = self.marks.get(name)
        return mark is not None and mark.count >= SATURATED

    def has(self, name: str) -> bool:
        return name in self.marks


def note_markers(facts: RunFacts, text: str, source: str, line: int, present: frozenset[str] | None = None,
                 rank: int | None = None) -> None:
    """Record the markers on this line; ``present``: the literals the pre-filter already found on it."""
    if present is not None:
        names = {_MARKER_NAME[lit] for lit in present if lit in _MARKER_NAME}
    else:
        names = {name for name, literals in MARKERS.items() if any(lit in text for lit in literals)}
    for name in names:
        facts.note(name, source, line, text)
    if "launch" in names and facts.command is None and len(text) <= MAX_COMMAND_LINE:
        m = linear_regex.match(_COMMAND, text)
        if m:
            facts.command = Mark(1, source, line, m.group("command").strip())
    if "finished" in names and len(facts.finished) < 100_000:
        facts.finished.setdefault((source, rank), Mark(1, source, line, clip(text, 400)))


def read_tail(raw: bytes, last_line: int) -> list[TailLine]:
    """The last ``TAIL_LINES`` lines of ``raw`` (the end of an input), numbered so the final one is
    ``last_line``."""
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if len(raw) >= TAIL_BYTES and lines:
        lines = lines[1:]  # the first piece is probably cut
    lines = lines[-TAIL_LINES:]
    out: deque[TailLine] = deque()
    number = last_line
    for raw_line in reversed(lines):
        text = clean_line(raw_line[:4096])
        ctx = parse_prefixes(text)
        out.appendleft(TailLine(number, text, ctx.message, ctx.rank))
        number -= 1
    return list(out)
