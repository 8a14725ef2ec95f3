"""The symptom vocabulary: each symptom and every wording it has had.

A wording is a set of literals for the pre-filter (case-sensitive, as the pre-filter is) and one
bounded pattern over the line's message; its named groups are the facts, converted to their types
here. Every wording names where its text comes from (an upstream release's format string, or a
recorded run), and every symptom has wordings from at least two independent sources (two
releases, or two projects), so that no symptom rests on one sample's words.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from enum import StrEnum
from typing import Callable

import regex

from mltriage.lazy_pattern import lazy


class Symptom(StrEnum):
    # where the run got to
    COMM_INIT_STARTED = "comm-init-started"
    CHANNELS_SET_UP = "channels-set-up"
    COMM_INIT_COMPLETE = "comm-init-complete"
    DEVICE_LISTED = "device-listed"  # a tool listed a GPU taking part (facts: device)
    COLLECTIVE_RESULT = "collective-result"  # a benchmark printed a result row: a collective completed
    # the machine
    GPUS_DESCRIBED = "gpus-described"  # a tool or the user says how many GPUs of which model (facts: count, model)
    PARALLEL_SIZE = "parallel-size"  # the run's settings say how many GPU processes take part: TP/PP sizes, launcher process counts (facts: count, setting)
    NVLINK_ABSENT = "nvlink-absent"  # the GPUs have no NVLink between them: their traffic crosses PCIe
    # peer-to-peer
    PEER_ACCESS_UNSUPPORTED = "peer-access-unsupported"  # an API call failed because P2P is not possible
    P2P_UNAVAILABLE = "p2p-unavailable"  # a component reported or queried that P2P is not available
    TOO_MANY_PEERS = "too-many-peers"
    P2P_BANDWIDTH = "p2p-bandwidth-matrix"  # a p2pBandwidthLatencyTest matrix header (the matrix is read below it)
    P2P_SLOWER_THAN_STAGED = "p2p-slower-than-staged"  # derived: P2P=Enabled copies slower than P2P=Disabled ones
    IOMMU_FAULT = "iommu-fault"
    CUSTOM_ALLREDUCE = "custom-allreduce-in-use"  # a component that needs P2P is on the failing path
    CUDA_IPC_FAILED = "cuda-ipc-failed"  # sharing GPU memory between processes (CUDA IPC) failed or is unusable
    # numbers
    WRONG_VALUES = "wrong-values"
    NAN_IN_OUTPUT = "nan-in-output"
    TENSOR_PRINTED = "tensor-printed"  # a tensor's repr (facts: device, all_zero); wrong values are derived
    GARBAGE_OUTPUT = "garbage-output"  # a model's generated text is a run of one symbol, or the user calls it gibberish
    # numeric precision (helper numerics: precision facts and what overflows half precision)
    PRECISION_SET = "precision-set"  # the run's numeric precision, as a framework prints its config or the command asks (facts: precision)
    NONFINITE_CAST = "nonfinite-cast"  # numpy cast NaN/inf to integers (an image or array holding NaN; facts: where)
    FP16_RANGE_EXCEEDED = "fp16-range-exceeded"  # a value dump shows magnitudes beyond float16's max (65504), or inf/nan found by a debug hook
    LOSS_SCALE_COLLAPSED = "loss-scale-collapsed"  # an fp16 loss scaler kept overflowing until its scale fell below 1 (facts: scale)
    # stops
    COLLECTIVE_TIMEOUT = "collective-timeout"
    HANG_NOTED = "hang-noted"  # the user's own words in the log: "<hangs here>", "stuck"
    PEERS_WAITING = "peers-waiting"  # a framework says a worker has waited for its peers for a long time (facts: seconds)
    STACK_DUMP = "stack-dump"  # py-spy or faulthandler dumping a live process: somebody looked at a hang
    KILLED_BY_SIGNAL = "killed-by-signal"  # a shell, container runtime or IDE reports a process killed (facts: signal)
    USER_INTERRUPT = "user-interrupt"  # Ctrl-C / SIGINT: the user stopped a run that was not ending
    # what the ranks were doing before a collective timed out (collective-timeout causes)
    DATA_PREPARATION = "data-preparation"  # dataset map/tokenise/filter, main_process_first (facts: what, kind)
    PROGRESS_BAR = "progress-bar"  # a tqdm bar (facts: desc, percent, elapsed_s): how long one rank's own work had run
    EVALUATION_STARTED = "evaluation-started"  # an evaluation/validation loop began (facts: what)
    CHECKPOINT_SAVING = "checkpoint-saving"  # a checkpoint save began (facts: path)
    TRACE_CACHE_INVALIDATED = "zero3-trace-invalidated"  # DeepSpeed ZeRO-3 met another module order than it traced (facts: step)
    UNEVEN_INPUTS = "uneven-inputs"  # ranks hold different numbers of batches (facts: kind)
    STEP_LOGGED = "step-logged"  # a rank printed which step it ran (facts: rank, step, epoch): per-rank step counts
    # building extensions (DeepSpeed ops, fused kernels, any torch.utils.cpp_extension build)
    NVCC_ARCH_UNSUPPORTED = "nvcc-arch-unsupported"  # the CUDA compiler does not know the GPU architecture asked for (facts: arch)
    CUDA_HEADER_MISSING = "cuda-header-missing"  # a compile could not find a CUDA toolkit header (facts: header)
    BUILD_FAILED = "build-failed"  # a C++/CUDA build step failed (ninja, setuptools, the linker, cpp_extension)
    # the network a run meets
    HOST_UNRESOLVED = "host-unresolved"  # a host name the run must reach cannot be looked up (facts: host, port, gai_error)
    SOCKET_ADDRESS_INVALID = "socket-address-invalid"  # NCCL was handed a socket address that is no address (facts: family)
    # (the nccl-network family: which interfaces and transport the run chose, connects that failed, how many nodes)
    INTERFACE_CHOSEN = "interface-chosen"  # NCCL named the interfaces it bootstraps or sends over (facts: role, interfaces)
    NET_CHOSEN = "net-chosen"  # NCCL named its inter-node transport (facts: net: Socket, IB or a plugin's name)
    IB_ABSENT = "ib-absent"  # NCCL found no InfiniBand/RoCE device: traffic between nodes goes over TCP sockets
    PEER_CONNECT_FAILED = "peer-connect-failed"  # a TCP connect to a peer failed for good (facts: peer, port, reason)
    PEER_CONNECTION_CLOSED = "peer-connection-closed"  # an open socket to a peer was closed or reset (facts: peer, port)
    MULTI_NODE = "multi-node"  # a launcher, a command line or the user says the run spans nodes (facts: nodes)
    ROCE_LINK = "roce-link"  # an RDMA port whose link layer is Ethernet (RoCE): its GID index decides what the peer reaches
    NCCL_RESULT_UNKNOWN = "nccl-result-unknown"  # ncclGetErrorString did not know the code: caller and libnccl are different releases
    # NCCL's shared-memory transport failed in its cuMem host path: a CUDA call, or a peer's cuMem descriptor read as a /dev/shm name
    SHM_CUDA_FAILURE = "shm-transport-cuda-failure"
    NCCL_ERROR = "nccl-error"  # a call into NCCL returned an error, in any carrier's words (facts: result, message, file, line)
    # the platform's services
    FABRIC_MANAGER_DOWN = "fabric-manager-down"  # NVIDIA Fabric Manager (NVSwitch set-up) failed to start (facts: fm_version, driver_version)
    # shared memory (helper numerics: /dev/shm seen through ENOSPC)
    NO_SPACE_LEFT = "no-space-left"  # ENOSPC: a write or an allocation found its filesystem full (facts: path, shm)
    SHM_IN_USE = "shm-in-use"  # a frame or path of POSIX shared memory: multiprocessing's semaphores/queues, shared tensors, /dev/shm (facts: where)
    # which GPU a process sees (helper numerics: MIG, the display watchdog)
    DEVICE_INDEX_ERROR = "device-index-error"  # a process asked for a CUDA device index it does not have (facts: device, num_gpus)
    MIG_DEVICES = "mig-devices"  # the log shows MIG instances: nvidia-smi's MIG rows, MIG- UUIDs, "MIG 3g.40gb" names (facts: profile, mig_uuid)
    LAUNCH_TIMEOUT = "launch-timeout"  # cudaErrorLaunchTimeout: a display watchdog killed a kernel that ran too long
    CUDA_UNKNOWN_ERROR = "cuda-unknown-error"  # cudaErrorUnknown (999) (facts: call)
    WINDOWS_HOST = "windows-host"  # the run is on Windows: a drive path, an .exe, WDDM
    # GPU memory of a serving engine (helper numerics)
    GPU_OOM = "gpu-oom"  # an allocation on the GPU failed: the caching allocator's or the CUDA runtime's out of memory (facts: requested, free)
    CUDA_GRAPH_CAPTURE = "cuda-graph-capture"  # a serving engine captures CUDA graphs (memory beyond its profiled budget)
    EVAL_FRAME = "eval-frame"  # a traceback frame of an evaluation/validation loop (facts: function)
    ERROR_LOGGED = "error-logged"  # a line at a logger's ERROR/FATAL/CRITICAL level, whatever it says (facts: message)
    # the run's settings
    FRAMEWORK_SEEN = "framework-seen"  # a launcher, logger tag or source path names the serving/training framework (facts: framework)
    ENV_SET = "env-set"  # a variable the run set, as the library reports it (facts: name, value)
    # version and toolchain mismatches: two installed components that do not fit together
    IMPORT_FAILED = "import-failed"  # an import or a module attribute failed (facts: form, module, package, name, path, importer)
    PACKAGE_FRAME = "package-frame"  # a traceback frame inside an installed package (facts: package)
    PACKAGE_VERSION = "package-version"  # the log states an installed package's version (facts: package, version, or installed)
    KEY_ERROR = "key-error"  # a KeyError line (facts: key; raised_in, the innermost package frame's file, when one is just above)
    MODEL_TYPE_UNKNOWN = "model-type-unknown"  # transformers does not know a checkpoint's model_type (facts: model_type, transformers_before)
    CONFIG_VALIDATION_FAILED = "config-validation-failed"  # pydantic rejected a config model (facts: count, model)
    VALUE_NOT_INTEGER = "value-not-integer"  # a validator wanted an integer and got a float (facts: input_value)
    REQUIREMENT_UNMET = "requirement-unmet"  # an installed version fails a stated requirement (facts: form, requirement, package, version, requirer)
    JIT_BUILD_STARTED = "jit-build-started"  # a JIT C++/CUDA extension build or load began (facts: root, the extensions root)
    JIT_BUILD_WAITING = "jit-build-waiting"  # a process waits on torch's extension build lock (FileBaton) (facts: lock)


class Precision(StrEnum):
    FP16 = "fp16"  # IEEE half: max 65504, what overflows
    BF16 = "bf16"  # fp32's exponent range in 16 bits
    FP32 = "fp32"


class Transport(StrEnum):
    P2P = "p2p"
    SHM = "shm"
    NET = "net"


class NcclResult(StrEnum):
    """ncclResult_t (NVIDIA/nccl src/nccl.h.in), as ncclGetErrorString, the enum's names and cupy's names spell it."""

    CUDA = "unhandled-cuda-error"
    SYSTEM = "system-error"
    INTERNAL = "internal-error"
    INVALID_ARGUMENT = "invalid-argument"
    INVALID_USAGE = "invalid-usage"
    REMOTE = "remote-error"
    IN_PROGRESS = "in-progress"
    UNKNOWN_CODE = "unknown-result-code"  # ncclGetErrorString's default: the caller and libnccl are different releases


_int = int


def _float(text: str) -> float:
    return float(text)


def _transport(text: str) -> Transport:
    word = text.lower()
    if word.startswith("p2p"):
        return Transport.P2P
    if word.startswith("net"):
        return Transport.NET
    return Transport.SHM


# "multiple", "several", "both" GPUs: two at least (a lower bound is what the multi-GPU causes need)
_NUMBER_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "sixteen": 16, "dual": 2, "quad": 4,
                 "multiple": 2, "several": 2, "both": 2, "many": 2, "multi": 2}


def _count(text: str) -> int:
    """A number, a number word, or a comma-separated list (device ids "0,1,2,3", a tuple's device names): its length."""
    word = text.lower().strip()
    if "," in word:
        return len([part for part in word.split(",") if part.strip()])
    return _NUMBER_WORDS[word] if word in _NUMBER_WORDS else int(word)


def _framework(text: str) -> str:
    word = text.lower()
    return "tensorrt-llm" if word in ("tensorrt-llm", "trt-llm", "tensorrt_llm", "trtllm") else word


_PRECISION_WORDS = {"fp16": Precision.FP16, "float16": Precision.FP16, "half": Precision.FP16, "16": Precision.FP16,
                    "16-mixed": Precision.FP16, "bf16": Precision.BF16, "bfloat16": Precision.BF16, "bf16-mixed": Precision.BF16,
                    "fp32": Precision.FP32, "float32": Precision.FP32, "float": Precision.FP32, "32": Precision.FP32,
                    "no": Precision.FP32}


def _precision(text: str) -> Precision:
    word = text.lower().removeprefix("torch.")
    if word in _PRECISION_WORDS:
        return _PRECISION_WORDS[word]
    raise ValueError(text)  # a word no precision is spelled with: the fact is dropped


def _clock(text: str) -> int:
    """tqdm's format_interval: "[H:]MM:SS" (and "Nd, H:MM:SS" past a day), in seconds."""
    days, _, clock = text.rpartition("d, ")
    total = 0
    for part in clock.split(":"):
        total = total * 60 + int(part)
    return total + (int(days) * 86400 if days else 0)


# ncclGetErrorString's texts (src/init.cc, 2.3-2.30; 1.x below), ncclResult_t's names and cupy's NCCL_ERROR_* names, by their first words
_NCCL_RESULT_WORDS = (
    ("unhandled cuda error", NcclResult.CUDA), ("unhandledcudaerror", NcclResult.CUDA), ("unhandled_cuda_error", NcclResult.CUDA),
    ("unhandled system error", NcclResult.SYSTEM), ("systemerror", NcclResult.SYSTEM), ("system_error", NcclResult.SYSTEM),
    ("internal error", NcclResult.INTERNAL), ("internalerror", NcclResult.INTERNAL), ("internal_error", NcclResult.INTERNAL),
    ("invalid argument", NcclResult.INVALID_ARGUMENT), ("invalidargument", NcclResult.INVALID_ARGUMENT),
    ("invalid_argument", NcclResult.INVALID_ARGUMENT), ("invalid usage", NcclResult.INVALID_USAGE),
    ("invalidusage", NcclResult.INVALID_USAGE), ("invalid_usage", NcclResult.INVALID_USAGE),
    ("remote process exited", NcclResult.REMOTE), ("remoteerror", NcclResult.REMOTE), ("remote_error", NcclResult.REMOTE),
    ("nccl operation in progress", NcclResult.IN_PROGRESS), ("inprogress", NcclResult.IN_PROGRESS), ("in_progress", NcclResult.IN_PROGRESS),
    ("unknown result code", NcclResult.UNKNOWN_CODE),
    # NCCL 1.x (src/core.cu, v1.2-v1.3.4): its own texts, each code folded into the 2.x result that took it over
    ("system error", NcclResult.SYSTEM), ("cuda malloc failed", NcclResult.CUDA), ("invalid device pointer", NcclResult.INVALID_ARGUMENT),
    ("invalid rank", NcclResult.INVALID_ARGUMENT), ("unsupported device count", NcclResult.INVALID_ARGUMENT),
    ("device not found", NcclResult.INVALID_ARGUMENT), ("invalid device index", NcclResult.INVALID_ARGUMENT),
    ("parameter mismatch between ranks", NcclResult.INVALID_ARGUMENT), ("invalid data type", NcclResult.INVALID_ARGUMENT),
    ("invalid reduction operations", NcclResult.INVALID_ARGUMENT),
)
# torch.cuda.nccl's "NCCL Error %d": the result's number
_NCCL_RESULT_NUMBERS = {"1": NcclResult.CUDA, "2": NcclResult.SYSTEM, "3": NcclResult.INTERNAL, "4": NcclResult.INVALID_ARGUMENT,
                        "5": NcclResult.INVALID_USAGE, "6": NcclResult.REMOTE, "7": NcclResult.IN_PROGRESS}


def _nccl_result(text: str) -> NcclResult:
    if text in _NCCL_RESULT_NUMBERS:
        return _NCCL_RESULT_NUMBERS[text]
    word = text.lower().removeprefix("nccl_error_").removeprefix("nccl")
    for start, result in _NCCL_RESULT_WORDS:
        if word.startswith(start):
            return result
    raise ValueError(text)  # a message no release of ncclGetErrorString writes: the carrier's message stays, the result is not said


def _bool(text: str) -> bool:
    return text.lower() in ("true", "1", "yes")


CONVERTERS: dict[str, Callable[[str], object]] = {
    "nranks": _int, "timeout_ms": _int, "seq": _int, "errors": _int, "device": _int, "peer_device": _int,
    "transport": _transport, "disabled": _bool, "peers": _int, "rank": _int, "iteration": _int,
    "count": _count, "framework": _framework, "precision": _precision, "gai_error": _int, "port": _int, "family": _int, "seconds": _int,
    "shm": _bool, "num_gpus": _int, "result": _nccl_result, "nodes": _count, "line": _int,
    "numel_in": _int, "from_rank": _int, "to_rank": _int, "percent": _int, "elapsed_s": _clock, "step": _int, "epoch": _int, "done": _int, "total": _int, "joined": _int,
}


# a logger's level below error at the head of a line (NCCL/vLLM "INFO", Python "WARNING:", glog "W1202 ..." and
# torch's "[W socket.cpp:...]"): a fallback wording's errno text there is a retry or a notice the program went past
BELOW_ERROR_LEVEL = lazy(regex.compile, r"^(?:[IWD]\d{4} |[^\n]{0,80}?(?:\b(?:INFO|DEBUG|TRACE|WARN|WARNING)\b|\[[IWD] ))")


@dataclass(frozen=True)
class Wording:
    symptom: Symptom
    literals: tuple[str, ...]
    pattern: str
    source: str  # where this text comes from: project, release and file of its format string, or a recording
    ignore_case: bool = False
    whole_line: bool = False  # match the line as logged, prefixes included (a logger's file:line names the component)
    given: tuple[tuple[str, object], ...] = ()  # facts every match of this wording states (what its text implies)
    # the lowest layer's words (an errno's or the resolver's text, whatever program carried it): observed
    # only on a line no other wording of the same symptom matched, so a carrier's own wording keeps its facts
    fallback: bool = False

    @cached_property
    def compiled(self) -> regex.Pattern[str]:
        # compiled the first time a line lands on the wording's literals: a short log compiles a few, not hundreds
        return regex.compile(self.pattern, (regex.IGNORECASE if self.ignore_case else 0) | regex.VERSION0)

    def facts_of(self, m: regex.Match[str]) -> dict[str, object]:
        facts: dict[str, object] = dict(self.given)
        for name, value in m.groupdict().items():
            if value is None:
                continue
            convert = CONVERTERS.get(name)
            try:
                facts[name] = convert(value) if convert else value
            except ValueError:
                continue
        return facts


# model names users write next to a GPU count (case as they write them; the pre-filter is case-sensitive)
_GPU_MODEL_LITERALS = ("A100", "H100", "H200", "H20", "B200", "V100", "P100", "A10", "A30", "A40", "L4", "L40", "T4", "A6000",
                       "A5000", "A4000", "3090", "4090", "5090", "3080", "4080", "3070", "2080", "1080", "TITAN", "MI50", "MI100",
                       "MI210", "MI250", "MI300", "Radeon", "6000 Ada", "Pro 6000")

# A user's report in a sentence (the hang and wrong-values prose wordings): what it may not have before its verb
# (advice, a possibility, a cause, a negation), who it is about, and the auxiliaries between them
# the words before a report's verb that make it no observation: advice, a possibility, a cause, a check
_NOT_OBSERVED = (r"if|unless|whether|avoids?|prevents?|detects?|may|might|could|can|cannot|can't|should|would|caused\s{1,3}by|"
                 r"due\s{1,3}to|typically|usually|potential(?:ly)?|possible|possibly|likely|otherwise|unlikely")


def _none_before(extra: str) -> str:
    """The start of a line up to a report's words, with none of ``_NOT_OBSERVED`` (or ``extra``) on the way."""
    return r"^(?:(?!\b(?:" + _NOT_OBSERVED + "|" + extra + r")\b)[^\n]){0,200}?"


# a hang: nor a negation ("does not hang", "no longer hangs") nor a cause's noun ("to hang", "because ...")
_REPORT_GUARD = _none_before(r"avoiding|preventing|detecting|detection|because|not|n't|never|no\s{1,3}longer|without|"
                             r"to\s{1,3}(?:hang|stall|freeze)")
# a word of the subject's noun phrase: no negation or modal ("the job no longer hangs" is no hang)
_NOUN_WORD = (r"(?!(?:no|not|never|longer|does|doesn't|did|didn't|won't|wouldn't|may|might|could|can|cannot|should|if|to|avoid|"
              r"without)\b)[\w.-]{2,30}")
_REPORT_SUBJECT = (r"(?:it|this|that|everything|training|inference|evaluation|generation|serving|"
                   r"(?:the|my|our|this|that|their|each|every|all|both)\s{1,3}" + _NOUN_WORD + r"(?:\s{1,3}" + _NOUN_WORD + r"){0,2}|"
                   r"[\w.-]{0,30}(?:program|process(?:es)?|job|script|code|model|server|run|ranks?|workers?|gpus?|nodes?|engine|trainer|"
                   r"command|call|loading|init|initiali[sz]ation|all_?reduce|all-reduce|allreduce|barrier|init_process_group|broadcast|"
                   r"all_?gather)|vllm|sglang|torchrun|deepspeed|accelerate|nccl|ddp|fsdp|[\w.]{1,40}\([^()\n]{0,40}\))")
_REPORT_AUX = (r"(?:\s{1,3}(?:is|was|are|were|gets?|got|just|seems?\s{1,3}to|appears?\s{1,3}to|keeps?|kept|still|always|then|simply|"
               r"completely|totally|randomly|sometimes|often|consistently|will|had|has|have|been|being|becomes?|became|goes|went|"
               r"also|now|again|immediately|eventually|indeed|get)){0,3}")

# wrong values: negations are part of the report ("the results do not match"), a check's words are not
_VALUES_GUARD = _none_before(r"ensure|make\s{1,3}sure|check|verify|expected|expect|to\s{1,3}get|avoid")
_VALUES = (r"(?:results?|outputs?|values?|answers?|sums?|gradients?|numbers|predictions?|logits|completions?|generations?|"
           r"responses?|embeddings?|losses|loss|accuracy|output\s{1,3}text)")
_VALUES_PLURAL = r"(?:results|outputs|values|answers|sums|gradients|numbers|predictions|logits|completions|generations|responses|embeddings|losses)"

W = Wording
WORDINGS: tuple[Wording, ...] = (
    # -- communicator set-up ----------------------------------------------------------------------
    W(Symptom.COMM_INIT_STARTED, ("NCCL version ",), r"NCCL version (?P<nccl_version>\d{1,2}\.\d{1,3}(?:\.\d{1,3})?)",
      "NVIDIA/nccl src/init.cc every 2.x release: INFO/printf \"NCCL version %s\" (rank 0's first line)"),
    W(Symptom.COMM_INIT_STARTED, ("ncclCommInitRank", "Init START"),
      r"ncclCommInitRank\w{0,8}[^\n]{0,200}?\bnranks (?P<nranks>\d{1,7})|comm 0x[0-9a-f]{1,16} rank \d{1,7} nranks (?P<nranks>\d{1,7})[^\n]{0,200}Init START",
      "NVIDIA/nccl src/init.cc 2.7-2.29: INFO \"ncclCommInitRank comm %p rank %d nranks %d cudaDev %d ... - Init START\""),
    W(Symptom.COMM_INIT_STARTED, ("vLLM is using nccl==",), r"vLLM is using nccl==(?P<nccl_version>\d{1,2}\.\d{1,3}(?:\.\d{1,3})?)",
      "vllm-project/vllm vllm/distributed/device_communicators/pynccl.py 0.4.1+: logger.info(\"vLLM is using nccl==%s\", ...)"),
    W(Symptom.COMM_INIT_STARTED, ("sglang is using nccl==",), r"sglang is using nccl==(?P<nccl_version>\d{1,2}\.\d{1,3}(?:\.\d{1,3})?)",
      "sgl-project/sglang python/sglang/srt/distributed/device_communicators/pynccl.py (0.4+, vLLM's copy): "
      "logger.info(\"sglang is using nccl==%s\", self.nccl.ncclGetVersion())"),
    W(Symptom.COMM_INIT_STARTED, ("Bootstrap : Using", "Bootstrap: Using"), r"Bootstrap ?: Using",
      "NVIDIA/nccl src/bootstrap.cc: \"Bootstrap : Using %s\" (2.4-2.22), \"Bootstrap: Using %s\" (2.23+)"),
    # the frameworks' own words for "distributed set-up starts here" (their NCCL communicators come up right after)
    W(Symptom.COMM_INIT_STARTED, ("distributed_init_method=",),
      r"\bworld_size=(?P<nranks>\d{1,7}) rank=\d{1,7} local_rank=-?\d{1,4} distributed_init_method=\S{1,300} backend=\w{1,12}",
      "vllm-project/vllm vllm/distributed/parallel_state.py init_distributed_environment: logger.debug(\"world_size=%d rank=%d "
      "local_rank=%d \" \"distributed_init_method=%s backend=%s\", ...) (0.4.1-0.9) and the same format on one line (0.10+)"),
    W(Symptom.COMM_INIT_STARTED, ("GPU P2P access cache",),
      r"\b(?:reading GPU P2P access cache from|generating GPU P2P access cache in) \S{1,300}",
      "vllm-project/vllm gpu_p2p_access_check: logger.info(\"reading GPU P2P access cache from %s\", path) and \"generating GPU P2P "
      "access cache in %s\" (vllm/distributed/utils.py 0.4.1, device_communicators/custom_all_reduce_utils.py 0.4.2+): the "
      "custom all-reduce's peer-to-peer test, run while the TP group is set up", given=(("stage", "p2p-check"),)),
    W(Symptom.COMM_INIT_STARTED, ("Initializing TorchBackend in DeepSpeed", "Initializing torch distributed with backend"),
      r"\bInitializing TorchBackend in DeepSpeed with backend [nr]ccl\b|\bInitializing torch distributed with backend: [nr]ccl\b",
      "deepspeedai/DeepSpeed deepspeed/comm/comm.py init_distributed: utils.logger.info('Initializing TorchBackend in DeepSpeed "
      "with backend {}'.format(dist_backend)) (v0.8.0-v0.19.5) and deepspeed/utils/distributed.py \"Initializing torch "
      "distributed with backend: {}\" (v0.5.0); only with NCCL (or RCCL) as the backend: gloo's set-up is no NCCL line"),
    W(Symptom.COMM_INIT_STARTED, ("Found nccl from library",), r"\bFound nccl from library \S{1,200}",
      "vllm-project/vllm vllm/utils.py find_nccl_library: logger.info(\"Found nccl from library %s\", so_file) (0.4-0.10; "
      "vllm/utils/nccl.py logger.debug_once from 0.11): PyNccl loads libnccl just before its communicators come up"),
    W(Symptom.COMM_INIT_STARTED, ("all-reduces with algorithm = nccl", "Collective all_reduce tensors:"),
      r"\bbatch_all_reduce: \d{1,6} all-reduces with algorithm = nccl\b|\bCollective all_reduce tensors: \d{1,6} all_reduces, num_devices = \d{1,4}, "
      r"group_size = \d{1,6}, implementation = (?:\w{1,40}\.)?NCCL\b",
      "tensorflow/tensorflow tensorflow/python/distribute/cross_device_ops.py NcclAllReduce._do_batch_all_reduce: logging.log_first_n(INFO, "
      "\"batch_all_reduce: %d all-reduces with algorithm = %s, num_packs = %d\") (TF 2.0-2.16, MirroredStrategy's first NCCL all-reduce, "
      "printed as INFO:tensorflow:...) and CollectiveAllReduce's \"Collective all_reduce tensors: %d all_reduces, num_devices = %d, "
      "group_size = %d, implementation = %s, num_packs = %d\" (the implementation an enum's str: CommunicationImplementation.NCCL, "
      "CollectiveCommunication.NCCL in earlier 2.x releases)"),
    W(Symptom.COMM_INIT_STARTED, ("Init torch distributed begin",), r"\bInit torch distributed begin\.",
      "sgl-project/sglang python/sglang/srt/model_executor/model_runner.py init_torch_distributed: "
      "logger.info(\"Init torch distributed begin.\") (0.2-0.5)"),
    W(Symptom.COMM_INIT_STARTED, ("Initializing distributed: GLOBAL_RANK:", "initializing distributed: GLOBAL_RANK:",
                                  "initializing ddp: GLOBAL_RANK:", "initializing ddp (SLURM): GLOBAL_RANK:",
                                  "All distributed processes registered", "All DDP processes registered"),
      r"[Ii]nitializing (?:distributed|ddp(?: \(SLURM\))?): GLOBAL_RANK: \d{1,7}, MEMBER: \d{1,7}/(?P<nranks>\d{1,7})|"
      r"All distributed processes registered\. Starting with (?P<nranks>\d{1,7}) process|"
      r"All DDP processes registered\. Starting ddp with (?P<nranks>\d{1,7}) process",
      "Lightning-AI/lightning src/lightning/fabric/utilities/distributed.py _init_dist_connection: log.info(f\"Initializing "
      "distributed: GLOBAL_RANK: {global_rank}, MEMBER: {global_rank + 1}/{world_size}\") and rank_zero_info(f\"All distributed "
      "processes registered. Starting with {world_size} processes\") (2.x, pytorch_lightning 1.6; 1.5.10 \"initializing "
      "distributed: ...\"); pytorch_lightning 0.8.5-1.4.9 accelerators/accelerator.py, plugins/training_type/ddp.py: "
      "\"initializing ddp: GLOBAL_RANK: {global_rank}, MEMBER: {global_rank + 1}/{world_size}\" and \"All DDP processes "
      "registered. Starting ddp with {world_size} processes\", 1.0.8 trainer/connectors/slurm_connector.py \"initializing ddp "
      "(SLURM): GLOBAL_RANK: ...\""),
    W(Symptom.CHANNELS_SET_UP, ("via P2P/", "via SHM/", "via NET/", "via direct shared memory"),
      r"(?:Channel|Ring) \d{1,3}(?:/\d{1,3})? ?: ?(?P<from_rank>\d{1,7})(?:\[[0-9a-fx]{1,16}\])? -> (?P<to_rank>\d{1,7})(?:\[[0-9a-fx]{1,16}\])?[^\n]{0,40}? via (?P<transport>P2P|SHM|NET|direct shared memory)",
      "NVIDIA/nccl src/transport/{p2p,shm,net}.cc: \"Channel %02d : %d[%lx] -> %d[%lx] via P2P/%s\" (2.5+), "
      "\"Ring %02d : %d -> %d via P2P/IPC\" and \"via direct shared memory\" (2.3-2.4)"),
    W(Symptom.COMM_INIT_COMPLETE, ("Init COMPLETE", "Connected all rings", "Connected all trees"),
      r"Init COMPLETE|Connected all (?:rings|trees)",
      "NVIDIA/nccl src/init.cc: \"comm %p rank %d nranks %d cudaDev %d busId %lx - Init COMPLETE\" (2.x); "
      "src/graph/connect.cc \"Connected all rings\" (2.9+)"),
    W(Symptom.DEVICE_LISTED, (" Pid ",), r"^#\s{1,4}Rank\s{1,4}(?P<rank>\d{1,6})(?:\s{1,4}Group\s{1,4}\d{1,4})?\s{1,4}Pid\s{1,8}\d{1,8}\s{1,4}on\s{1,12}(?P<host>\S{1,64})\s{1,4}device\s{1,4}(?P<device>\d{1,3})",
      "NVIDIA/nccl-tests src/common.cu: PRINT(\"#  Rank %2d Group %2d Pid %6d on %10s device %2d [0x%02x] %s\\n\") (2.10+), "
      "\"#   Rank %2d Pid %6d on %10s device %2d [0x%02x] %s\\n\" (2.0-2.9)"),
    W(Symptom.DEVICE_LISTED, ("Device: ",), r"^Device: (?P<device>\d{1,3}), [^\n]{1,80}, pciBusID: [0-9a-f]{1,4}",
      "NVIDIA/cuda-samples p2pBandwidthLatencyTest.cu: printf(\"Device: %d, %s, pciBusID: %x, pciDeviceID: %x, pciDomainID:%x\\n\", ...)"),
    # nccl-tests' result row: size count type redop [root] time algbw busbw #wrong time algbw busbw #wrong
    W(Symptom.COLLECTIVE_RESULT, (" float ", " half ", " bfloat16 ", " double ", " int32 ", " int8 ", " uint8 ", " int64 "),
      r"^\s{0,12}\d{1,13}\s{1,20}\d{1,13}\s{1,20}(?:float|half|bfloat16|double|int8|uint8|int32|uint32|int64|uint64)\s{1,20}"
      r"(?:\w{1,10}\s{1,20})?(?:-?\d{1,5}\s{1,20})?[\d.]{1,12}\s{1,20}[\d.]{1,12}\s{1,20}[\d.]{1,12}\s{1,20}(?P<wrong_oop>\S{1,12})"
      r"(?:\s{1,20}[\d.]{1,12}\s{1,20}[\d.]{1,12}\s{1,20}[\d.]{1,12}\s{1,20}(?P<wrong_ip>\S{1,12}))?",
      "NVIDIA/nccl-tests src/common.cu: the result row \"%12li  %12li  %8s  %6s  %6i  %7s %6.2f %6.2f %5s\" (2.0+: #wrong is an "
      "integer; 1.x printed the max error as %.0e)"),
    # -- the machine -------------------------------------------------------------------------------
    W(Symptom.GPUS_DESCRIBED, (" CUDA devices:", " ROCm devices:", " MUSA devices:"),
      r"\bfound (?P<count>\d{1,3}) (?:CUDA|ROCm|MUSA) devices:",
      "ggml-org/llama.cpp ggml/src/ggml-cuda/ggml-cuda.cu (b3000+): GGML_LOG_INFO(\"%s: found %d \" GGML_CUDA_NAME \" devices:\\n\") "
      "and ggml-cuda.cu before the ggml/ move: fprintf(stderr, \"%s: found %d \" GGML_CUDA_NAME \" devices:\\n\") (also what ollama "
      "prints, as ggml_init_cublas / ggml_cuda_init)"),
    # printed only when the process sees more than one GPU: its words imply two or more (a lower bound)
    W(Symptom.GPUS_DESCRIBED, ("as main device",), r"\bggml_cuda_set_main_device: using device \d{1,2} \((?P<model>[^()\n]{2,60})\) as main device",
      "ggml-org/llama.cpp ggml-cuda.cu (2023, also vendored by ollama): ggml_cuda_set_main_device() prints "
      "fprintf(stderr, \"%s: using device %d (%s) as main device\\n\", __func__, g_main_device, prop.name) inside "
      "`if (g_device_count > 1)`; ggml-xrt/ggml-test forks keep the same guard", given=(("count", 2),)),
    # "2x RTX 3090", "8 × A100-SXM4", "two RTX A6000 GPUs", "4 Nvidia RTX A5000": how users describe their machine
    W(Symptom.GPUS_DESCRIBED, _GPU_MODEL_LITERALS,
      r"(?<!\|\s{0,8})(?<![\w.])(?P<count>[1-9]\d{0,2}|two|three|four|six|eight|sixteen|dual|quad)\s{0,2}(?:[x×X*]\s{0,2}|\s)(?:NVIDIA\s|Nvidia\s|nvidia\s)?"
      r"(?:GeForce\s|Tesla\s|Quadro\s|AMD\s|Radeon\s|Instinct\s)?(?P<model>(?:RTX\s?)?(?:[AHBLVTP]\d{1,3}0?S?|A[2-6]000|[1-5]0[6-9]0(?:\s?Ti)?|"
      r"[1-2]0[6-8]0(?:\s?Ti)?|TITAN\s?\w{0,4}|MI\d{2,3}X?|VII|Pro\s6000|6000\s?(?:Ada|D))(?:[-\s](?:SXM\d?|PCIe|PCIE|NVL|\d{2,3}GB))?)s?\b",
      "users' descriptions of their machine in public issue threads of vllm-project/vllm, NVIDIA/nccl and pytorch/pytorch "
      "(\"2x RTX 3090\", \"8 x A100-SXM4-80GB\", \"two RTX A6000\"); nvidia-smi's and NCCL's own lines name one GPU each (device-listed)"),
    W(Symptom.DEVICE_LISTED, ("compute capability", "VMM: "),
      r"^\s{0,4}Device (?P<device>\d{1,2}): [^,\n]{2,80}, (?:compute capability \d{1,2}\.\d{1,2}|gfx\w{2,24}[^,\n]{0,30})(?:, VMM: (?:yes|no))?",
      "ggml-org/llama.cpp ggml/src/ggml-cuda/ggml-cuda.cu ggml_cuda_init: GGML_LOG_INFO(\"  Device %d: %s, compute capability %d.%d, "
      "VMM: %s\\n\") (CUDA) and \"  Device %d: %s, %s (0x%x), VMM: %s, Wave Size: %d\\n\" with the gcnArchName (ROCm, b4000+); "
      "ggml-cuda.cu before the ggml/ move: fprintf(stderr, \"  Device %d: %s, compute capability %d.%d\\n\") (also ollama's runner)"),
    W(Symptom.DEVICE_LISTED, ("buffer size =",), r"\b(?:CUDA|ROCm)(?P<device>\d{1,2})(?: model| KV| compute)? buffer size =",
      "ggml-org/llama.cpp src/llama.cpp llm_load_tensors: LLAMA_LOG_INFO(\"%s: %10s buffer size = %8.2f MiB\\n\", __func__, "
      "ggml_backend_buffer_name(buf), ...) (b1500+, buffer names CUDA0, CUDA1 ...; \"%12s model buffer size\" and \"%s KV buffer size\" "
      "in b3000+; ROCm0 with HIP)"),
    W(Symptom.DEVICE_LISTED, ("00000000:",),
      r"^\|\s{1,4}(?P<device>\d{1,2})\s{1,4}(?:NVIDIA |Tesla |Quadro )?[\w .-]{2,40}?\s{1,30}(?:On|Off)\s{1,4}\|\s{0,6}0{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d",
      "nvidia-smi's device table row \"| %3d  %-28s %4s | %-16s %3s |\" (index, name, persistence mode, bus id; drivers 450-580: "
      "see ../shared/gpu for a 2xH200 host's output)"),
    # how many GPU processes the run's own settings ask for (each one GPU): the engines' config lines and the launchers' flags
    W(Symptom.PARALLEL_SIZE, ("tensor_parallel_size=", "pipeline_parallel_size="),
      r"\b(?P<setting>tensor_parallel_size|pipeline_parallel_size)=(?P<count>\d{1,4})\b",
      "vllm-project/vllm vllm/engine/llm_engine.py LLMEngine.__init__: logger.info(\"Initializing an LLM engine (v%s) with config: ... "
      "tensor_parallel_size=%d, pipeline_parallel_size=%d, ...\") (0.2-0.10), and the VllmConfig repr of \"Initializing a V1 LLM engine\" "
      "(0.8+); NVIDIA/TensorRT-LLM LLM args repr (tensor_parallel_size=...)"),
    W(Symptom.PARALLEL_SIZE, ("--tensor-parallel-size", "--tensor_parallel_size", "--pipeline-parallel-size", "-tp ", "-tp=", "--tp ", "--tp=",
                              "--tp-size", "--tp_size"),
      r"(?<![\w-])(?P<setting>--tensor[-_]parallel[-_]size|--pipeline[-_]parallel[-_]size|-tp|--tp(?:[-_]size)?)[= ](?P<count>\d{1,4})\b",
      "vllm-project/vllm vllm/engine/arg_utils.py EngineArgs.add_cli_args: \"--tensor-parallel-size\", \"-tp\" and "
      "\"--pipeline-parallel-size\", \"-pp\" (0.2+); sgl-project/sglang python/sglang/srt/server_args.py \"--tensor-parallel-size\", "
      "\"--tp-size\" (0.2+; \"--tp\" in its docs' commands); NVIDIA/TensorRT-LLM examples' convert_checkpoint.py \"--tp_size\""),
    # the tensor-parallel size as users and launch scripts shorten it ("fine with tp=1, garbage with tp=2", "TP=4")
    W(Symptom.PARALLEL_SIZE, ("tp=", "TP=", "tp_size=", "tp =", "TP ="),
      r"(?<![\w.-])(?P<setting>tp|TP|tp_size)\s?=\s?(?P<count>\d{1,4})\b(?!\.\d)",
      "the form of vllm-project/vllm and sgl-project/sglang reports and launch scripts (tp=2, TP=4, tp_size=8), the short name of "
      "their --tensor-parallel-size / --tp-size settings"),
    W(Symptom.PARALLEL_SIZE, ("--nproc_per_node", "--nproc-per-node", "--num_gpus", "--num-gpus", "--num_processes", "--num-processes",
                              "nproc_per_node ", "dist_world_size="),
      r"(?<![\w-])(?P<setting>--nproc[-_]per[-_]node|--num[-_]gpus|--num[-_]processes)[= ](?P<count>\d{1,4})\b"
      r"|^\s{0,4}(?P<setting>nproc_per_node)\s{1,24}: (?P<count>\d{1,4})\b|\b(?P<setting>dist_world_size)=(?P<count>\d{1,6})\b",
      "pytorch/pytorch torch/distributed/run.py \"--nproc-per-node\"/\"--nproc_per_node\" and torch/distributed/launcher/api.py's config "
      "dump \"  nproc_per_node           : %(nproc_per_node)s\" (2.13.0 here); microsoft/DeepSpeed deepspeed/launcher/runner.py "
      "\"--num_gpus\" and deepspeed/launcher/launch.py logger.info(f\"dist_world_size={dist_world_size}\"); huggingface/accelerate "
      "commands/launch.py \"--num_processes\""),
    # the devices a run is given and the world it forms, as the environment and the launchers' own lines state them
    W(Symptom.PARALLEL_SIZE, ("CUDA_VISIBLE_DEVICES",),
      r"\b(?P<setting>CUDA_VISIBLE_DEVICES)(?:[\"']\])?\s{0,2}[=:]\s{0,2}[\"'\[]?(?P<count>\d{1,3}(?:\s?,\s?\d{1,3}){1,63})\b",
      "NVIDIA CUDA C++ Programming Guide, CUDA Environment Variables: CUDA_VISIBLE_DEVICES is a comma-separated list of device "
      "indices (`CUDA_VISIBLE_DEVICES=0,1 python ...`, os.environ[\"CUDA_VISIBLE_DEVICES\"] = \"0,1\"); Lightning-AI/lightning "
      "accelerators/cuda.py: _log.info(f\"LOCAL_RANK: {local_rank} - CUDA_VISIBLE_DEVICES: [{devices}]\") (1.x-2.x)"),
    W(Symptom.PARALLEL_SIZE, ("WORLD_SIZE", "world_size", "world size: ", "global_world_sizes=[", "Num processes: ", "n_gpu: ",
                              "store-based barrier for key", "num_local_procs="),
      r"\b(?P<setting>WORLD_SIZE|world_size)(?:[\"']\])?\s{0,2}[=:]\s{0,2}[\"']?(?P<count>\d{1,6})\b"
      r"|\busing (?P<setting>world size): (?P<count>\d{1,6}),|\b(?P<setting>global_world_sizes)=\[(?P<count>\d{1,6})\b"
      r"|^\s{0,4}(?P<setting>Num processes): (?P<count>\d{1,6})\s{0,4}$|\b(?P<setting>n_gpu): (?P<count>\d{1,3})\b"
      r"|Completed (?P<setting>store-based barrier) for key:\S{1,200} with (?P<count>\d{1,6}) nodes"
      r"|\b(?P<setting>num_local_procs)=(?P<count>\d{1,4})\b",
      "pytorch/pytorch torch/distributed/run.py sets WORLD_SIZE for each worker and torch/distributed/elastic/agent/server/api.py "
      "logs \"  global_world_sizes=%(global_world_sizes)s\" (2.13.0 here), distributed_c10d.py \"Rank %s: Completed store-based "
      "barrier for key:%s with %s nodes.\"; NVIDIA/Megatron-LM arguments.py \"using world size: {}, data-parallel size: {}, ...\" "
      "(23.04 to core_r0.x); huggingface/accelerate state.py PartialState.__repr__ \"Num processes: {self.num_processes}\" "
      "(v0.5.0-v1.14.0); huggingface/transformers examples' logger.warning(f\"Process rank: ..., n_gpu: {training_args.n_gpu}\"); "
      "microsoft/DeepSpeed launcher/launch.py logger.info(f\"nnodes={num_nodes}, num_local_procs={num_local_procs}, ...\")"),
    W(Symptom.PARALLEL_SIZE, ("mpirun", "mpiexec", "srun "),
      r"\b(?:mpirun|mpiexec|srun)\b[^\n]{0,120}?\s(?P<setting>-np|-n|--np|--ntasks|--ntasks-per-node)[= ](?P<count>\d{1,5})\b",
      "Open MPI mpirun(1) \"-np, -n <#>: Run this many copies of the program\" (as NVIDIA/TensorRT-LLM's docs launch "
      "`mpirun -n 2 ...`); Slurm srun(1) \"-n, --ntasks=<number>\" and \"--ntasks-per-node=<ntasks>\""),
    W(Symptom.PARALLEL_SIZE, ("Trainer(", "--trainer.devices", "--trainer.gpus"),
      r"\bTrainer\([^\n]{0,200}?\b(?P<setting>gpus|devices)\s{0,2}=\s{0,2}(?P<count>\d{1,3})\b|--trainer\.(?P<setting>devices|gpus)[= ](?P<count>\d{1,3})\b",
      "Lightning-AI/lightning Trainer(devices=N) (1.6+; Trainer(gpus=N) before 2.0) and LightningCLI's --trainer.devices"),
    # TensorFlow's MirroredStrategy names its devices: the GPU entries of the tuple are the GPUs taking part
    W(Symptom.GPUS_DESCRIBED, ("Using MirroredStrategy with devices",),
      r"Using MirroredStrategy with devices \((?P<count>'[^'()\n]{1,120}/device:GPU:\d{1,3}'(?:, '[^'()\n]{1,120}/device:GPU:\d{1,3}'){1,63})\)",
      "tensorflow/tensorflow tensorflow/python/distribute/mirrored_strategy.py MirroredExtended._initialize_single_worker: "
      "logging.info(\"Using MirroredStrategy with devices %r\", devices) (TF 2.x; the repr of a tuple of device strings)"),
    # how users state the scale in words: "on 2 GPUs", "two NVIDIA GPUs", "multiple GPUs", "multi-GPU training"
    W(Symptom.GPUS_DESCRIBED, ("GPUs", "gpus", "GPU's", "cards", "multi-GPU", "multi-gpu", "Multi-GPU", "Multi-gpu", "multi gpu", "Multi GPU",
                               "multi GPU", "multigpu", "MultiGPU"),
      r"(?<![\w.=-])(?P<count>[2-9]|[1-9]\d{1,2}|two|three|four|five|six|seven|eight|sixteen|dual|quad|multiple|several|both)"
      r"\s{0,2}(?:[x×]\s{0,2})?(?:(?!per\b|of\b|and\b|or\b|to\b)[\w-]{1,20}\s{1,2}){0,2}(?:GPUs|gpus|GPU's|graphics cards|cards)\b"
      r"|\b(?P<count>multi)[- ]?gpus?\b(?=\s{0,2}(?:training|inference|runs?|setups?|settings?|machines?|servers?|nodes?|hosts?|systems?|jobs?|environments?|mode|cases?|but|and|with|on|\)|,|\.|$))",
      "users' descriptions of the run's scale in public issue threads of pytorch/pytorch, vllm-project/vllm and "
      "huggingface/transformers (\"training on 2 GPUs\", \"two NVIDIA GPUs\", \"with multiple GPUs\", \"multi-GPU training\")",
      ignore_case=True),
    W(Symptom.GPUS_DESCRIBED, ("GPU", "gpu", "cuda:", "second card", "other card"),
      r"\b(?:GPUs?\s?|gpus?\s?|cuda:)(?P<first>\d{1,2})\s{0,2}(?:and|&|,|->|→|to|<->|and\sGPU|and\sgpu)\s{0,2}(?:GPU\s?|gpu\s?|cuda:)?(?P<second>\d{1,2})\b|\bthe\s(?:second|2nd|other)\s(?:GPU|gpu|card)\b",
      "two GPUs named together, as users and tools write them (\"between GPU0 and GPU1\", \"GPUs 0 and 1\", \"cuda:0 -> cuda:1\"): "
      "users' reports in public issue threads of pytorch/pytorch and NVIDIA/nccl; NVIDIA/cuda-samples simpleP2P's \"GPU%d\" names",
      given=(("count", 2),)),
    W(Symptom.NVLINK_ABSENT, ("NVLink", "nvlink", "NVLINK", "NvLink", "Nvlink"),
      r"\b(?:no|without|w/o|lacks?|non-?|not\s(?:using|connected\sby|linked\sby))\s{0,2}(?:an?\s)?nvlink\b|\bnvlink\s{0,3}(?::|=|is)?\s{0,3}"
      r"(?:none|no\b|not\s(?:present|available|supported|connected)|n/a|absent)",
      "users' descriptions in public issue threads of vllm-project/vllm (\"2x V100 PCIe, no NVLink\") and NVIDIA/TensorRT-LLM "
      "(\"PCIe GPUs without NVLink\")", ignore_case=True),
    W(Symptom.CUDA_IPC_FAILED, ("cudaIpcOpenMemHandle", "cudaIpcGetMemHandle", "cuIpcOpenMemHandle"),
      r"(?P<call>cu(?:da)?Ipc(?:Open|Get)MemHandle)[^\n]{0,200}?(?:error|fail|invalid|not supported|cudaError\w{0,30}|\b\d{2,3}\b)",
      "NVIDIA/TensorRT-LLM cpp/tensorrt_llm/runtime/ipcUtils.cpp IpcMemory::allocateIpcMemory: TLLM_CUDA_CHECK(cudaIpcOpenMemHandle(...)) "
      "-> cudaUtils.h check(): \"[TensorRT-LLM][ERROR] CUDA runtime error in %s: %s\" with the call's text (0.7+); and the call named "
      "next to its error in stack notes and CUDA-API traces"),
    W(Symptom.CUDA_IPC_FAILED, (", in cudaIpcOpenMemHandle", ", in cudaIpcGetMemHandle"),
      r"^\s{0,8}File \"[^\"\n]{1,300}\", line \d{1,6}, in (?P<call>cudaIpc(?:Open|Get)MemHandle)\s{0,4}$",
      "vllm-project/vllm vllm/distributed/device_communicators/cuda_wrapper.py (0.5+): CudaRTLibrary.cudaIpcOpenMemHandle calls "
      "CUDART_CHECK, which raises RuntimeError(f\"CUDART error: {error_str}\"): the traceback's frame line names the IPC call that failed"),
    # -- building extensions -------------------------------------------------------------------------
    W(Symptom.NVCC_ARCH_UNSUPPORTED, ("Unsupported gpu architecture", "unsupported gpu architecture", "is not defined for option 'gpu-architecture'", "Unknown CUDA arch"),
      r"Unsupported gpu architecture '(?P<arch>(?:compute|sm)_\d{2,3}[af]?)'|Value '(?P<arch>(?:compute|sm)_\d{2,3}[af]?)' is not defined for option "
      r"'gpu-architecture'|Unknown CUDA arch \((?P<arch>[\d.]{1,5}(?:\+PTX)?)\) or GPU not supported",
      "NVIDIA nvcc (CUDA 8-12): \"nvcc fatal   : Unsupported gpu architecture 'compute_%s'\" and \"nvcc fatal   : Value '%s' is not defined for "
      "option 'gpu-architecture'\"; pytorch/pytorch torch/utils/cpp_extension.py _get_cuda_arch_flags (1.8-2.x): "
      "ValueError(f\"Unknown CUDA arch ({arch}) or GPU not supported\")", ignore_case=True),
    W(Symptom.CUDA_HEADER_MISSING, ("No such file or directory", "file not found"),
      r"fatal error: '?(?P<header>(?:cuda\w{0,20}|cu(?:rand|blas|sparse|fft|solver|dnn|pti)\w{0,20}|nccl|nvrtc|nvml|nvToolsExt\w{0,8}|"
      r"(?:thrust|cub|cuda)/[\w/]{1,60}|crt/\w{1,40})\.(?:h|hpp|cuh))'?(?:: No such file or directory| file not found)",
      "GCC libcpp files.cc open_file_failed: \"fatal error: %s: No such file or directory\" (gcc 4.x-14) and clang's "
      "\"fatal error: '%s' file not found\" (clang 3-18), for a header of the CUDA toolkit (cuda_runtime.h, curand_kernel.h, cublas_v2.h...)"),
    W(Symptom.BUILD_FAILED, ("ninja: build stopped", "collect2: error: ld returned", "Error building extension", " failed with exit status ",
                             " failed with exit code "),
      r"ninja: build stopped: subcommand failed|collect2: error: ld returned \d{1,3} exit status|Error building extension '(?P<extension>[\w.-]{1,80})'"
      r"|error: command '(?P<command>[^'\n]{1,200})' failed with exit (?:status|code) \d{1,3}",
      "ninja src/build.cc \"ninja: build stopped: %s.\" (1.x); GCC collect2.cc \"ld returned %d exit status\"; pytorch/pytorch "
      "torch/utils/cpp_extension.py _run_ninja_build: RuntimeError(\"Error building extension '{name}'\") (1.0-2.x); setuptools/distutils "
      "spawn: \"error: command %r failed with exit status %d\" (distutils, setuptools < 59) and \"... failed with exit code %d\" (59+)"),
    # -- the network --------------------------------------------------------------------------------
    W(Symptom.HOST_UNRESOLVED, ("network addresses of (",),
      r"The (?:IPv[46] )?network addresses of \((?P<host>[^,\s()]{1,255}), (?P<port>\d{1,5})\) cannot be retrieved \(gai error: "
      r"(?P<gai_error>-?\d{1,3}) - (?P<reason>[^)\n]{1,80})\)",
      "pytorch/pytorch torch/csrc/distributed/c10d/socket.cpp (1.10-2.x): \"The {}network addresses of ({}, {}) cannot be retrieved "
      "(gai error: {} - {}).\" (recorded: corpus/cpu/tcpstore_host_unresolvable.log, torch 2.13.0)"),
    W(Symptom.HOST_UNRESOLVED, ("gaierror: [Errno -2]", "gaierror: [Errno -3]", "gaierror: [Errno -5]", "gaierror: [Errno 8]",
                                "gaierror: [Errno 11001]"),
      r"gaierror: \[Errno (?P<gai_error>-?\d{1,5})\] (?P<reason>Name or service not known|Temporary failure in name resolution|"
      r"No address associated with hostname|nodename nor servname provided, or not known|getaddrinfo failed)",
      "CPython Modules/socketmodule.c set_gaierror: socket.gaierror(error, gai_strerror(error)), str \"[Errno %d] %s\" (glibc EAI_NONAME -2 "
      "\"Name or service not known\", EAI_AGAIN -3; macOS 8 \"nodename nor servname provided, or not known\"; Windows 11001)"),
    W(Symptom.SOCKET_ADDRESS_INVALID, ("is neither AF_INET(",),
      r"connecting to address (?P<address>\S{0,80}) ?with family (?P<family>\d{1,6}) is neither AF_INET\(2\) nor AF_INET6\(10\)",
      "NVIDIA/nccl v2.10.3-1 src/include/socket.h:373 WARN(\"Net : connecting to address %s with family %d is neither AF_INET(%d) nor "
      "AF_INET6(%d)\") (2.x-2.13), src/misc/socket.cc:397 (v2.14.3-1) and \"ncclSocketInit: connecting to address %s ...\" "
      "(src/misc/socket.cc:714 in v2.19.3-1, :814 in v2.27.3-1)"),
    # (the nccl-network family) the interfaces NCCL chose: " [0]eth0:10.0.0.1<0>" lists (2.4+) or one " eth0:10.0.0.1<0>" (2.12+)
    W(Symptom.INTERFACE_CHOSEN, ("Bootstrap : Using", "Bootstrap: Using", "NET/Socket : Using"),
      r"(?P<role>Bootstrap|NET/Socket) ?: Using(?P<interfaces>(?: ?\[\d{1,2}\] ?| )[^\s:<\[\]]{1,32}:[^\s<]{1,64}<\d{1,5}>"
      r"(?:(?: ?\[\d{1,2}\] ?| )[^\s:<\[\]]{1,32}:[^\s<]{1,64}<\d{1,5}>){0,15})",
      "NVIDIA/nccl src/bootstrap.cc INFO(NCCL_INIT, \"Bootstrap : Using%s\", line) with \" [%d]%s:%s\" per interface (v2.4.8-1..v2.11) "
      "and \" %s:\" + ncclSocketToString (v2.12.12-1..v2.26: one interface), INFO(NCCL_BOOTSTRAP, \"Bootstrap: Using%s\") (v2.27.3-1+); "
      "src/transport/net_socket.cc INFO(NCCL_INIT|NCCL_NET, \"NET/Socket : Using%s\", line) with \" [%d]%s:%s\" (v2.4.8-1..v2.30.7-1)"),
    W(Symptom.INTERFACE_CHOSEN, ("NET : Using interface ",),
      r"NET : Using interface (?P<interfaces>[^\s:<\[\]]{1,32}:[^\s<]{1,64}<\d{1,5}>)",
      "NVIDIA/nccl v2.3.5-5..v2.3.7-1 src/include/socket.h findInterfaces: INFO(INIT|NET, \"NET : Using interface %s:%s\", "
      "interface->ifa_name, socketToString(...))", given=(("role", "NET"),)),
    W(Symptom.INTERFACE_CHOSEN, ("; OOB ",),
      r"NET/IB ?: ?Using[^\n]{0,600}?; OOB (?P<interfaces>[^\s:<\[\]]{1,32}:[^\s<]{1,64}<\d{1,5}>)",
      "NVIDIA/nccl src/transport/net_ib.cc INFO(NCCL_INIT|NCCL_NET, \"NET/IB : Using%s ; OOB %s:%s\", ...) (v2.4.8-1..v2.20) and "
      "\"NET/IB : Using%s %s; OOB %s:%s\" (v2.21.5-1; src/transport/net_ib/init.cc v2.30.7-1): the socket interface IB connects over",
      given=(("role", "IB-OOB"),)),
    W(Symptom.INTERFACE_CHOSEN, ("Using the loopback address as fallback",), r"Unable to resolve hostname to a \(local\) address\. Using the loopback address as fallback",
      "pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupGloo.cpp createDefaultDevice: TORCH_WARN_ONCE(\"Unable to resolve hostname to "
      "a (local) address. \", \"Using the loopback address as fallback. \", ...) (strings of torch 2.13.0's libtorch_cpu.so): Gloo bound "
      "to the loopback", given=(("role", "Gloo"), ("interfaces", "lo:127.0.0.1<0>"))),
    W(Symptom.NET_CHOSEN, ("Using network ",), r"\bUsing network (?P<net>[A-Za-z][\w .-]{0,40}?)\s{0,4}$",
      "NVIDIA/nccl src/init.cc INFO(NCCL_INIT, \"Using network %s\", ncclNetName()) (v2.7.8-1..v2.12) and comm->ncclNet->name "
      "(v2.18.5-1..v2.30.7-1): \"Socket\", \"IB\" or a net plugin's name (\"AWS Libfabric\", \"FastSocket\")"),
    W(Symptom.NET_CHOSEN, ("NET/IB : Using", "NET/IB: Using"), r"NET/IB ?: ?Using ?\[\d{1,3}\]", "NVIDIA/nccl src/transport/net_ib.cc "
      "\"NET/IB : Using%s ; OOB %s:%s\" with \" [%d]%s:%d/%s\" per device (v2.4.8-1..v2.20), \" [%d]={...}\" merged devices (v2.21.5-1+)",
      given=(("net", "IB"),)),
    W(Symptom.IB_ABSENT, ("NET/IB : No device found", "Failed to open libibverbs"),
      r"NET/IB : No device found|Failed to open libibverbs\.so",
      "NVIDIA/nccl src/transport/net_ib.cc INFO(NCCL_INIT|NCCL_NET, \"NET/IB : No device found.\") (v2.4.8-1..v2.21.5-1; "
      "src/transport/net_ib/init.cc v2.30.7-1) and src/misc/ibvsymbols.cc INFO(NCCL_INIT, \"Failed to open libibverbs.so[.1]\") (v2.19+)"),
    W(Symptom.ROCE_LINK, ("/RoCE",), r"NET/IB ?: ?Using[^\n]{0,600}?\[\d{1,3}\] ?(?P<hca>[\w.-]{1,32}):\d{1,3}/RoCE",
      "NVIDIA/nccl src/transport/net_ib.cc \" [%d]%s:%d/%s\" with link == IBV_LINK_LAYER_INFINIBAND ? \"IB\" : \"RoCE\" in \"NET/IB : "
      "Using%s ; OOB %s:%s\" (v2.4.8-1..v2.20) and the merged-device form (v2.21.5-1 net_ib.cc:525/533)"),
    W(Symptom.ROCE_LINK, ("link_layer:",), r"^\s{0,16}link_layer:\s{1,16}Ethernet\b",
      "linux-rdma/rdma-core libibverbs/examples/devinfo.c print_hca_cap: printf(\"\\t\\t\\tlink_layer:\\t\\t%s\\n\", "
      "link_layer_str(port_attr.link_layer)) (ibv_devinfo; \"Ethernet\" for RoCE ports)"),
    # a connect that failed for good (a retry in progress is not one)
    W(Symptom.PEER_CONNECT_FAILED, ("Connect to ", "connect to ", "Call to connect ", "socketPollConnect to "),
      r"(?:^|: |Net : |WARN )Connect to (?P<peer>[^<\s]{1,255})<(?P<port>\d{1,5})> (?:failed : |returned \d{1,5}\()(?P<reason>[^\n)]{1,80})"
      r"|\bconnect to (?P<peer>[^<\s]{1,255})<(?P<port>\d{1,5})> returned (?P<reason>[^,\n]{1,80}), exceeded error retry count"
      r"|socketPollConnect to (?P<peer>[^<\s]{1,255})<(?P<port>\d{1,5})> failed with error (?P<reason>[^\n]{1,80})"
      r"|Call to connect (?:timeout|failed) : (?P<reason>[^\n]{1,80})",
      "NVIDIA/nccl: src/include/core.h SYSCHECKNTIMES WARN(\"Call to \" name \" timeout : %s\") (v2.3.7-1; include/checks.h to v2.9); "
      "include/socket.h WARN(\"Connect to %s failed : %s\") (v2.4-v2.9); src/misc/socket.cc \"Net : Connect to %s failed : %s\" "
      "(v2.10-v2.15), \"socketStartConnect: Connect to %s failed : %s\" (v2.16-v2.23), \"%s: connect to %s returned %s, exceeded error "
      "retry count after %d attempts\" (v2.24.3-1+), \"socketPollConnect to %s failed with error %s\" (v2.27.7-1)",
      given=(("layer", "nccl"),)),
    W(Symptom.PEER_CONNECT_FAILED, ("The client socket has failed to connect to ", "The client socket has timed out after "),
      r"The client socket has failed to connect to (?:\[(?P<peer>[^\]\s]{1,255})\]|(?P<peer>[^\s:\[]{1,255})):(?P<port>\d{1,5}) "
      r"\(errno: \d{1,5} - (?P<reason>[^)\n]{1,80})\)"
      r"|The client socket has (?P<reason>timed out) after \d{1,9}m?s while trying to connect to \((?P<peer>[^,\s]{1,255}), (?P<port>\d{1,5})\)",
      "pytorch/pytorch torch/csrc/distributed/c10d/socket.cpp (1.13-2.x): \"The client socket has failed to connect to {} {}.\" "
      "(\"[host]:port\", \"(errno: %d - %s)\") and \"The client socket has timed out after {} while trying to connect to ({}, {}).\" "
      "(strings of torch 2.13.0's libtorch_cpu.so; recorded: corpus/cpu/init_pg_unreachable.log)", given=(("layer", "c10d"),)),
    W(Symptom.PEER_CONNECTION_CLOSED, ("Connection closed by remote peer", "failed : Connection reset by peer"),
      r"Connection closed by remote peer(?: (?P<peer>[^<\s]{1,255})<(?P<port>\d{1,5})>)?"
      r"|Call to recv (?:from (?P<peer>[^<\s]{1,255})<(?P<port>\d{1,5})> )?failed : Connection reset by peer",
      "NVIDIA/nccl: WARN(\"Net : Connection closed by remote peer\") (src/include/socket.h v2.3.5-5..v2.9), \"Net : Connection closed "
      "by remote peer %s\" (src/misc/socket.cc v2.10-v2.15), \"socketProgress: Connection closed by remote peer %s\" (v2.16-v2.30.7-1); "
      "\"Call to recv failed : %s\" (v2.4-v2.9) and \"socketProgressOpt: Call to recv from %s failed : %s\" (v2.10-v2.26)",
      given=(("layer", "nccl"),)),
    W(Symptom.PEER_CONNECTION_CLOSED, ("Read error [", "Connection closed by peer ["),
      r"Read error \[(?P<peer>[^\]\s]{1,255})\]:(?P<port>\d{1,5}): Connection reset by peer|Connection closed by peer \[(?P<peer>[^\]\s]{1,255})\]:(?P<port>\d{1,5})",
      "pytorch/gloo gloo/transport/tcp/pair.cc: GLOO_ERROR \"Read error \", peer, \": \", strerror(errno) and \"Connection closed by "
      "peer \", peer (recorded: corpus/cpu/gloo_peer_killed.log, torch 2.13.0)", given=(("layer", "gloo"),)),
    # the lowest layer's words, whatever program carried them (ssh, curl, git, Python, Go, a launcher's own
    # message): the resolver's gai_strerror text and the socket errno's strerror text (fallbacks: a carrier's
    # own wording above keeps its facts)
    W(Symptom.HOST_UNRESOLVED, ("Name or service not known", "Temporary failure in name resolution", "No address associated with hostname",
                                "nodename nor servname provided", "Name does not resolve", "Could not resolve host", "no such host"),
      r"(?:(?:resolve(?: hostname)?|resolving|lookup|hostname|getaddrinfo)[\s(]{1,4}'?(?P<host>[A-Za-z0-9][\w.-]{0,252}?)'?(?::\d{1,5})?[:\s()][^\n]{0,160}?)?"
      r"(?P<reason>Name or service not known|Temporary failure in name resolution|No address associated with hostname|"
      r"nodename nor servname provided, or not known|Name does not resolve|Could not resolve host(?!name)|no such host)(?:: (?P<host>[A-Za-z0-9][\w.-]{0,252}))?",
      "glibc resolv/gai_strerror-strs.h (EAI_NONAME \"Name or service not known\", EAI_AGAIN \"Temporary failure in name resolution\", "
      "EAI_NODATA \"No address associated with hostname\"), musl src/network/gai_strerror.c (\"Name does not resolve\"), macOS libinfo; "
      "as carried by OpenSSH (\"ssh: Could not resolve hostname %s: %s\", recorded here with ssh 9.2) and curl lib/strerror.c "
      "(\"Could not resolve host: %s\", recorded here with curl 7.88); Go net's \"lookup %s: no such host\"", fallback=True),
    W(Symptom.PEER_CONNECT_FAILED, ("Connection refused", "connection refused", "No route to host", "no route to host",
                                    "Network is unreachable", "network is unreachable", "Host is unreachable", "Connection timed out"),
      # (not a line that says it will retry: an attempt while the other side starts is no failure yet)
      r"^(?![^\n]{0,600}?\bretry(?:ing)?\b)[^\n]{0,600}?"
      r"(?:(?P<peer>(?:\d{1,3}\.){3}\d{1,3}|[A-Za-z][\w-]{0,62}(?:\.[\w-]{1,63}){0,8})(?::| port )(?P<port>\d{1,5})\b[^\n]{0,200}?)?"
      # (ETIMEDOUT alone is also a read's or a download's timeout: only where the line says it was a connect)
      r"(?P<reason>Connection refused|No route to host|Network is unreachable|Host is unreachable|(?<=\bconnect\w{0,4}\b[^\n]{0,200}?)Connection timed out)",
      "glibc sysdeps/gnu/errlist.h strerror (ECONNREFUSED \"Connection refused\", EHOSTUNREACH \"No route to host\", ENETUNREACH "
      "\"Network is unreachable\", ETIMEDOUT \"Connection timed out\"), musl src/errno/__strerror.h (\"Host is unreachable\"), Go syscall "
      "(lower case); as carried by CPython's OSError (\"ConnectionRefusedError: [Errno 111] Connection refused\", \"OSError: [Errno 113] "
      "No route to host\", recorded here with CPython 3.11) and git connect.c (\"%s[%d: %s]: errno=%s\", recorded here with git 2.39)",
      ignore_case=True, fallback=True, given=(("layer", "os"),)),
    # ncclGetErrorString's default: a result code this libnccl does not know (NVIDIA/nccl src/init.cc, v2.4.8-1..v2.30.7-1)
    W(Symptom.NCCL_RESULT_UNKNOWN, ("unknown result code",),
      r"NCCL error (?:in: )?(?P<file>[^\s:,']{1,300}):(?P<line>\d{1,6}),? '?unknown result code",
      "NVIDIA/nccl-tests src/common.h NCCLCHECK printf(\"Failed, NCCL error %s:%d '%s'\\n\", __FILE__, __LINE__, ncclGetErrorString(res)) "
      "(the form TensorRT-LLM's and many programs' NCCLCHECK copy) and PyTorch torch/csrc/distributed/c10d/NCCLUtils.hpp C10D_NCCL_CHECK "
      "\"NCCL error in: \" + __FILE__ + \":\" + __LINE__ + \", \" + ncclGetErrorWithVersion(result) (1.13-2.x), with NVIDIA/nccl src/init.cc "
      "ncclGetErrorString's default \"unknown result code\""),
    W(Symptom.NCCL_RESULT_UNKNOWN, ("unknown result code",),
      r"(?:NCCL|Nccl|nccl)\w{0,20} ?(?:Error|error)\b[^\n]{0,200}?unknown result code",
      "vLLM vllm/distributed/device_communicators/pynccl_wrapper.py NCCL_CHECK: RuntimeError(f\"NCCL error: {error_str}\") (0.4.1+) and "
      "SGLang sglang/srt/distributed/device_communicators/pynccl_wrapper.py (the same), each with NVIDIA/nccl src/init.cc "
      "ncclGetErrorString's default \"unknown result code\""),
    # -- a call into NCCL failed: ncclGetErrorString's words in any carrier ---------------------------------
    W(Symptom.NCCL_ERROR, ("NCCL error in: ",),
      r"NCCL error in: (?P<file>[^\s,]{1,300}):(?P<line>\d{1,6}), (?P<message>(?P<result>[a-zA-Z][^\n]{0,200}))",
      "pytorch/pytorch C10D_NCCL_CHECK: \"NCCL error in: \" + __FILE__ + \":\" + std::to_string(__LINE__) + \", \" + "
      "ncclGetErrorWithVersion(result) (torch/lib/c10d/NCCLUtils.hpp 1.0-1.8, torch/csrc/distributed/c10d/NCCLUtils.hpp 1.9-2.x; "
      "ProcessGroupNCCL.cpp's own C10D_NCCL_CHECK in 1.0-1.2), the message NVIDIA/nccl src/init.cc ncclGetErrorString's"),
    W(Symptom.NCCL_ERROR, ("NCCL error: ",),
      r"(?<![\w-])NCCL error: (?P<message>(?P<result>[a-z][^\n]{1,200}))",
      "vllm-project/vllm vllm/distributed/device_communicators/pynccl_wrapper.py NCCL_CHECK: raise RuntimeError(f\"NCCL error: "
      "{error_str}\") with error_str = ncclGetErrorString(result) (0.4.1+; sgl-project/sglang's copy the same)"),
    W(Symptom.NCCL_ERROR, ("NCCL failure ", "NCCL error "),
      r"(?:(?:Test )?NCCL failure|Failed, NCCL error) (?P<file>[^\s:']{1,300}):(?P<line>\d{1,6}) '(?P<message>(?P<result>[a-z][^'\n]{1,200}))'",
      "NVIDIA/nccl-tests src/common.h NCCLCHECK: printf(\"%s: Test NCCL failure %s:%d '%s'\\n\", hostname, __FILE__, __LINE__, "
      "ncclGetErrorString(res)) (2.x; 1.x \"NCCL failure %s:%d '%s'\"), and the \"Failed, NCCL error %s:%d '%s'\" NCCLCHECK that "
      "NVIDIA/TensorRT-LLM's plugins and many programs copy"),
    W(Symptom.NCCL_ERROR, ("NCCL Error ",), r"\bNCCL Error (?P<result>[1-7]): (?P<message>[a-z][^\n]{1,200})",
      "pytorch/pytorch torch/csrc/cuda/nccl.cpp throw_nccl_error: \"NCCL Error \" + std::to_string(status) + \": \" + "
      "ncclGetErrorString(status) (torch.cuda.nccl, 1.0-2.x)"),
    # the result's own words wherever a program carried them (Horovod's "ncclAllReduce failed: %s", DeepSpeed's and users' prints)
    W(Symptom.NCCL_ERROR, ("unhandled cuda error", "unhandled system error", "remote process exited or there was a network error"),
      r"(?P<message>(?P<result>unhandled (?:cuda|system) error|remote process exited or there was a network error)[^\n]{0,120})",
      "NVIDIA/nccl src/init.cc ncclGetErrorString: \"unhandled cuda error\", \"unhandled system error\" (2.4-2.17; \" (run with "
      "NCCL_DEBUG=INFO for details)\" added in 2.18), \"remote process exited or there was a network error\" (2.13+), as carried "
      "by horovod/horovod horovod/common/ops/nccl_operations.cc nccl_context's std::string(op_name) + \" failed: \" + "
      "ncclGetErrorString(nccl_result)", fallback=True),
    W(Symptom.NCCL_ERROR, ("ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError", "ncclInvalidUsage", "ncclInvalidArgument",
                           "ncclRemoteError", "NCCL_ERROR_"),
      r"\b(?P<result>nccl(?:UnhandledCudaError|SystemError|InternalError|InvalidUsage|InvalidArgument|RemoteError)|NCCL_ERROR_"
      r"(?:UNHANDLED_CUDA_ERROR|SYSTEM_ERROR|INTERNAL_ERROR|INVALID_ARGUMENT|INVALID_USAGE|REMOTE_ERROR))\b(?P<message>[^\n]{0,160})",
      "pytorch/pytorch NCCLUtils getNcclErrorDetailStr: \"ncclUnhandledCudaError: Call to CUDA function failed.\", \"ncclSystemError: "
      "System call (socket, malloc, munmap, etc) failed.\" (1.8-2.x), and cupy cupy_backends/cuda/libs/nccl.pyx NcclError: "
      "'%s: %s' % (ERROR_NAMES[status], ncclGetErrorString(status)) with names NCCL_ERROR_UNHANDLED_CUDA_ERROR ... NCCL_ERROR_REMOTE_ERROR"),
    # how many nodes: launchers' own words, command lines, and users' descriptions
    # (not NCCL's "nRanks %d nNodes %d localRanks %d": its nodes are NCCL's own grouping, and one host with
    # NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 reports nNodes 2: corpus/gpu/nccl_p2p_shm_disable.log)
    W(Symptom.MULTI_NODE, ("min_nodes ", "max_nodes ", "--nnodes", "--num_nodes", "--num-nodes", "--nodes", "nnodes="),
      r"^\s{0,4}(?:min|max)_nodes\s{1,24}: (?P<nodes>\d{1,5})\b|--nnodes[= ](?:\d{1,5}:)?(?P<nodes>\d{1,5})\b"
      r"|--num[_-]nodes[= ](?P<nodes>\d{1,5})\b|(?:#SBATCH\s{1,4})?--nodes[= ](?P<nodes>\d{1,5})\b|\bnnodes=(?P<nodes>\d{1,5})\b",
      "pytorch/pytorch torch/distributed/launcher/api.py launch_agent's config dump \"  min_nodes                : %(min_nodes)s\" "
      "(2.13.0 here) and torch/distributed/run.py \"--nnodes\" (\"1:4\" elastic form); microsoft/DeepSpeed deepspeed/launcher/runner.py "
      "\"--num_nodes\"; sgl-project/sglang server_args \"--nnodes\" (ServerArgs repr \"nnodes=2\"); Slurm sbatch/srun \"--nodes=N\""),
    W(Symptom.MULTI_NODE, (" nodes", " Nodes", " machines", " servers", "multi-node", "Multi-node", "multinode", "Multinode",
                           "multi node", "Multi node", "head node", "worker node", "master node"),
      r"\b(?P<nodes>[2-9]|[1-9]\d{1,3}|two|three|four|six|eight|sixteen)\s{0,2}(?:GPU\s{1,2})?(?:nodes|machines|servers)\b"
      r"|\b(?:multi[- ]?(?:node|machine)|(?:head|worker|master) node)s?\b",
      "users' descriptions in public issue threads of NVIDIA/nccl, pytorch/pytorch and sgl-project/sglang (\"two nodes\", "
      "\"2 machines with 8 GPUs\", \"multi-node training\", \"the head node reports\")", ignore_case=True, given=(("nodes", 2),)),
    W(Symptom.SHM_CUDA_FAILURE, ("transport/shm.cc:",),
      r"transport/shm\.cc:\d{1,5} NCCL WARN (?:Cuda failure|Cuda driver error|CUDA failure)",
      "NVIDIA/nccl v2.23.4-1..v2.28.9-1 src/transport/shm.cc: CUCHECK/CUDACHECK in the cuMem host-memory path (cuMemImportFromShareableHandle, "
      "cudaGetDevice...) failing with include/checks.h WARN(\"Cuda failure '%s'\") under debug.cc's \"[%d] %s:%d NCCL WARN \" prefix",
      whole_line=True),
    # A legacy segment's name is mkstemp's "/dev/shm/nccl-XXXXXX" (misc/shmutils.cc, 2.12+; "nccl-shm-send-%lx-%d-%d(-%d)" before)
    # and its size the sender's buffer size. Since 2.23 a sender on the cuMem host path sends a cuMem descriptor in the same
    # union (transport/shm.cc ncclShmAllocateShareableBuffer, desc->legacy = false); a receiver that took the legacy path reads
    # it as a segment suffix and size: a name of other characters, or size 0.
    W(Symptom.SHM_CUDA_FAILURE, ("attaching to shared memory segment",),
      r"Error while attaching to shared memory segment (?!(?:/dev/shm/)?nccl-(?:[A-Za-z0-9]{6}|shm-(?:send|recv)-[0-9a-f]{1,16}-\d{1,6}-\d{1,6}"
      r"(?:-\d{1,6})?) \(size [1-9])(?P<shm_path>[^\n]{0,60}?) \(size (?P<size>\d{1,15})\)",
      "NVIDIA/nccl misc/shmutils.cc (2.12-2.29) / os/linux.cc (2.30) ncclShmOpen: WARN(\"Error while %s shared memory segment %s (size "
      "%ld)...\", \"attaching to\", shmPath, shmSize) with shmPath built from the peer's descriptor (transport/shm.cc "
      "ncclShmImportShareableBuffer's legacy branch, 2.23+) where that peer sent a cuMem one"),
    # -- the platform's services -------------------------------------------------------------------
    W(Symptom.FABRIC_MANAGER_DOWN, ("fabric manager NVIDIA GPU driver interface version",),
      r"fabric manager NVIDIA GPU driver interface version (?P<fm_version>\d{2,3}\.\d{1,3}(?:\.\d{1,3})?) do(?:es)?n['’]t match "
      r"with driver version (?P<driver_version>\d{2,3}\.\d{1,3}(?:\.\d{1,3})?)",
      "NVIDIA Fabric Manager (nv-fabricmanager, closed source) start-up check as it logs it to the journal: \"fabric manager NVIDIA "
      "GPU driver interface version %s don't match with driver version %s. Please update with matching NVIDIA driver package.\" "
      "(releases 460-590) and \"... doesn't match with driver version %s. Please update with the matching NVIDIA driver package.\" "
      "(newer releases)"),
    W(Symptom.FABRIC_MANAGER_DOWN, ("nvidia-fabricmanager.service:", "NVIDIA fabric manager service", "nv-fabricmanager "),
      r"Failed to start NVIDIA fabric manager service|nvidia-fabricmanager\.service: (?:(?:Main|Control) process exited, code=\w{1,10}, "
      r"status=[1-9]\d{0,2}/\w{1,20}|Failed with result '[\w-]{1,30}')|ExecStart=\S{0,80}nv-fabricmanager\b[^\n]{0,200}\(code=\w{1,10}, status=[1-9]\d{0,2}/",
      "systemd's words for a unit that failed, with the unit NVIDIA's nvidia-fabricmanager package installs (Description=NVIDIA "
      "fabric manager service, ExecStart=/usr/bin/nv-fabricmanager): systemd src/core/job.c \"Failed to start %s.\" (v219-v255), "
      "src/core/service.c log_unit_warning \"%s process exited, code=%s, status=%i/%s\" and \"Failed with result '%s'.\" (v230+), "
      "systemctl status's \"Process: %u ExecStart=%s (code=%s, status=%i/%s)\" line"),
    # -- any error a logger reported ---------------------------------------------------------------
    W(Symptom.ERROR_LOGGED, ("ERROR", "FATAL", "CRITICAL"),
      r"^\s{0,4}(?:\[(?:ERROR|FATAL|CRITICAL)\]|(?:ERROR|FATAL|CRITICAL)(?::(?:[\w.]{1,40}:)?|\s{1,4}\d\d-\d\d \d\d:\d\d:\d\d\S{0,8}\s{1,4}[^\]\n]{0,80}\]|\s{1,2}-\s|\s{0,2}\|))"
      r"\s{0,4}(?P<message>\S[^\n]{0,300})|\[(?:TensorRT|TRT|TensorRT-LLM)\](?:\[| )ERROR\]?:?\s{0,4}(?P<message>\S[^\n]{0,300})",
      "CPython logging's default format \"%(levelname)s:%(name)s:%(message)s\" (ERROR:root:...), vllm-project/vllm's "
      "\"%(levelname)s %(asctime)s [%(filename)s:%(lineno)d] %(message)s\" (ERROR 01-02 10:00:00 [file.py:12] ...), loguru's "
      "\"... | ERROR | ...\", DeepSpeed's \"[ERROR]\" tag, TensorRT's ILogger \"[TensorRT] ERROR: \" (7.x) and TensorRT-LLM's "
      "\"[TensorRT-LLM][ERROR] \""),
    # a command-line program's own error line, at the start of the line with no logger around it
    W(Symptom.ERROR_LOGGED, ("Error: ", "error: ", "Fatal error: ", "fatal error: "),
      r"^(?:[Ff]atal\s)?[Ee]rror: (?P<message>[A-Za-z\[('\"`<][^\n]{2,300})",
      "pallets/click exceptions.py ClickException.show: echo(_(\"Error: {message}\").format(...)) (8.x; every click CLI's failure); "
      "IntelPython/mkl-service _mklinitmodule.c: fprintf(stderr, \"Error: mkl-service + Intel(R) MKL: MKL_THREADING_LAYER=INTEL is "
      "incompatible with libgomp.so.1 library. ...\"); CPython distutils/setuptools \"error: command '%s' failed with exit code %d\""),
    W(Symptom.ERROR_LOGGED, ("Scheduler hit an exception:",), r"(?P<message>Scheduler hit an exception:[^\n]{0,300})",
      "sgl-project/sglang python/sglang/srt/managers/scheduler.py run_scheduler_process (0.3+): logger.error(f\"Scheduler hit an "
      "exception: {traceback}\") under sglang's \"[%(asctime)s TP%d] \" prefix, which names no level"),
    # -- which framework ran -----------------------------------------------------------------------
    W(Symptom.FRAMEWORK_SEEN, ("vllm serve", "vllm.entrypoints", "/vllm/", "(APIServer pid=", "(VllmWorker", "(EngineCore", "(RayWorkerVllm"),
      r"vllm serve\b|vllm\.entrypoints|site-packages/vllm/|\((?:APIServer|VllmWorker|EngineCore|RayWorkerVllm)\w{0,12} pid=",
      "vllm-project/vllm: the `vllm serve` CLI (0.5+), `python -m vllm.entrypoints.openai.api_server` (0.2+), frames under "
      "site-packages/vllm/, and the process prefixes \"(APIServer pid=%d)\", \"(VllmWorker rank=%d pid=%d)\" (0.8+)", whole_line=True,
      given=(("framework", "vllm"),)),
    W(Symptom.FRAMEWORK_SEEN, ("[TensorRT-LLM]", "[TRT-LLM]", "/tensorrt_llm/", "trtllm-serve", "trtllm-build"),
      r"\[(?P<framework>TensorRT-LLM|TRT-LLM)\]|site-packages/(?P<framework>tensorrt_llm)/|(?P<framework>trtllm)-(?:serve|build)\b",
      "NVIDIA/TensorRT-LLM: the logger tags \"[TensorRT-LLM][ERROR]\" (C++ TLLM_LOG, 0.5+) and \"[TRT-LLM] [E]\" (Python logger, "
      "0.7+), frames under site-packages/tensorrt_llm/, the trtllm-serve / trtllm-build CLIs", whole_line=True),
    W(Symptom.FRAMEWORK_SEEN, ("sglang.launch_server", "/sglang/", "sglang serve"),
      r"(?P<framework>sglang)\.launch_server|site-packages/(?P<framework>sglang)/|(?P<framework>sglang) serve\b",
      "sgl-project/sglang: `python -m sglang.launch_server` (0.1+), frames under site-packages/sglang/, `sglang serve` (0.5+)",
      whole_line=True),
    # -- peer-to-peer ------------------------------------------------------------------------------
    W(Symptom.PEER_ACCESS_UNSUPPORTED, ("peer access is not supported between these two devices",),
      r"peer access is not supported between these two devices",
      "CUDA runtime cudaGetErrorString(cudaErrorPeerAccessUnsupported = 217) (libcudart 13.0 on this disk; the same string "
      "since CUDA 8): printed by NCCL's CUDACHECK \"Cuda failure '%s'\", TensorRT-LLM's TLLM_CUDA_CHECK and PyTorch's C10_CUDA_CHECK"),
    W(Symptom.PEER_ACCESS_UNSUPPORTED, ("CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", "cudaErrorPeerAccessUnsupported"),
      r"CUDA_ERROR_PEER_ACCESS_UNSUPPORTED|cudaErrorPeerAccessUnsupported",
      "CUDA driver API cuda.h enum name CUDA_ERROR_PEER_ACCESS_UNSUPPORTED (printed by TensorFlow's stream executor and JAX); "
      "runtime enum name cudaErrorPeerAccessUnsupported (printed by CuPy's CUDARuntimeError)"),
    W(Symptom.P2P_UNAVAILABLE, ("Custom allreduce is disabled because",),
      r"Custom allreduce is disabled because your platform lacks GPU P2P capability",
      "vllm-project/vllm 0.3.3 vllm/model_executor/parallel_utils/custom_all_reduce.py and 0.4.0-0.33.0 "
      "vllm/distributed/device_communicators/custom_all_reduce.py: logger.warning(\"Custom allreduce is disabled because your "
      "platform lacks GPU P2P capability[ or P2P test failed]. ...\")"),
    W(Symptom.P2P_UNAVAILABLE, ("P2P is disabled between ",),
      r"P2P is disabled between (?:NVLINK )?connected GPUs (?P<device>\d{1,3}) and (?P<peer_device>\d{1,3})\.",
      "NVIDIA/nccl src/graph/paths.cc p2pCanConnect (v2.12.12-1 to v2.30.7-1): where NVML's P2P status between two GPUs is not OK, "
      "INFO(NCCL_INIT, \"P2P is disabled between connected GPUs %d and %d. You can repress this message with NCCL_IGNORE_DISABLED_P2P=1.\") "
      "and on NVLink WARN(\"P2P is disabled between NVLINK connected GPUs %d and %d. This should not be the case given their "
      "connectivity, and is probably due to a hardware issue. ...\")"),
    W(Symptom.P2P_UNAVAILABLE, ("peer access Device ",), r"Device (?P<device>\d{1,3}) peer access Device (?P<peer_device>\d{1,3}) is not available",
      "NVIDIA/TensorRT-LLM cpp/tensorrt_llm/runtime/bufferManager.cpp: TLLM_LOG_WARNING(\"Device \" ... \" peer access Device \" ... \" is not available.\")"),
    W(Symptom.P2P_UNAVAILABLE, ("CANNOT Access Peer",), r"Device=(?P<device>\d{1,3}) CANNOT Access Peer Device=(?P<peer_device>\d{1,3})",
      "NVIDIA/cuda-samples Samples/5_Domain_Specific/p2pBandwidthLatencyTest/p2pBandwidthLatencyTest.cu: "
      "printf(\"Device=%d %s Access Peer Device=%d\\n\", i, can_access_peer ? \"CAN\" : \"CANNOT\", j)"),
    W(Symptom.P2P_UNAVAILABLE, ("> Peer access from ",), r"Peer access from [^\n]{1,120}?\(GPU(?P<device>\d{1,3})\) -> [^\n]{1,120}?\(GPU(?P<peer_device>\d{1,3})\) : No\b",
      "NVIDIA/cuda-samples Samples/0_Introduction/simpleP2P/simpleP2P.cu: printf(\"> Peer access from %s (GPU%d) -> %s (GPU%d) : %s\\n\", ..., "
      "can_access_peer ? \"Yes\" : \"No\")"),
    W(Symptom.TOO_MANY_PEERS, ("peer mapping resources exhausted", "CUDA_ERROR_TOO_MANY_PEERS", "cudaErrorTooManyPeers"),
      r"peer mapping resources exhausted|CUDA_ERROR_TOO_MANY_PEERS|cudaErrorTooManyPeers",
      "CUDA runtime cudaGetErrorString(cudaErrorTooManyPeers = 711) \"peer mapping resources exhausted\" (libcudart 13.0 on this disk); "
      "CUDA driver API cuda.h CUDA_ERROR_TOO_MANY_PEERS (printed by TensorFlow)"),
    W(Symptom.P2P_BANDWIDTH, ("P2P=Enabled", "P2P=Disabled"),
      r"(?P<direction>Uni|Bi)directional P2P=(?P<p2p>Enabled|Disabled) (?:Bandwidth|Latency)",
      "NVIDIA/cuda-samples p2pBandwidthLatencyTest.cu: \"Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\" (11.x+) "
      "and \"Unidirectional P2P=Enabled Bandwidth Matrix (GB/s)\" (CUDA 8-10 samples)"),
    W(Symptom.IOMMU_FAULT, ("IO_PAGE_FAULT",), r"IO_PAGE_FAULT",
      "Linux drivers/iommu/amd/iommu.c: \"Event logged [IO_PAGE_FAULT device=%04x:%02x:%02x.%x domain=0x%04x address=0x%llx flags=0x%04x]\" "
      "(5.x+; \"AMD-Vi: Event logged [IO_PAGE_FAULT ...\" in 4.x drivers/iommu/amd_iommu.c)"),
    W(Symptom.IOMMU_FAULT, ("DMAR: DRHD: handling fault", "DMAR: [DMA Read", "DMAR: [DMA Write", "DMAR:[fault reason"),
      r"DMAR: ?(?:DRHD: handling fault|\[DMA (?:Read|Write)|\[fault reason)",
      "Linux drivers/iommu/intel/dmar.c: \"DRHD: handling fault status reg %x\" and \"[%s NO_PASID] Request device [%02x:%02x.%d] fault addr 0x%llx\" "
      "(5.x+; 4.x printed \"[DMA Read] Request device [..] fault addr ..\")"),
    W(Symptom.CUSTOM_ALLREDUCE, ("custom_all_reduce", "CustomAllreduce", "customAllReduce", "CustomAllReduce", "custom_allreduce"),
      r"(?P<where>(?<!disable_)custom_all_reduce(?:\w{0,40}\.py|\w{0,40})|CustomAllreduce|customAllReduce\w{0,40}|CustomAllReduce\w{0,40}|custom_allreduce\w{0,40})",
      "vllm-project/vllm vllm/distributed/device_communicators/custom_all_reduce.py (0.4+; class CustomAllreduce) and "
      "NVIDIA/TensorRT-LLM cpp/tensorrt_llm/kernels/customAllReduceKernels.cu (0.5+) in frames, error lines and the logger's file:line",
      whole_line=True),
    # -- numbers -----------------------------------------------------------------------------------
    W(Symptom.WRONG_VALUES, ("Out of bounds values",), r"Out of bounds values : (?P<errors>\d{1,12}) FAILED",
      "NVIDIA/nccl-tests src/common.cu: PRINT(\"# Out of bounds values : %d %s\\n\", errors, errors ? \"FAILED\" : \"OK\") (every release)"),
    W(Symptom.WRONG_VALUES, ("Verification error @ element",), r"Verification error @ element",
      "NVIDIA/cuda-samples simpleP2P.cu: printf(\"Verification error @ element %i: val = %f, ref = %f\\n\", ...) (CUDA 4-12 samples)"),
    # a logged loss that is NaN/inf, in the forms the trainers print it (numerics-loss-nan's samples cite each)
    # lands on the value, not on "loss" (every training step prints a loss); "INF" would land on every "NCCL INFO" line,
    # so an upper-case INF is landed on with the loss word before it
    W(Symptom.NAN_IN_OUTPUT, ("nan", "NaN", "NAN", "inf", "Infinity", "oss INF", "oss: INF", "oss=INF", "OSS INF", "OSS: INF", "OSS=INF"),
      r"(?P<metric>\b(?:[A-Za-z][\w.]{0,40}?)?[Ll](?:oss|OSS))(?:_\w{1,20})?\b['\"]?\s{0,8}(?:[:=]\s{0,8}|is\s{1,3})?['\"]?"
      r"(?:tensor\(|\[)?(?P<loss_value>-?(?:nan|NaN|NAN|inf|Infinity|INF))\b(?!_)",
      "huggingface/transformers v4.30-4.40 Trainer logs printed by ProgressCallback.on_log (str(logs): {'loss': nan, ...}); pytorch/examples "
      "mnist/main.py 'Loss: {:.6f}' and imagenet/main.py AverageMeter 'Loss nan (nan)'; Lightning TQDMProgressBar postfix 'train_loss=nan'; "
      "'{:.6f}'.format(float('nan')) is 'nan'"),
    W(Symptom.NAN_IN_OUTPUT, ("nan", "NaN", "NAN"),
      r"(?<![\w.])`?(?P<loss_value>nan|NaN|NAN)`?s?\s{1,3}(?:values?\s{1,3})?(?:in|for)\s{1,3}(?:the\s|my\s|all\s)?(?:loss(?:es)?|outputs?|logits|gradients|weights|predictions)\b"
      r"|\b(?:loss(?:es)?|outputs?|logits|gradients)\s{1,3}(?:becomes?|became|are|is|goes|went|turns?|turned)\s{1,3}(?:to\s|into\s|all\s)?`?(?P<loss_value>nan|NaN|NAN)\b",
      "users' descriptions in public issue threads of tensorflow/tensorflow and pytorch/pytorch (\"nan in losses after a few "
      "iterations\", \"the loss becomes NaN\")", ignore_case=True),
    W(Symptom.NAN_IN_OUTPUT, ("found NaN in local", "found Inf in local"),
      r"found (?P<loss_value>NaN|Inf) in local (?:forward loss calculation|grad norm)",
      "NVIDIA/Megatron-LM core_r0.8.0 pretrain_gpt.py loss_func \"found NaN in local forward loss calculation\" and core_r0.5.0 "
      "megatron/optimizer/clip_grads.py \"found NaN in local grad norm in backwards pass\""),
    W(Symptom.NAN_IN_OUTPUT, ("Loss became infinite or NaN at iteration", "gradients are Nan/Inf", "Model diverged with loss = NaN",
                              "NaN loss during training"),
      r"Loss became infinite or NaN at iteration=(?P<iteration>\d{1,12})|FloatingPointError: gradients are Nan/Inf|Model diverged with loss = NaN|NaN loss during training",
      "facebookresearch/detectron2 engine/train_loop.py \"Loss became infinite or NaN at iteration={}!\"; facebookresearch/fairseq trainer.py "
      "FloatingPointError(\"gradients are Nan/Inf\"); tensorflow estimator NanLossDuringTrainingError \"NaN loss during training.\" and "
      "\"Model diverged with loss = NaN.\""),
    W(Symptom.GARBAGE_OUTPUT, ("!!!!!!!!!!!!", "############", "????????????", "\ufffd\ufffd\ufffd\ufffd"),
      r"(?P<run>(?<=[\w\"':>]\s{0,2})#{12,}|!{12,}|\?{12,}|\ufffd{4,})",
      "a model answering with one token over and over (vLLM /v1/completions \"text\": \"!!!!...\", llama.cpp/ollama chat "
      "\"####...\"): token 0 / the pad token sampled from NaN or zeroed logits, as in public threads of vllm-project/vllm and ollama/ollama"),
    W(Symptom.GARBAGE_OUTPUT, ("GGGGGGGGGGGGGGGGGGGGGGGG", "gggggggggggggggggggggggg", "AAAAAAAAAAAAAAAAAAAAAAAA", "XXXXXXXXXXXXXXXXXXXXXXXX"),
      r"^[\s>]{0,6}(?P<run>([A-Za-z])\2{23,})\s{0,4}$",
      "a model answering with one letter token over and over on a line of its own (llama.cpp / ollama chat \"GGGGGGGG...\"): the "
      "same token sampled from NaN or zeroed logits, as in public threads of ggml-org/llama.cpp and ollama/ollama"),
    W(Symptom.GARBAGE_OUTPUT, ("gibberish", "Gibberish", "GIBBERISH", "garbage", "Garbage", "GARBAGE", "nonsense", "Nonsense",
                               "garbled", "Garbled", "random tokens", "random characters"),
      r"\b(?:gibberish|garbled|nonsense|random (?:tokens|characters))\b|\bgarbage\b(?!\s{0,2}(?:collect|in\b))",
      "users' notes on a model's answers in public issue threads of vllm-project/vllm, ggml-org/llama.cpp and ollama/ollama "
      "(\"outputs gibberish with tp=2\", \"garbage output\")", ignore_case=True),
    # a report's sentence that the numbers are wrong: an adjective before the values, the values then a verb,
    # values that differ or do not match, a collective that returns the wrong thing (never after advice or a possibility)
    W(Symptom.WRONG_VALUES, ("wrong", "Wrong", "WRONG", "incorrect", "Incorrect", "inconsistent", "Inconsistent", "corrupt", "Corrupt",
                             "differ", "Differ", "mismatch", "Mismatch", "match", "zeros", "nonsens", "Nonsens", "meaningless",
                             "gibberish", "Gibberish", "garbled", "Garbled", "exclamation", "repeated token", "same token", "!!!!"),
      _VALUES_GUARD + r"(?:\b(?:wrong|incorrect|inconsistent|corrupted|corrupt|nonsensical|meaningless)\s{1,3}"
      r"(?:[\w-]{1,20}\s{1,3})?" + _VALUES + r"\b"
      r"|\bdifferent\s{1,3}(?:results?|outputs?|answers?|predictions?|losses|loss\s{1,3}values|gradients|sums?)\b"
      r"|\b" + _VALUES + r"(?:\s{1,3}(?:of|from|on|with|across)\s{1,3}[\w.:()-]{1,30}(?:\s{1,3}[\w.:()-]{1,30}){0,2})?"
      r"\s{1,3}(?:(?:is|are|was|were|looks?|seems?|becomes?|became|gets?|got|comes?\s{1,3}out|came\s{1,3}out|turns?\s{1,3}out|turned\s{1,3}out|"
      r"always|all|just|completely|totally|still|then|also)\s{1,3}){0,3}"
      r"(?:wrong|incorrect|inconsistent|corrupted|corrupt|garbage|gibberish|garbled|nonsense|nonsensical|meaningless|all\s{1,3}zeros?|zeros?|off\b(?!\s{1,3}(?:by|the|on|for))"
      r"|different(?=\s{1,3}(?:with|on|when|between|across|from|than|for|if|each|every|after|depending)\b|\s{0,2}[.,!;)]|\s{0,2}$))\b"
      r"|\b" + _VALUES_PLURAL + r"\s{1,3}(?:differ|diverge|mismatch|(?:do|did)(?:n't|\s{1,3}not)\s{1,3}match)\b"
      r"|\b(?:result|output|answer|value)\s{1,3}(?:differs|diverges|(?:does|did)(?:n't|\s{1,3}not)\s{1,3}match)\b"
      r"|\b(?:all_?reduce|all-reduce|allreduce|reduce_scatter|all_?gather|broadcast|nccl|p2p|copy|copies|transfers?)\w{0,20}(?:\([^()\n]{0,40}\))?"
      r"\s{1,3}(?:returns?|returned|gives?|gave|produces?|produced|yields?|outputs?|results?\s{1,3}in)\s{1,3}(?:the\s{1,3}|only\s{1,3}|all\s{1,3})?"
      r"(?:wrong|incorrect|garbage|corrupted|zeros?|nonsense|inconsistent|different)\b"
      # a model that generates one token over and over: its logits are garbage (NaN/inf argmax to one id)
      r"|\b(?:model|llm|it|server|engine|generation|vllm|sglang|ollama)\w{0,10}\s{1,3}(?:only\s{1,3})?(?:outputs?|generates?|generated|produces?|produced|returns?|returned|prints?|printed|gives?|gave)"
      r"\s{1,3}(?:only\s{1,3}|just\s{1,3})?(?:exclamation\s{1,3}marks|repeated\s{1,3}(?:tokens?|characters?)|the\s{1,3}same\s{1,3}(?:token|character)\s{1,3}(?:over|again|repeated)|!{4,}|gibberish|garbled)"
      r"|\b(?:gibberish|garbled)\s{1,3}(?:output|text|tokens?|responses?|answers?|generations?)\b)",
      "users' reports in public issue threads of pytorch/pytorch, NVIDIA/nccl and vllm-project/vllm (\"all_reduce returns wrong "
      "results on 4 GPUs\", \"the outputs are different with 2 GPUs\", \"results differ between 1 and 2 GPUs\", \"the output of "
      "all_reduce is all zeros on the second GPU\")", ignore_case=True),
    W(Symptom.TENSOR_PRINTED, ("tensor([",), r"tensor\(\[", "pytorch/pytorch torch/_tensor_str.py _str_intern: \"tensor(\" + data + "
      "\", device='cuda:N'\" suffix (0.4-2.x; real output from torch 2.13.0 here)"),
    # -- numeric precision: what the run computes in, and values half precision cannot hold -------------
    # (the run model's precision comes from these; a False/disabled setting states nothing)
    W(Symptom.PRECISION_SET, ("fp16=True", "bf16=True", "fp16 = True", "bf16 = True"),
      r"(?<![\w.])(?P<precision>fp16|bf16)\s{0,2}=\s{0,2}True\b",
      "huggingface/transformers v4.40.0 src/transformers/training_args.py TrainingArguments.__str__: attrs_as_str = "
      "[f\"{k}={v},\\n\" ...] (\"fp16=True,\" / \"bf16=True,\" in the arguments the Trainer logs), and the same keywords in "
      "TrainingArguments(...) calls users paste"),
    W(Symptom.PRECISION_SET, ("--fp16", "--bf16"),
      r"(?<![\w-])--(?P<precision>fp16|bf16)(?![\w-])(?!\s{0,2}[= ]\s{0,2}(?:False|false|0)\b)",
      "huggingface/transformers v4.40.0 HfArgumentParser exposes TrainingArguments' fields as --fp16/--bf16 (examples/pytorch "
      "run_*.py); NVIDIA/Megatron-LM core_r0.8.0 megatron/training/arguments.py group.add_argument('--fp16', action='store_true') "
      "and '--bf16'"),
    W(Symptom.PRECISION_SET, ("--dtype",),
      r"--dtype(?:=|\s{1,3})['\"]?(?P<precision>half|float16|bfloat16|float32|float|fp16|bf16)\b",
      "vllm-project/vllm v0.6.3 vllm/engine/arg_utils.py: parser.add_argument('--dtype', choices=['auto', 'half', 'float16', "
      "'bfloat16', 'float', 'float32']); huggingface/text-generation-inference launcher --dtype float16|bfloat16"),
    W(Symptom.PRECISION_SET, ("Mixed precision type:", "mixed_precision"),
      r"Mixed precision type: (?P<precision>fp16|bf16|fp8|no)\b|(?<![\w-])-{0,2}mixed_precision\s{0,2}[:= ]\s{0,2}['\"]?(?P<precision>fp16|bf16|no)\b",
      "huggingface/accelerate v0.20.0 and v1.0.0 src/accelerate/state.py AcceleratorState.__repr__: f\"\\nMixed precision type: "
      "{self.mixed_precision}\\n\"; the config file accelerate config writes (\"mixed_precision: fp16\") and accelerate launch "
      "--mixed_precision"),
    W(Symptom.PRECISION_SET, ("fp16_enabled", "bfloat16_enabled", '"fp16"', '"bf16"'),
      r"\b(?P<precision>fp16|bfloat16)_enabled \.{3,40} True\b|\"(?P<precision>fp16|bf16)\":\s{0,3}\{\s{0,3}\"enabled\":\s{0,3}(?:true|True)\b",
      "deepspeedai/DeepSpeed v0.9.0-v0.14.0 deepspeed/runtime/config.py DeepSpeedConfig.print: dots = \".\" * (29 - len(arg)); "
      "logger.info(\"  {} {} {}\".format(arg, dots, getattr(self, arg))) for fp16_enabled / bfloat16_enabled, and the "
      "\"fp16\": {\"enabled\": true} section of the ds_config it prints as json"),
    W(Symptom.PRECISION_SET, ("fp16 ....", "bf16 ...."), r"^\s{0,4}(?P<precision>fp16|bf16) \.{10,60} True\s{0,4}$",
      "NVIDIA/Megatron-LM core_r0.8.0 megatron/training/arguments.py _print_args: dots = '.' * (48 - len(arg)); "
      "'  {} {} {}'.format(arg, dots, getattr(args, arg))"),
    W(Symptom.PRECISION_SET, ("dtype=torch.", "dtype = torch.", "dtype: torch."),
      r"\b(?:torch_)?dtype\s{0,2}[=:]\s{0,2}(?P<precision>torch\.(?:float16|half|bfloat16|float32))\b",
      "vllm-project/vllm v0.6.3 vllm/engine/llm_engine.py \"Initializing an LLM engine (v%s) with config: ... dtype=%s\" "
      "(torch.float16); huggingface/transformers from_pretrained(torch_dtype=torch.float16) in pasted code; pytorch/pytorch "
      "torch/_tensor_str.py's \", dtype=torch.float16\" suffix of a printed half tensor"),
    W(Symptom.PRECISION_SET, ("dtype: Some(",), r"\bdtype: Some\((?P<precision>Float16|BFloat16)\)",
      "huggingface/text-generation-inference launcher/src/main.rs: the launcher logs its Args struct with Rust's Debug format "
      "(\"Args { model_id: ..., dtype: Some(Float16), ... }\"; enum Dtype { Float16, BFloat16 })"),
    W(Symptom.PRECISION_SET, ("Casting torch.",), r"Casting torch\.\w{1,12} to (?P<precision>torch\.(?:float16|bfloat16|float32))\.",
      "vllm-project/vllm v0.6.3 vllm/config.py _get_and_verify_dtype: logger.warning(\"Casting %s to %s.\", config_dtype, torch_dtype)"),
    W(Symptom.PRECISION_SET, ("`torch.cuda.amp.GradScaler(args...)` is deprecated", "`torch.cuda.amp.autocast(args...)` is deprecated",
                              "torch.cuda.amp.GradScaler is enabled"),
      r"`torch\.cuda\.amp\.(?:GradScaler|autocast)\(args\.\.\.\)` is deprecated|torch\.cuda\.amp\.GradScaler is enabled",
      "recorded: torch 2.13.0 (python -W default: torch.cuda.amp.GradScaler(); torch.cuda.amp.autocast()) prints \"FutureWarning: "
      "`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use `torch.amp.GradScaler('cuda', args...)` instead.\" (2.4+); "
      "a loss scaler and CUDA autocast's default dtype are float16's",
      given=(("precision", Precision.FP16),)),
    W(Symptom.PRECISION_SET, (".half()",), r"\.half\(\)", "pytorch/pytorch torch/nn/modules/module.py Module.half() ('Casts all "
      "floating point parameters and buffers to half datatype') in the code users paste (model.half())",
      given=(("precision", Precision.FP16),)),
    # an fp16 loss scaler's own messages: only fp16 needs one (bf16 has fp32's range)
    W(Symptom.PRECISION_SET, ("OVERFLOW! Rank", "Gradient overflow.  Skipping step", "loss scale overflow! ",
                              "gradient overflow detected, ignoring gradient", "Current loss scale already at minimum"),
      r"OVERFLOW! Rank \d{1,6} Skipping step|Gradient overflow\.  Skipping step|fp16 dynamic loss scale overflow!|"
      r"gradient overflow detected, ignoring gradient|Current loss scale already at minimum",
      "deepspeedai/DeepSpeed deepspeed/runtime/fp16/loss_scaler.py (v0.10.0) \"[deepspeed] OVERFLOW! Rank {} Skipping step.\" and fused_optimizer.py "
      "\"[deepspeed] fp16 dynamic loss scale overflow! Skipping step.\"; NVIDIA/apex apex/amp/handle.py \"Gradient overflow.  Skipping step, "
      "loss scaler {} reducing loss scale to {}\"; facebookresearch/fairseq fairseq/trainer.py f\"NOTE: gradient overflow detected, ignoring "
      "gradient, {str(e)}\"", given=(("precision", Precision.FP16),)),
    W(Symptom.LOSS_SCALE_COLLAPSED, ("reducing loss scale to", "setting loss scale to: "),
      r"(?:reducing loss scale to|setting loss scale to:) (?P<scale>0\.\d{1,20}|\d(?:\.\d{1,20})?e-\d{1,3})\b",
      "NVIDIA/apex apex/amp/handle.py (parent of cb65b8ed): (\"Gradient overflow.  Skipping step, loss scaler \" + \"{} reducing loss scale "
      "to {}\").format(loss_id, loss_scaler.loss_scale()) with a scale halved below 1; facebookresearch/fairseq fairseq/optim/"
      "dynamic_loss_scaler.py OverflowError(\"setting loss scale to: \" + str(self.loss_scale)) as trainer.py logs it"),
    W(Symptom.NONFINITE_CAST, ("invalid value encountered in cast",),
      r"(?:(?P<where>[^\s:]{1,300}\.py):\d{1,6}: )?RuntimeWarning: invalid value encountered in cast",
      "recorded: numpy 2.1.3 (np.array([np.nan]).astype('uint8') under python -W default prints \"<file>:<line>: RuntimeWarning: "
      "invalid value encountered in cast\"; numpy >= 1.24 warns on casts, as warnings.formatwarning's \"%s:%s: %s: %s\"); "
      "huggingface/diffusers v0.30.0 src/diffusers/image_processor.py numpy_to_pil: images = (images * 255).round().astype(\"uint8\")"),
    W(Symptom.FP16_RANGE_EXCEEDED, ("Detected inf/nan during batch_number=",), r"Detected inf/nan during batch_number=(?P<batch>\d{1,9})",
      "huggingface/transformers v4.40.0 src/transformers/debug_utils.py DebugUnderflowOverflow.analyse_model: "
      "print(f\"\\nDetected inf/nan during batch_number={self.batch_number}\")"),
    # detect_overflow's per-tensor report: the first "has infs" is where values left the range (downstream "has nans" follow)
    W(Symptom.FP16_RANGE_EXCEEDED, (" has infs", " has inf"),
      r"^\s{0,8}(?P<where>[A-Za-z_][\w.:\[\] -]{0,120}?) has infs?\s{0,4}$",
      "huggingface/transformers src/transformers/debug_utils.py detect_overflow (v4.5.0..v5.x): print(f\"{ctx} has infs\") after "
      "print(f\"{ctx} has nans\"), the helper DebugUnderflowOverflow and users' own per-layer checks call (ctx: the module's name)"),
    # AUTOMATIC1111's NaN check adds its precision sentence only when the model runs in half precision
    W(Symptom.FP16_RANGE_EXCEEDED, ("A tensor with all NaNs was produced in",),
      r"A tensor with all NaNs was produced in (?P<where>Unet|VAE)\. This could be (?:either )?because there's not enough precision",
      "AUTOMATIC1111/stable-diffusion-webui modules/devices.py test_for_nans (1.x): \"A tensor with all NaNs was produced in Unet.\" + \" This "
      "could be either because there's not enough precision to represent the picture, or because your video card does not support half "
      "type. ...\" (only without --no-half) and \"A tensor with all NaNs was produced in VAE.\" + \" This could be because there's not enough "
      "precision to represent the picture. Try adding --no-half-vae commandline argument to fix this.\"; the same check in ComfyUI's "
      "A1111 compatibility layer", given=(("precision", Precision.FP16),)),
    # per-layer statistics users print while hunting an overflow: a max beyond 65504 (6.56e+04 and up, or inf)
    W(Symptom.FP16_RANGE_EXCEEDED, ("max=", "max:", "max ="),
      r"\bmin\s{0,2}[=:]\s{0,2}-?[\d.]{1,12}(?:e[+-]\d{1,3})?[^\n]{0,40}?\bmax\s{0,2}[=:]\s{0,2}-?(?P<abs_max>(?:[7-9]\.\d{1,4}|6\.[6-9]\d{0,3}|"
      r"6\.5[6-9]\d{0,2})e\+0?4|\d\.\d{1,4}e\+(?:0?[5-9]|[1-3]\d)|inf)\b",
      "users' per-layer activation statistics ('min=%.2e max=%.2e') in public threads of huggingface/transformers on fp16 "
      "overflow; transformers v4.40.0 debug_utils.py get_abs_min_max f\"{abs_var.min():8.2e} {abs_var.max():8.2e} {ctx}\" prints "
      "the same magnitudes"),
    # -- shared memory: ENOSPC and the code that was using /dev/shm ---------------------------------------
    W(Symptom.NO_SPACE_LEFT, ("[Errno 28] No space left on device",),
      r"\[Errno 28\] No space left on device(?:: '(?P<path>[^'\n]{1,300})')?",
      "CPython Objects/exceptions.c OSError_str: \"[Errno %S] %S: %R\" / \"[Errno %S] %S\" with strerror(ENOSPC) (3.x; e.g. raised by "
      "Lib/multiprocessing/synchronize.py SemLock.__init__ when sem_open finds /dev/shm full)"),
    W(Symptom.NO_SPACE_LEFT, ("No space left on device (28)", "unable to write to file </torch_"),
      r"unable to (?:allocate shared memory\(shm\) for file|write to file) <(?P<path>/torch_[^>]{1,80})>(?:: No space left on device \(28\))?"
      r"|No space left on device \(28\)",
      "pytorch/pytorch aten/src/ATen/MapAllocator.cpp (2.x): \"unable to allocate shared memory(shm) for file <\", filename_, \">: \", "
      "c10::utils::str_error(err), \" (\", err, \")\"; v1.7.0 aten/src/TH/THAllocator.cpp \"unable to write to file <\", filename_, \">\"",
      given=(("shm", True),)),
    W(Symptom.SHM_IN_USE, ("multiprocessing/synchronize.py", "multiprocessing/shared_memory.py", "multiprocessing/heap.py",
                           "multiprocessing/reductions.py", "_multiprocessing.SemLock", "in _new_shared", "in share_memory_"),
      r"(?P<where>multiprocessing/(?:synchronize|shared_memory|heap)\.py|torch/multiprocessing/reductions\.py|_multiprocessing\.SemLock"
      r"|in _new_shared\b|in share_memory_\b)",
      "CPython 3.10 Lib/multiprocessing/synchronize.py SemLock.__init__ (sl = self._semlock = _multiprocessing.SemLock(...): a POSIX "
      "semaphore in /dev/shm) and shared_memory.py / heap.py; pytorch/pytorch torch 2.13.0 torch/multiprocessing/reductions.py and "
      "torch/storage.py _new_shared (real traceback: zoo/repro/sigwork/out_shm.txt)", whole_line=True),
    W(Symptom.SHM_IN_USE, ("/dev/shm",), r"(?P<where>/dev/shm)\b",
      "a path under /dev/shm in an error (CPython OSError's filename, NCCL's \"/dev/shm/nccl-XXXXXX\" segments in src/misc/shmutils.cc, "
      "df -h /dev/shm)"),
    # -- which GPU a process sees: device indices, MIG instances, the display watchdog ---------------------
    W(Symptom.DEVICE_INDEX_ERROR, ("device >= 0 && device < num_gpus",),
      r"device >= 0 && device < num_gpus INTERNAL ASSERT FAILED(?:[^\n]{0,200}?device=(?P<device>\d{1,3}), num_gpus=(?P<num_gpus>\d{1,3}))?",
      "pytorch/pytorch aten/src/ATen/cuda/CUDAContext.cpp getDeviceProperties (1.x-2.x): AT_ASSERT(device >= 0 && device < num_gpus, "
      "\"device=\", device, \", num_gpus=\", num_gpus) as c10's \"%s INTERNAL ASSERT FAILED at \\\"%s\\\":%d, please report a bug to "
      "PyTorch. \" (also aten/src/ATen/Context.cpp getDefaultGenerator 1.0-1.4: AT_ASSERT(device >= 0 && device < num_gpus))"),
    W(Symptom.DEVICE_INDEX_ERROR, ("invalid device ordinal", "cudaErrorInvalidDevice", "CUDA_ERROR_INVALID_DEVICE", "Invalid device ordinal value"),
      r"invalid device ordinal|cudaErrorInvalidDevice|CUDA_ERROR_INVALID_DEVICE|Invalid device ordinal value \((?P<device>\d{1,3})\)",
      "CUDA runtime cudaGetErrorName/cudaGetErrorString(101) = cudaErrorInvalidDevice \"invalid device ordinal\" (libcudart 13.0 on this "
      "disk, as c10/cuda/CUDAException.cpp prints it: \"CUDA error: invalid device ordinal\"); driver API cuda.h CUDA_ERROR_INVALID_DEVICE; "
      "tensorflow stream_executor \"Invalid device ordinal value (%d). Valid range is [0, %d].\""),
    W(Symptom.DEVICE_INDEX_ERROR, ("but torch.cuda.device_count() is",),
      r"Attempting to deserialize object on CUDA device (?P<device>\d{1,3}) but torch\.cuda\.device_count\(\) is (?P<num_gpus>\d{1,3})",
      "pytorch/pytorch torch/serialization.py validate_cuda_device (1.x-2.x): f\"Attempting to deserialize object on CUDA device {device} "
      "but torch.cuda.device_count() is {device_count}. Please use torch.load with map_location to map your storages to an existing device.\""),
    W(Symptom.MIG_DEVICES, ("MIG ", "MIG-"),
      r"\bMIG[- ](?P<profile>\d{1,2}g\.\d{1,3}gb)\b|\bUUID: (?P<mig_uuid>MIG-(?:GPU-)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?:/\d{1,2}/\d{1,2})?)"
      r"|\b(?P<mig_uuid>MIG-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b",
      "NVIDIA MIG user guide, nvidia-smi -L on R470+: \"  MIG 3g.40gb     Device  0: (UUID: MIG-<uuid>)\" (R450: \"MIG-GPU-<uuid>/<gi>/<ci>\"); "
      "the CUDA device name of a MIG instance (\"NVIDIA A100-SXM4-80GB MIG 3g.40gb\"); NVIDIA/k8s-device-plugin gpu-feature-discovery's "
      "nvidia.com/gpu.product label with the single MIG strategy (\"NVIDIA-A100-SXM4-80GB-MIG-3g.40gb\")"),
    W(Symptom.MIG_DEVICES, ("MIG devices:", "MIG M."), r"^\|\s{1,4}MIG devices:|\bMIG M\.\s{0,4}\|",
      "nvidia-smi (R450+) device table: the \"MIG M.\" column header and the \"| MIG devices: |\" table of GPU/GI/CI instances"),
    W(Symptom.LAUNCH_TIMEOUT, ("the launch timed out and was terminated", "cudaErrorLaunchTimeout", "CUDA_ERROR_LAUNCH_TIMEOUT"),
      r"the launch timed out and was terminated|cudaErrorLaunchTimeout|CUDA_ERROR_LAUNCH_TIMEOUT",
      "CUDA runtime cudaGetErrorName/cudaGetErrorString(702) = cudaErrorLaunchTimeout \"the launch timed out and was terminated\" (libcudart "
      "13.0 on this disk); driver API cuda.h CUDA_ERROR_LAUNCH_TIMEOUT"),
    W(Symptom.CUDA_UNKNOWN_ERROR, ("CUDA error: unknown error", "cudaErrorUnknown", "CUDA_ERROR_UNKNOWN", "CUDA error = 999", "error=999"),
      r"(?:CUDA error: unknown error|cudaErrorUnknown|CUDA_ERROR_UNKNOWN|CUDA error = 999(?!\d)|\berror=999\b)"
      r"(?:[^\n]{0,120}?(?P<call>cuda(?:Device|Stream|Event)Synchronize|cudaMemcpy\w{0,12}|synchronize))?",
      "CUDA runtime cudaGetErrorName/cudaGetErrorString(999) = cudaErrorUnknown \"unknown error\" (libcudart 13.0 on this disk) as "
      "pytorch c10/cuda/CUDAException.cpp prints it (\"CUDA error: unknown error\"); cuda-samples helper_cuda.h check() \"CUDA error at "
      "%s:%d code=%d(%s) \\\"%s\\\"\"; rogerallen/raytracinginoneweekendincuda main.cu check_cuda: std::cerr << \"CUDA error = \" << "
      "static_cast<unsigned int>(result) << \" at \" << file << \":\" << line << \" '\" << func"),
    W(Symptom.WINDOWS_HOST, (":\\", ".exe", "WDDM", "win_amd64", "win32"),
      r"(?<![\w])(?P<where>[A-Z]:\\(?:[\w .()-]{1,60}\\){0,12}[\w .()-]{0,60})|\b(?P<where>[\w-]{1,60}\.exe)\b|\b(?P<where>WDDM|win_amd64|win32)\b",
      "Windows paths in CPython tracebacks (File \"C:\\...\\x.py\"), program names (python.exe, nvcc.exe) and nvidia-smi on Windows (the "
      "driver model column: WDDM/TCC); wheel tags win_amd64/win32 in pip's output"),
    # -- GPU memory of a serving engine: out of memory, and the CUDA graphs it captures --------------------
    W(Symptom.GPU_OOM, ("CUDA out of memory. Tried to allocate", "HIP out of memory. Tried to allocate"),
      r"(?:CUDA|HIP) out of memory\. Tried to allocate (?P<requested>\d{1,6}(?:\.\d{1,3})? [KMGT]?i?B)(?:\. GPU (?P<device>\d{1,3}) has a total "
      r"capaci?ty of (?P<total>\d{1,6}(?:\.\d{1,3})? [KMGT]?i?B) of which (?P<free>\d{1,6}(?:\.\d{1,3})? (?:bytes|[KMGT]i?B)) is free)?",
      "pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp: \"CUDA out of memory. Tried to allocate %s. GPU %d has a total capacity of %s "
      "of which %s is free. \" (2.1+; 2.1 spells it \"capacty\") and \"CUDA out of memory. Tried to allocate %s (GPU %d; %s total capacity; "
      "...)\" (1.x-2.0)"),
    W(Symptom.GPU_OOM, ("CUDA error: out of memory", "cudaErrorMemoryAllocation"), r"CUDA error: out of memory|cudaErrorMemoryAllocation",
      "CUDA runtime cudaGetErrorName/cudaGetErrorString(2) = cudaErrorMemoryAllocation \"out of memory\" (libcudart 13.0 on this disk) as "
      "pytorch c10/cuda/CUDAException.cpp prints it: \"CUDA error: out of memory\""),
    W(Symptom.CUDA_GRAPH_CAPTURE, ("Capturing the model for CUDA graphs", "Graph capturing finished in", "Capturing CUDA graph",
                                   "Capture cuda graph begin"),
      r"Capturing the model for CUDA graphs|Graph capturing finished in \d{1,6} secs(?:, took (?P<graph_gib>[\d.]{1,8}) GiB)?|Capturing CUDA graphs?"
      r"|Capture cuda graph begin(?:[^\n]{0,80}?avail mem=(?P<avail_gb>[\d.]{1,8}) GB)?",
      "vllm-project/vllm v0.6.3 vllm/worker/model_runner.py capture_model: logger.info(\"Capturing the model for CUDA graphs. This may lead "
      "to unexpected consequences ...\") and \"CUDA graphs can take additional 1~3 GiB memory per GPU\"; vllm/v1/worker/gpu_model_runner.py "
      "(V1): \"Graph capturing finished in %.0f secs, took %.2f GiB\" after its \"Capturing CUDA graphs\" progress bar; sgl-project/sglang "
      "python/sglang/srt/model_executor/model_runner.py: f\"Capture cuda graph begin. This can take up to several minutes. avail "
      "mem={before_mem:.2f} GB\""),
    W(Symptom.EVAL_FRAME, ("in evaluate", "in evaluation_loop", "in prediction_step", "in _maybe_log_save_evaluate"),
      r"^\s{0,8}File \"[^\"\n]{0,300}transformers/trainer\.py\", line \d{1,6}, in (?P<function>evaluate|evaluation_loop|prediction_step|_maybe_log_save_evaluate)\s{0,4}$",
      "huggingface/transformers v4.40.0 src/transformers/trainer.py: the frames of Trainer.evaluate (line 3467 output = eval_loop(...)), "
      "evaluation_loop (3650 self.prediction_step(...)) and prediction_step (3846 outputs = model(**inputs)), called from "
      "_maybe_log_save_evaluate (2662)"),
    W(Symptom.EVAL_FRAME, ("in validat", "in evaluat", "in eval", "in val_", "in test_step", "in _evaluation_loop", "in _run_validation"),
      r"^\s{0,8}File \"[^\"\n]{1,300}\", line \d{1,6}, in (?P<function>validate\w{0,20}|validation_step|val_step|val_epoch\w{0,10}|test_step|"
      r"evaluate\w{0,20}|evaluation\w{0,20}|eval(?:_\w{1,20})?|_evaluation_loop|_run_validation\w{0,20})\s{0,4}$",
      "pytorch/examples imagenet/main.py validate(val_loader, model, criterion, args) and PyTorch Lightning's LightningModule."
      "validation_step / test_step hooks (run by loops/evaluation_loop.py _evaluation_loop): the frame a CPython traceback prints "
      "(\"  File \\\"%s\\\", line %d, in %s\")"),
    # -- stops -------------------------------------------------------------------------------------
    W(Symptom.COLLECTIVE_TIMEOUT, ("Watchdog caught collective operation timeout",),
      r"Watchdog caught collective operation timeout: WorkNCCL\((?:SeqNum=(?P<seq>\d{1,12}), )?OpType=(?P<op_type>\w{1,40})"
      r"(?:, TensorShape=\[[^\]\n]{0,200}\])?(?:, NumelIn=(?P<numel_in>-?\d{1,15}))?[^\n]{0,400}?Timeout\(ms\)=(?P<timeout_ms>\d{1,12})",
      "pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp: \"Watchdog caught collective operation timeout: \" + WorkNCCL's "
      "repr: \"WorkNCCL(OpType=..., Timeout(ms)=...)\" (1.10-1.12), \"WorkNCCL(SeqNum=..., OpType=..., ..., Timeout(ms)=...)\" (1.13-2.x)"),
    W(Symptom.COLLECTIVE_TIMEOUT, ("Watchdog caught collective operation timeout",), r"Watchdog caught collective operation timeout:?\s{0,4}$",
      "pytorch/pytorch ProcessGroupNCCL.cpp (1.10-2.x): the same watchdog message with its WorkNCCL(...) repr wrapped onto the next line "
      "(as terminals, log collectors and issue pastes fold it)"),
    W(Symptom.COLLECTIVE_TIMEOUT, ("WorkNCCL::checkTimeout", "ncclCommWatchdog", "watchdogHandler", "Exception raised from checkTimeout"),
      r"(?:c10d::ProcessGroupNCCL::(?:WorkNCCL::checkTimeout|ncclCommWatchdog|watchdogHandler)|Exception raised from (?:checkTimeout|ncclCommWatchdog|watchdogHandler))",
      "pytorch/pytorch ProcessGroupNCCL.cpp: the watchdog's C++ frames as c10::Error prints them (\"Exception raised from checkTimeout at "
      "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:N\" 2.0-2.2, \"from ncclCommWatchdog\"/\"watchdogHandler\" 2.2+)"),
    W(Symptom.COLLECTIVE_TIMEOUT, ("Some NCCL operations have failed or timed out",), r"Some NCCL operations have failed or timed out",
      "pytorch/pytorch ProcessGroupNCCL.cpp 1.8-2.1: \"Some NCCL operations have failed or timed out. Due to the asynchronous nature of "
      "CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.\""),
    W(Symptom.COLLECTIVE_TIMEOUT, ("Timed out waiting",), r"\] Timed out waiting (?P<timeout_ms>\d{1,12})ms for (?:recv|send) operation to complete",
      "pytorch/gloo gloo/transport/tcp/unbound_buffer.cc: GLOO_ENFORCE \"Timed out waiting \", timeout.count(), \"ms for recv operation to complete\""),
    W(Symptom.COLLECTIVE_TIMEOUT, ("] Caught collective operation timeout: ",),
      r"\] Caught collective operation timeout: WorkNCCL\((?:SeqNum=(?P<seq>\d{1,12}), )?OpType=(?P<op_type>\w{1,40})[^\n]{0,400}?Timeout\(ms\)=(?P<timeout_ms>\d{1,12})",
      "pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (1.11-2.1) WorkNCCL::synchronizeInternal under NCCL_BLOCKING_WAIT=1: "
      "c10::str(\"[Rank \", rank_, \"] \", \"Caught collective operation timeout: \", (*this), \" ran for \", ..., \" milliseconds before timing out.\")"),
    W(Symptom.COLLECTIVE_TIMEOUT, ("WorkNCCL(",),
      r"^\s{0,8}WorkNCCL\((?:SeqNum=(?P<seq>\d{1,12}), )?[^\n]{0,40}?OpType=(?P<op_type>\w{1,40})(?:, TensorShape=\[[^\]\n]{0,200}\])?"
      r"(?:, NumelIn=(?P<numel_in>-?\d{1,15}))?[^\n]{0,300}?Timeout\(ms\)=(?P<timeout_ms>\d{1,12})",
      "pytorch/pytorch ProcessGroupNCCL.cpp (1.11-2.x): the watchdog line's WorkNCCL repr (\"WorkNCCL(SeqNum=, OpType=, NumelIn=, NumelOut=, "
      "Timeout(ms)=)\" 2.2+) wrapped onto a line of its own after \"Watchdog caught collective operation timeout:\""),
    W(Symptom.COLLECTIVE_TIMEOUT, (" failed to pass monitoredBarrier in ", " timed out in monitoredBarrier after "),
      r"Ranks? (?P<missing_ranks>\d{1,7}(?:, \d{1,7}){0,64}) failed to pass monitoredBarrier in (?P<timeout_ms>\d{1,12}) ms"
      r"|Rank \d{1,7} timed out in monitoredBarrier after (?P<timeout_ms>\d{1,12}) ms",
      "pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupGloo.cpp monitoredBarrier (1.10-2.13): \"Ranks \" ranksStr \" failed to pass "
      "monitoredBarrier in \" ms \" ms\" on rank 0 and \"Rank \" r \" timed out in monitoredBarrier after \" ms \" ms.\" (strings of "
      "libtorch_cpu.so 2.13.0; recorded: corpus/cpu/gloo_monitored_barrier.log)", given=(("op_type", "BARRIER"),)),
    W(Symptom.COLLECTIVE_TIMEOUT, ("in store based barrier on rank",),
      r"Timed out initializing process group in store based barrier on rank:? (?P<rank>\d{1,7}), for key: \S{1,200} "
      r"\(world_size=(?P<nranks>\d{1,7}), (?:worker_count|num_workers_joined)=(?P<joined>\d{1,7})",
      "pytorch/pytorch torch/distributed/distributed_c10d.py _store_based_barrier: \"Timed out initializing process group in store based "
      "barrier on rank: {}, for key: {} (world_size={}, worker_count={}, timeout={})\" (1.8-1.13) and \"... on rank {rank}, for key: "
      "{store_key} (world_size={world_size}, num_workers_joined={worker_count}, timeout={timeout} error={e})\" (2.0+)",
      given=(("op_type", "BARRIER"),)),
    # -- what the ranks were doing before a collective timed out: each rank's own work that the others
    #    wait for in their next collective (the collective-timeout causes read these) ------------------
    W(Symptom.DATA_PREPARATION, ("Map:", "Map (num_proc=", "Filter:", "Filter (num_proc="),
      r"(?<![\w-])(?P<what>Map|Filter)(?: \(num_proc=\d{1,4}\))?:\s{0,3}\d{1,3}%\|",
      "huggingface/datasets 2.14.0 src/datasets/arrow_dataset.py: map's tqdm desc=desc or \"Map\", (desc or \"Map\") + f\" (num_proc={num_proc})\", "
      "filter's desc or \"Filter\", printed by tqdm's l_bar \"{desc}: {percentage:3.0f}%|\"", given=(("kind", "dataset-map"),)),
    W(Symptom.DATA_PREPARATION, ("Running tokenizer on dataset", "Grouping texts in chunks of", "Running tokenizer on train dataset"),
      r"(?P<what>Running tokenizer on (?:train |validation |prediction )?dataset|Grouping texts in chunks of \d{1,7})",
      "huggingface/transformers examples/pytorch/language-modeling/run_clm.py and run_mlm.py (4.12+): raw_datasets.map(..., desc=\"Running "
      "tokenizer on dataset\") and desc=f\"Grouping texts in chunks of {block_size}\" (copied by many training scripts)",
      given=(("kind", "dataset-map"),)),
    W(Symptom.DATA_PREPARATION, ("main_process_first", "_goes_first"), r"(?:, in |\.)(?P<what>main_process_first|_goes_first)\b",
      "huggingface/transformers 4.36.0 src/transformers/training_args.py TrainingArguments.main_process_first: the replicas wait in "
      "dist.barrier() while the main process works; huggingface/accelerate 0.25.0 src/accelerate/state.py main_process_first -> "
      "_goes_first -> wait_for_everyone (frames and the `with ...main_process_first(...)` line of a traceback)",
      given=(("kind", "barrier"),)),
    W(Symptom.PROGRESS_BAR, ("%|",),
      r"(?:(?P<desc>[^\n:|\r]{1,80}):\s{0,3})?(?P<percent>\d{1,3})%\|[^\n|]{0,200}\|\s{0,2}(?P<done>[\d.]{1,24}[kMGTPEZY]?)/(?P<total>[\d.]{1,24}[kMGTPEZY]?)"
      r"\s{0,2}\[(?P<elapsed_s>(?:\d{1,5}d, )?(?:\d{1,5}:)?\d{1,3}:\d\d)<",
      "tqdm/tqdm tqdm/std.py format_meter (4.19-4.70.1): l_bar \"{desc}: {percentage:3.0f}%|\", r_bar \"| {n_fmt}/{total_fmt} "
      "[{elapsed}<{remaining}, {rate_fmt}{postfix}]\", elapsed by format_interval \"[H:]MM:SS\" (recorded with tqdm 4.70.1: "
      "corpus/cpu/gloo_stall_progress.log)"),
    W(Symptom.EVALUATION_STARTED, ("***** Running Evaluation *****", "***** Running Prediction *****"),
      r"\*{5} Running (?P<what>Evaluation|Prediction) \*{5}",
      "huggingface/transformers 4.36.0 src/transformers/trainer.py evaluation_loop/prediction_loop: logger.info(f\"***** Running "
      "{description} *****\") with description \"Evaluation\" (Trainer.evaluate) or \"Prediction\" (4.0+)"),
    W(Symptom.EVALUATION_STARTED, ("Evaluat", "evaluat", "EVALUAT", "Validat", "validat", "VALIDAT"),
      r"^[\s#>*=\[(-]{0,8}(?:(?:start(?:ing|ed)?|begin(?:ning)?|running|run)\s{1,3}(?:of\s{1,3}|the\s{1,3})?)?"
      r"(?P<what>evaluat(?:e|ion|ing)|validat(?:e|ion|ing))\b(?:\s{1,3}(?:the\s{1,3})?(?:results?|model|loop|set|epoch(?:\s{1,2}\d{1,6})?))?"
      r"\s{0,3}(?:\.{1,3}|:|!)?[\s\])=*-]{0,8}$",
      "users' training scripts as their logs show them in public issue threads of pytorch/pytorch and huggingface/accelerate "
      "(\"Evaluating...\", \"Start of validation\", \"Running evaluation\" printed before a rank-0-only eval block)", ignore_case=True),
    W(Symptom.EVALUATION_STARTED, ("Validation DataLoader ", "Testing DataLoader ", "Validation:", "Testing:"),
      r"(?<![\w-])(?P<what>Validation|Testing)(?: DataLoader \d{1,3})?:\s{0,3}\d{1,3}%\|",
      "Lightning-AI/pytorch-lightning 2.1.0 src/lightning/pytorch/callbacks/progress/tqdm_progress.py: the validation bar's "
      "desc=self.validation_description (\"Validation\", progress_bar.py) then set_description(f\"{desc} DataLoader {dataloader_idx}\"), "
      "the test bar's \"Testing\" / f\"{self.test_description} DataLoader {dataloader_idx}\", in tqdm's l_bar"),
    W(Symptom.EVALUATION_STARTED, ("***** Evaluating perplexity",), r"\*{5} (?P<what>Evaluating perplexity)",
      "deepspeedai/DeepSpeedExamples applications/DeepSpeed-Chat training/step1_supervised_finetuning/main.py: print_rank_0(f\"***** "
      "Evaluating perplexity, Epoch {epoch+1}/{args.num_train_epochs} *****\", args.global_rank)"),
    W(Symptom.CHECKPOINT_SAVING, ("Saving model checkpoint to ",), r"Saving model checkpoint to (?P<path>\S{1,300})",
      "huggingface/transformers 4.36.0 src/transformers/trainer.py Trainer._save: logger.info(f\"Saving model checkpoint to {output_dir}\") (4.x)"),
    W(Symptom.CHECKPOINT_SAVING, ("Saving model checkpoint: ", "is about to be saved!"),
      r"Saving model checkpoint: (?P<path>\S{1,300})|\[Torch\] Checkpoint (?P<path>\S{1,200}) is about to be saved!",
      "deepspeedai/DeepSpeed 0.12.6 deepspeed/runtime/engine.py _save_checkpoint: logger.info(f'Saving model checkpoint: {save_path}') and "
      "deepspeed/runtime/checkpoint_engine/torch_checkpoint_engine.py: log_dist(f\"[Torch] Checkpoint {tag} is about to be saved!\")"),
    W(Symptom.CHECKPOINT_SAVING, (", saving model to ",), r", saving model to (?P<path>'[^'\n]{1,300}'|\S{1,300}) as top \d{1,4}",
      "Lightning-AI/pytorch-lightning 2.1.0 src/lightning/pytorch/callbacks/model_checkpoint.py _update_best_and_save (verbose=True): "
      "rank_zero_info(f\"Epoch {epoch:d}, global step {step:d}: {self.monitor!r} reached {current:0.5f} (best {...}), saving model to "
      "{filepath!r} as top {k}\")"),
    W(Symptom.CHECKPOINT_SAVING, ("Saving checkpoint", "Saving model", "Saving the model", "Saving ckpt"),
      r"^[\s#>*=\[(-]{0,8}Saving (?:the )?(?:model(?! checkpoint\b)|checkpoint|ckpt)s?\b(?:\s{1,3}(?:checkpoint\s{1,3})?(?:to|at|in)\s{1,3}(?P<path>\S{1,300}))?",
      "users' training scripts as their logs show them in public issue threads of pytorch/pytorch and huggingface/accelerate "
      "(\"Saving checkpoint to ...\", \"Saving model...\"; recorded: corpus/cpu/prepare_evaluate_save_ok.log)"),
    W(Symptom.TRACE_CACHE_INVALIDATED, ("Invalidate trace cache @ step ",),
      r"Invalidate trace cache @ step (?P<step>\d{1,12})(?: and module \d{1,9})?: (?:expected module (?P<expected_module>\d{1,9}), "
      r"but got module (?P<got_module>\d{1,9})|cache has only \d{1,9} modules)",
      "deepspeedai/DeepSpeed deepspeed/runtime/zero/partitioned_param_coordinator.py trace_prologue: print_rank_0(f\"Invalidate trace cache "
      "@ step {self.__step_id}: expected module {expected_module_id}, but got module {sub_module.id}\") (0.8.3; force=True in 0.12.6, "
      "sub_module.ds_id and force=self.__log_trace_cache_warnings in 0.16.4) and \"Invalidate trace cache @ step {step} and module {id}: "
      "cache has only {n} modules\" (0.12.6, 0.16.4)"),
    W(Symptom.UNEVEN_INPUTS, ("Length of IterableDataset ",),
      r"Length of IterableDataset [^\n]{1,300}? was reported to be (?P<reported>\d{1,12}) ?\(when accessing len\(dataloader\)\), but "
      r"(?P<fetched>\d{1,12}) samples have been fetched",
      "pytorch/pytorch torch/utils/data/dataloader.py _BaseDataLoaderIter.__next__: warnings.warn(f\"Length of IterableDataset {...} was reported "
      "to be {...}(when accessing len(dataloader)), but {...} samples have been fetched. \") (2.13.0; a space before '(' in 1.x)",
      given=(("kind", "iterable-dataset-length"),)),
    W(Symptom.UNEVEN_INPUTS, ("exhausted all inputs", "Detected at least one rank that exhausted inputs"),
      r"Rank (?P<rank>\d{1,7}) exhausted all inputs|Detected at least one rank that exhausted inputs",
      "pytorch/pytorch torch/distributed/algorithms/join.py (1.10-2.13): RuntimeError(f\"Rank {self._rank} exhausted all inputs.\") and "
      "\"Detected at least one rank that exhausted inputs. Throwing across all ranks.\" (Join(throw_on_early_termination=True))",
      given=(("kind", "join"),)),
    W(Symptom.UNEVEN_INPUTS, ("uneven", "Uneven", "unequal", "Unequal", "different number of", "Different number of", "have any batch",
                              "out of data", "out of batches", "no more batches", "fewer batches"),
      r"\b(?:uneven|unequal)\s{1,3}(?:data|inputs?|shards?|splits?|batch(?:es)?|number of (?:batches|samples|steps))\b"
      r"|\bdifferent numbers? of (?:batches|steps|iterations|samples)\b|\b(?:does not|doesn't|did not|didn't) have (?:any )?(?:more )?batch(?:es)?\b"
      r"|\bru(?:n|ns|an) out of (?:data|batches|samples)\b|\bno more batches\b|\bfewer batches\b",
      "users' notes in pasted logs in public issue threads of pytorch/pytorch and Lightning-AI/pytorch-lightning (\"rank 1 does not "
      "have any batches\", \"uneven inputs across ranks\")", ignore_case=True, given=(("kind", "note"),)),
    W(Symptom.STEP_LOGGED, ("step", "Step", "batch", "Batch", "iter", "Iter"),
      r"(?:\b[Rr]ank[ _:\[]{0,2}(?P<rank>\d{1,6})\]?[^\n]{0,80}?)?(?:\b[Ee]poch[ :=\[]{0,2}(?P<epoch>\d{1,6})\b[^\n]{0,40}?)?"
      r"\b(?:step|Step|batch|Batch|iter|Iter|iteration|Iteration)(?: number)?[ :=#\[]{0,3}(?P<step>\d{1,9})\b",
      "users' per-rank progress prints in public issue threads of pytorch/pytorch (\"rank 0: epoch 0 step 2 loss ...\", \"[rank 1] batch "
      "41\"; the rank from the text or the line's rank prefix); recorded: corpus/cpu/timeout_uneven_iterable.log and zoo/scenarios/_train.py's \"rank N: step K loss ...\""),
    W(Symptom.HANG_NOTED, ("hang", "Hang", "HANG", "stuck", "Stuck", "STUCK", "freez", "Freez", "FREEZ", "frozen"),
      r"^[\s#>/*<(\[.-]{0,8}(?:(?:it|and|then|but|the (?:program|process|job|training|run|script|server|model|code)|program|process|training"
      r"|everything|here|now)\s{1,3}){0,2}(?:(?:is|was|gets|got|just|seems to|keeps|will|still|always)\s{1,3}){0,2}"
      r"(?:hangs?|hanging|hung|stuck|freezes|freezing|frozen|stalls|stalled)"
      r"(?:\s{1,3}(?:here|there|forever|indefinitely|at this (?:point|step|line)|after this|now)){0,2}\s{0,3}(?:\.{1,3}|!{1,3})?[\s>)\]*.-]{0,8}$",
      "users' own notes in pasted logs (\"<hangs here>\", \"stuck here...\"), as in public issue threads of NVIDIA/nccl and pytorch/pytorch",
      ignore_case=True),
    W(Symptom.HANG_NOTED, ("hang", "Hang", "HANG", "stuck", "Stuck", "STUCK", "freez", "Freez", "FREEZ", "frozen", "deadlock", "Deadlock"),
      r"^\s{0,4}(?:#|//|<|=>|-->|\(|\[(?!\w{1,20}\]\s))(?:(?!\b(?:avoid|avoids|prevent|prevents|if|unless|in case)\b)[^\n]){0,100}?"
      r"\b(?:hangs?|hanging|hung|stuck|freezes|freezing|frozen|stalls|stalled|deadlocks?|deadlocked)\b[^\n]{0,100}$",
      "users' annotations in pasted logs and scripts (\"# => hangs during startup\", \"<HANGS FOR 20+ min>\", \"// stuck here\"), "
      "as in public issue threads of vllm-project/vllm and NVIDIA/nccl", ignore_case=True),
    # a note in prose that goes on after the verb ("The training is stuck here, GPU utilization 100%"): a subject, the verb,
    # and no conditional around it (an "if it hangs" advice or a "to avoid hangs" comment is no observation)
    W(Symptom.HANG_NOTED, ("hangs", "Hangs", "hanging", "hung", "stuck", "Stuck", "freezes", "frozen", "stalls", "stalled"),
      r"^[\s#>/*<(\[.-]{0,8}(?:it|and|then|but|now|here|everything|the (?:program|process|processes|job|training|run|script|server|"
      r"model|code|ranks?|workers?|gpus?))\b(?:\s{1,3}(?:is|was|are|were|gets|got|just|seems to|keeps|still|always|then|simply|completely)){0,3}"
      r"\s{1,3}(?:hangs|hanging|hung|stuck|freezes|frozen|stalls|stalled)\b(?![^\n]{0,80}\b(?:if|unless|avoid|prevent)\b)[^\n]{0,160}$",
      "users' own notes in prose in pasted logs (\"The training is stuck here, GPU utilization 100%\", \"then it hangs without any "
      "error\"), as in public issue threads of pytorch/pytorch and vllm-project/vllm", ignore_case=True),
    # a report's own sentence anywhere on a line: a subject (the run, a component, a call), at most three
    # auxiliaries, then the verb; nothing before it that makes it advice, a warning's possibility, a cause or a
    # negation ("if it hangs", "may hang", "caused by a worker hanging", "no longer hangs"), and no "avoid/prevent" after
    W(Symptom.HANG_NOTED, ("hang", "Hang", "HANG", "stuck", "Stuck", "STUCK", "freez", "Freez", "froze", "Froze", "stall", "Stall",
                           "deadlock", "Deadlock", "halts", "halted"),
      _REPORT_GUARD + r"(?<![\w.-])" + _REPORT_SUBJECT + _REPORT_AUX
      + r"\s{1,3}(?:hangs?|hanging|hung|stuck|freezes|freeze|freezing|froze|frozen|stalls?|stalled|stalling|deadlocks?|deadlocked|halts|halted)\b"
      r"(?![^\n]{0,80}\b(?:avoid|prevent)|\s{1,3}if\s(?!I\b|we\b))",
      "users' sentences in public issue threads of pytorch/pytorch, vllm-project/vllm and NVIDIA/nccl (\"Training hangs when "
      "using 2 GPUs\", \"the all_reduce gets stuck at the first step\", \"vLLM freezes with tp=2\", \"init_process_group hangs\")",
      ignore_case=True),
    # a report that starts with its verb ("Stuck at dist.init_process_group", "Hangs when using tp=2")
    W(Symptom.HANG_NOTED, ("hang", "Hang", "HANG", "stuck", "Stuck", "STUCK", "freez", "Freez", "stall", "Stall"),
      r"^[\s#>*(\[-]{0,4}(?:hangs?|hanging|hung|stuck|freezes|freezing|frozen|stalls|stalled|stalling)\s{1,3}"
      r"(?:at|on|in|after|when|while|during|forever|indefinitely|without|with|here|there|until|before|for|right|immediately|randomly)\b"
      r"(?![^\n]{0,80}\b(?:avoid|prevent)\b)",
      "the titles and first lines of users' reports in public issue threads of vllm-project/vllm and pytorch/pytorch "
      "(\"Stuck at init_process_group\", \"Hangs when using tensor parallel\", \"hanging at Loading checkpoint shards\")",
      ignore_case=True),
    # the other ways a report says a run does not go on: a call that never returns, no progress, nothing happens, waits forever
    W(Symptom.HANG_NOTED, ("never ", "Never ", "progress", "Progress", "nothing ", "Nothing ", "forever", "indefinitely", "no more output",
                           "no output", "No output", "at 100%", "at 100 %",
                           "no further output", "unresponsive", "not responding", "doesn't proceed", "does not proceed", "sits there"),
      _REPORT_GUARD + r"(?:(?<![\w.-])" + _REPORT_SUBJECT + _REPORT_AUX
      + r"\s{1,3}(?:never\s{1,3}(?:returns?|finish(?:es)?|completes?|ends?|proceeds?|progresses|continues?|moves\s{1,3}on|gets\s{1,3}past|starts?)"
      r"|(?:waits?|waiting|waited|blocks?|blocking|blocked|spins?|spinning|sits?\s{1,3}there)\s{1,3}(?:forever|indefinitely)"
      r"|(?:does\s{1,3}not|doesn't|did\s{1,3}not|didn't)\s{1,3}(?:proceed|progress|return|move\s{1,3}on|get\s{1,3}past)"
      r"|(?:becomes?|became|is|was)\s{1,3}(?:unresponsive|not\s{1,3}responding))\b"
      r"|\b(?:there(?:'s|\s{1,3}is|\s{1,3}was)|it\s{1,3}makes|making|makes|made|shows?|showing|with)\s{1,3}no\s{1,3}(?:further\s{1,3})?progress\b"
      r"|\bno\s{1,3}(?:further\s{1,3})?progress\s{1,3}(?:after|for|since|at\s{1,3}all|anymore|beyond)\b"
      r"|\bnothing\s{1,3}(?:else\s{1,3}|more\s{1,3})?(?:happens|happened|is\s{1,3}printed|gets\s{1,3}printed|was\s{1,3}printed)\b"
      r"|\bno\s{1,3}(?:more|further)\s{1,3}(?:output|logs?)\b"
      r"|\bno\s{1,3}output\s{1,3}(?:after|since|anymore|at\s{1,3}all|for\s{1,3}(?:hours|minutes|\d))"
      r"|\b(?:gpu[- ]?)?util(?:i[sz]ation)?\s{1,3}(?:stays?|stayed|is\s{1,3}stuck|stuck|remains?|remained|keeps?\s{1,3}(?:being|at)?|sits?)"
      r"\s{1,3}(?:at\s{1,3})?100\s?%)"
      r"(?![^\n]{0,80}\b(?:avoid|prevent)|\s{1,3}if\s(?!I\b|we\b))",
      "users' sentences in public issue threads of pytorch/pytorch and NVIDIA/nccl (\"dist.barrier() never returns\", \"the "
      "all_reduce waits forever\", \"there is no progress after the first iteration\", \"nothing happens after this line\")",
      ignore_case=True),
    # the forms a shell, a container runtime, a CI runner or an IDE report a SIGKILLed process in
    # (torchrun's, subprocess's and DeepSpeed's launcher forms are torchrun-worker-sigkill's)
    W(Symptom.KILLED_BY_SIGNAL, ("Killed", "killed"), r"^\s{0,4}(?P<word>killed)\s{0,4}$",
      "recorded: corpus/cpu/shell_foreground_sigkill.log (interactive bash 5.2.15 prints strsignal(SIGKILL) = \"Killed\" for a "
      "foreground job killed by a signal)", ignore_case=True),
    W(Symptom.KILLED_BY_SIGNAL, ("]+  Killed", "]-  Killed"), r"^\[\d{1,5}\][+-]? +Killed {2,}(?P<command>\S[^\n]{0,300})",
      "GNU bash jobs.c pretty_print_job with job control: \"[%d]%c \" then strsignal(SIGKILL) padded, then the command"),
    W(Symptom.KILLED_BY_SIGNAL, ("zsh: killed",), r"zsh: killed +(?P<command>\S[^\n]{0,300})",
      "zsh Src/jobs.c printjob: \"zsh: \" + sigmsg(SIGKILL) = \"killed\" for a foreground job, then its command"),
    W(Symptom.KILLED_BY_SIGNAL, ("exit status 137", "exited with code 137", "exit code 137", "Exit Code:"),
      r"Command '?(?P<command>[^\n]{1,500}?)'? returned non-zero exit status 137\b|(?P<container>[\w.-]{1,100}) exited with code 137\b"
      r"|exit code 137\b|^\s{0,8}Exit Code:\s{1,8}137\s{0,4}$",
      "CPython Lib/subprocess.py CalledProcessError.__str__ \"Command '%s' returned non-zero exit status %d.\" (128 + 9), docker compose "
      "\"%s exited with code %d\", kubectl describe \"Exit Code:\\t%d\", JetBrains \"Process finished with exit code 137 (interrupted by "
      "signal 9: SIGKILL)\", GitHub Actions \"Process completed with exit code 137.\""),
    W(Symptom.KILLED_BY_SIGNAL, ("signal 9: SIGKILL", "signal 9:SIGKILL", "<Signals.SIGKILL: 9>", "exit code -9", "code -9", "status -9"),
      r"interrupted by signal 9: ?SIGKILL|died with <Signals\.SIGKILL: 9>|\b(?:exit|return|exited with) (?:code|status) -9\b",
      "JetBrains IDEs \"Process finished with exit code 137 (interrupted by signal 9: SIGKILL)\"; CPython Lib/subprocess.py "
      "CalledProcessError.__str__ \"Command '%s' died with %r.\" (repr <Signals.SIGKILL: 9>, 3.6+); Popen.returncode -9 as launchers "
      "print it (\"exit code -9\")"),
    W(Symptom.USER_INTERRUPT, ("KeyboardInterrupt",), r"^(?:\[rank\d{1,6}\]:\s?)?KeyboardInterrupt\b",
      "CPython: the exception line \"KeyboardInterrupt\" a Ctrl-C ends a traceback with (every 3.x)"),
    W(Symptom.USER_INTERRUPT, ("death signal, shutting down workers", "Received SIGINT", "^C"),
      r"Received (?:Signals\.)?SIGINT death signal, shutting down workers|^\s{0,4}\^C",
      "pytorch/pytorch torch/distributed/elastic/multiprocessing/api.py: \"Received %s death signal, shutting down workers\" (1.9+; "
      "\"Received Signals.SIGINT death signal\" before 2.0), and the terminal's \"^C\" echo"),
    W(Symptom.PEERS_WAITING, ("No available shared memory broadcast block found in", "No available block found in"),
      r"No available (?:shared memory broadcast )?block found in (?P<seconds>\d{1,6}) seconds?",
      "vllm-project/vllm vllm/distributed/device_communicators/shm_broadcast.py: logger.warning(\"No available block found in %s second. \", "
      "VLLM_RINGBUFFER_WARNING_INTERVAL) (0.5.4-0.6.x; the same in sgl-project/sglang's copy) and \"No available shared memory broadcast "
      "block found in %d seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. "
      "compilation, weight/kv cache quantization).\" (0.7+)"),
    W(Symptom.STACK_DUMP, ("(most recent call first):", "Timeout ("),
      r"^(?:Current )?[Tt]hread 0x[0-9a-fA-F]{1,16} \(most recent call first\):|^Timeout \(\d{1,4}:\d\d:\d\d\)!",
      "CPython Python/traceback.c (faulthandler): \"Thread 0x%lx (most recent call first):\" / \"Current thread 0x...\", "
      "Modules/faulthandler.c dump_traceback_later: \"Timeout (%lu:%02lu:%02lu)!\" (3.3-3.13)"),
    # gdb's backtrace (gdb -p PID -batch -ex bt, or thread apply all bt): each thread's innermost frame
    W(Symptom.STACK_DUMP, ("#0  ",),
      r"^#0\s{2}(?:0x[0-9a-f]{4,16} in )?[A-Za-z_][\w:~<>.$@]{0,300} \(",
      "GNU gdb gdb/stack.c print_frame_info/print_frame: \"#%-2d \" then \"0x%016lx in \" (where the pc is not a line's start), the "
      "function, \" (args)\", \" at file:line\" or \" from lib\" (recorded here with gdb 13.1: a gloo all_reduce hang, "
      "zoo/cpu_raw/gdb_collective_hang.py)"),
    W(Symptom.STACK_DUMP, ("(active", "(idle)", "py-spy"),
      r"^Thread (?:0x[0-9A-Fa-f]{1,16}|\d{1,10}) \((?:active|idle)[^)\n]{0,40}\)|py-spy dump",
      "benfred/py-spy src/dump.rs: \"Thread {:#X} ({})\" with active/idle status (0.3+)"),
    W(Symptom.ENV_SET, (" set by environment to ",), r"\b(?P<name>[A-Z][A-Z0-9_]{2,60}) set by environment to (?P<value>[^\s.,;]{1,120})",
      "NVIDIA/nccl src/misc/param.cc and ncclGetEnv users: INFO(NCCL_ENV, \"%s set by environment to %s\", ...) (2.x)"),
    W(Symptom.ENV_SET, ("disable_custom_all_reduce=",), r"\b(?P<name>disable_custom_all_reduce)=(?P<value>True|False)\b",
      "vllm-project/vllm vllm/engine/llm_engine.py 0.3-0.6: \"Initializing an LLM engine with config: ... disable_custom_all_reduce=%s\"; "
      "0.7+ the same key in its EngineArgs/VllmConfig repr"),
    # -- version and toolchain mismatches ------------------------------------------------------------
    # a dotted name CPython could not import: every parent imported, so the top-level package is installed
    W(Symptom.IMPORT_FAILED, ("No module named '",),
      r"(?:ModuleNotFoundError|ImportError): No module named '(?P<module>[A-Za-z_][\w.]{0,200})'(?:; '(?P<parent>[\w.]{1,200})' is not a package)?",
      "CPython Lib/importlib/_bootstrap.py (3.6+): _ERR_MSG_PREFIX 'No module named ' + '{!r}', and _find_and_load_unlocked's "
      "'; {!r} is not a package' when the parent is a module (reproduced with CPython 3.11: tests/test_causes_versions.py)",
      given=(("form", "module"),)),
    W(Symptom.IMPORT_FAILED, ("ImportError: No module named ",),
      r"ImportError: No module named (?P<module>[A-Za-z_][\w.]{0,200})\s{0,4}$",
      "CPython v2.7.18 Python/import.c import_submodule: PyErr_Format(PyExc_ImportError, \"No module named %.200s\", name) (2.x, 3.0-3.2)",
      given=(("form", "module"),)),
    W(Symptom.IMPORT_FAILED, ("cannot import name '",),
      r"(?:^|Error: )cannot import name '(?P<name>[^'\n]{1,200})' from '(?P<module>[A-Za-z_][\w.]{0,200})' \((?P<path>[^)\n]{1,500})\)",
      "CPython v3.8.0 Python/ceval.c import_from: PyErr_Format(PyExc_ImportError, \"cannot import name %R from %R (%S)\", name, pkgname, "
      "pkgpath) (3.8+; 'from partially initialized module' is the circular form, not this one)", given=(("form", "name"),)),
    W(Symptom.IMPORT_FAILED, ("ImportError: cannot import name ",),
      r"ImportError: cannot import name '?(?P<name>[A-Za-z_]\w{0,200})'?\s{0,4}$",
      "CPython v3.6.0 Python/ceval.c import_from: \"cannot import name %R\" (3.4-3.6) and v2.7.18 \"cannot import name %.230s\"",
      given=(("form", "name"),)),
    W(Symptom.IMPORT_FAILED, ("has no attribute '",),
      r"AttributeError: module '(?P<module>[A-Za-z_][\w.]{0,200})' has no attribute '(?P<name>\w{1,200})'\s{0,4}$",
      "CPython v3.8.0 Objects/moduleobject.c module_getattro: PyErr_Format(PyExc_AttributeError, \"module '%U' has no attribute '%U'\") "
      "(3.5+; the circular-import form says 'partially initialized module' and is not this one)", given=(("form", "attribute"),)),
    W(Symptom.PACKAGE_FRAME, ("site-packages", "dist-packages"),
      r'File "[^"\n]{0,300}?[/\\](?:site|dist)-packages[/\\](?P<file>(?P<package>[A-Za-z_]\w{0,100})(?:[/\\][^"\n]{0,300})?\.py)", '
      r'line \d{1,7}, in (?P<function>[\w<>.]{1,100})',
      "CPython Lib/traceback.py FrameSummary: '  File \"{}\", line {}, in {}' (every 3.x; the same in Python/traceback.c)"),
    W(Symptom.PACKAGE_FRAME, ("site-packages", "dist-packages"),
      r"(?:^|\[|File )/[^\s\]\[]{0,300}?/(?:site|dist)-packages/(?P<file>(?P<package>[A-Za-z_]\w{0,100})(?:/[^\s\]\[]{0,300})?\.py)"
      r"(?::\d{1,7},)?\]?(?:\([^)\s]{0,300}\))? in (?P<function>[\w<>.]{1,100})\(",
      "ipython/ipython IPython/core/ultratb.py: VerboseTB's frame head '{file} in {func}{args}' (7.x, as Jupyter and Colab print it, "
      "Colab linking the path) and 'File {file}:{lineno}, in {func}()' (8.x)"),
    W(Symptom.KEY_ERROR, ("KeyError: ",), r"^(?:\[rank\d{1,6}\]:\s?)?KeyError: (?P<quote>['\"])(?P<key>[^'\"\n]{1,200})(?P=quote)\s{0,4}$",
      "CPython Objects/exceptions.c KeyError_str: the repr of the single argument, \"KeyError: 'qwen2'\" (every 3.x; the line a traceback ends with)"),
    W(Symptom.KEY_ERROR, ("KeyError: ",), r"^(?:\[rank\d{1,6}\]:\s?)?KeyError: (?P<key>\d{1,20})\s{0,4}$",
      "CPython Objects/exceptions.c KeyError_str with an int key (\"KeyError: 3\")"),
    W(Symptom.MODEL_TYPE_UNKNOWN, ("but Transformers does not recognize this architecture",),
      r"The checkpoint you are trying to load has model type `(?P<model_type>[^`\n]{1,100})` but Transformers does not recognize this architecture",
      "huggingface/transformers v4.37.2 src/transformers/models/auto/configuration_auto.py AutoConfig.from_pretrained: raise ValueError("
      "f\"The checkpoint you are trying to load has model type `{config_dict['model_type']}` but Transformers does not recognize this "
      "architecture. ...\") (4.37+; the same text in v4.57.6, reproduced); before 4.37 a KeyError from the same lookup (derived below)"),
    W(Symptom.CONFIG_VALIDATION_FAILED, ("ValidationError: ",),
      r"pydantic_core\._pydantic_core\.ValidationError: (?P<count>\d{1,4}) validation errors? for (?P<model>[A-Za-z_]\w{0,100})",
      "pydantic/pydantic-core 2.x ValidationError.__str__: \"{count} validation error{s} for {title}\" (reproduced: pydantic 2.x with "
      "deepspeedai/DeepSpeed v0.15.0 deepspeed/runtime/zero/config.py DeepSpeedZeroConfig, tests/test_causes_versions.py)"),
    W(Symptom.CONFIG_VALIDATION_FAILED, ("ValidationError: ",),
      r"pydantic\.(?:v1\.)?(?:error_wrappers\.)?ValidationError: (?P<count>\d{1,4}) validation errors? for (?P<model>[A-Za-z_]\w{0,100})",
      "pydantic v1.10.13 pydantic/error_wrappers.py ValidationError.__str__: f'{count} validation error{\"\" if count == 1 else \"s\"} for "
      "{self.model.__name__}\\n{display_errors(errors)}' (DeepSpeed 0.6-0.14 configs were pydantic v1 models)"),
    W(Symptom.VALUE_NOT_INTEGER, ("got a number with a fractional part",),
      r"Input should be a valid integer, got a number with a fractional part(?: \[type=int_from_float, input_value=(?P<input_value>[^,\]\n]{1,60}))?",
      "pydantic/pydantic-core src/errors/types.rs IntFromFloat: \"Input should be a valid integer, got a number with a fractional part\" "
      "with \" [type=int_from_float, input_value=..., input_type=float]\" (pydantic 2.0-2.14; reproduced with the venv's pydantic 2.x, "
      "and the 2.9 docs link https://errors.pydantic.dev/2.9/v/int_from_float)"),
    W(Symptom.VALUE_NOT_INTEGER, ("type=int_from_float",),
      r"\[type=int_from_float, input_value=(?P<input_value>[^,\]\n]{1,60})",
      "pydantic-core's error line as pydantic 2.x prints it under a field (\"  ... [type=int_from_float, input_value=15099494.4, input_type=float]\"), "
      "also where a log collector cut the message text"),
    W(Symptom.JIT_BUILD_STARTED, (" as PyTorch extensions root...",),
      r"Using (?P<root>\S{1,400}) as PyTorch extensions root\.\.\.",
      "pytorch/pytorch torch/utils/cpp_extension.py _get_build_directory: print(f'Using {root_extensions_directory} as PyTorch extensions "
      "root...', file=sys.stderr) with verbose=True (1.x-2.x; torch 2.13.0 logger.info('Using %s as PyTorch extensions root...')), as "
      "DeepSpeed's op builder (verbose=True) prints it"),
    W(Symptom.JIT_BUILD_STARTED, ("compiling and loading fused kernels",),
      r"^>? ?compiling and loading fused kernels \.\.\.",
      "NVIDIA/Megatron-LM 23.04 megatron/initialize.py _compile_dependencies: print('> compiling and loading fused kernels ...', flush=True) "
      "(and core_r0.8.0 megatron/training/initialize.py), before fused_kernels.load(args) JIT-builds into megatron/fused_kernels/build"),
    W(Symptom.JIT_BUILD_STARTED, ("Emitting ninja build file ", "Building extension module ", "Allowing ninja to set a default number of workers",
                                  "Detected CUDA files, patching ldflags"),
      r"Emitting ninja build file (?P<build_file>\S{1,400}?)\.\.\.|Building extension module (?P<extension>[\w.-]{1,200})\.\.\.|"
      r"Allowing ninja to set a default number of workers\.\.\.|Detected CUDA files, patching ldflags",
      "pytorch/pytorch torch/utils/cpp_extension.py _jit_compile / _write_ninja_file_and_build_library with verbose=True: \"Emitting ninja "
      "build file {}...\", \"Building extension module {}...\", \"Allowing ninja to set a default number of workers... (overridable by "
      "setting the environment variable MAX_JOBS=N)\" and \"Detected CUDA files, patching ldflags\" (print(..., file=sys.stderr) in 1.x-2.x, "
      "logger.info/debug in 2.13.0)"),
    # Megatron-LM before the fused-kernels refactor (0d5188c, 2021-03-17) JIT-built them inside parse_args, right after this
    # line and before the "---- arguments ----" banner; nothing else between the two blocks in any release
    W(Symptom.JIT_BUILD_STARTED, (" for parameters ...",),
      r"^using (?P<params_dtype>torch\.(?:float16|bfloat16|float32|half|float)) for parameters \.\.\.\s{0,4}$",
      "NVIDIA/Megatron-LM megatron/arguments.py parse_args before 0d5188c155 (2021-03): print('using {} for parameters ...'.format("
      "args.params_dtype)), then fused_kernels.load_scaled_upper_triang_masked_softmax_fusion_kernel() etc., then _print_args's "
      "'------------------------ arguments ------------------------'"),
    W(Symptom.JIT_BUILD_WAITING, ("file_baton.py",),
      r'File "(?P<file>[^"\n]{0,300}torch[/\\]utils[/\\]file_baton\.py)", line \d{1,6}, in wait\b',
      "pytorch/pytorch torch/utils/file_baton.py FileBaton.wait (1.x-2.13, reproduced with torch 2.13.0: cpp_extension.load with a stale "
      "'lock' in the build directory, then Ctrl-C): the traceback frame of the loop that sleeps while the lock file exists"),
    W(Symptom.JIT_BUILD_WAITING, ("file_baton.py",),
      r"^\s{1,12}wait \((?P<file>[^():\n]{0,300}torch/utils/file_baton\.py):\d{1,6}\)",
      "benfred/py-spy src/dump.rs frame lines \"    {function} ({file}:{line})\" (0.3+) inside FileBaton.wait"),
    W(Symptom.JIT_BUILD_WAITING, ("Waited on lock file",),
      r"Waited on lock file \"(?P<lock>[^\"\n]{1,400})\" for (?P<seconds>\d{1,9}) seconds",
      "pytorch/pytorch torch/utils/file_baton.py FileBaton.wait (2.x): warnings.warn(f'Waited on lock file \"{self.lock_file_path}\" for "
      "{self.warn_after_seconds} seconds.')"),
    W(Symptom.REQUIREMENT_UNMET, ("is required for a normal functioning of this module, but found",),
      r"(?P<requirement>[A-Za-z][\w.-]{0,100}\s{0,2}(?:[<>=!~]=?|===)[^\s]{1,200}) is required for a normal functioning of this module, "
      r"but found (?P<package>[A-Za-z][\w.-]{0,100})==(?P<version>\d[\w+!-]{0,20}(?:\.[\w+!-]{1,20}){0,6})",
      "huggingface/transformers src/transformers/utils/versions.py _compare_versions: raise ImportError(f\"{requirement} is required for a "
      "normal functioning of this module, but found {pkg}=={got_ver}.{hint}\") (v4.36.2, reproduced; the same in v4.45.0)",
      given=(("form", "raised"),)),
    W(Symptom.REQUIREMENT_UNMET, ("which is incompatible.",),
      r"(?P<requirer>[A-Za-z][\w.-]{0,100}) (?P<requirer_version>\d\S{0,60}) requires (?P<requirement>[A-Za-z][^,\n]{0,200}), but "
      r"you(?:'ll)? have (?P<package>[A-Za-z][\w.-]{0,100}) (?P<version>\d\S{0,60}) which is incompatible\.",
      "pypa/pip 23.2.1 src/pip/_internal/commands/install.py _warn_about_conflicts: \"{name} {version} requires {requirement}, but {you} have "
      "{dep_name} {dep_version} which is incompatible.\" (20.3+; 'you'll' in pip 20.2's resolver)", given=(("form", "pip"),)),
    W(Symptom.REQUIREMENT_UNMET, (" has requirement ",),
      r"(?P<requirer>[A-Za-z][\w.-]{0,100}) (?P<requirer_version>\d\S{0,60}) has requirement (?P<requirement>[A-Za-z][^,\n]{0,200}), but "
      r"you have (?P<package>[A-Za-z][\w.-]{0,100}) (?P<version>\d\S{0,60})\.",
      "pypa/pip src/pip/_internal/commands/check.py: \"%s %s has requirement %s, but you have %s %s.\" (pip check, 9-23.x)",
      given=(("form", "pip"),)),
    W(Symptom.PACKAGE_VERSION, tuple(f"=={d}" for d in "0123456789"),  # a version starts with a digit: "=====" banners are not landed on
      r"^\s{0,8}(?:\[(?:pip3?|conda)\]\s{1,8})?(?P<package>[A-Za-z][\w.-]{0,100})==(?P<version>\d[\w.+!-]{0,60})\s{0,4}$",
      "pypa/pip src/pip/_internal/operations/freeze.py: '{name}=={version}' per line (pip freeze, every release), and pytorch/pytorch "
      "torch/utils/collect_env.py's '[pip3] {name}=={version}' lines (1.x-2.x)"),
    W(Symptom.PACKAGE_VERSION, ("Successfully installed ",),
      r"Successfully installed (?P<installed>[A-Za-z][\w.+!-]{0,100}-\d[^\n]{0,2000})",
      "pypa/pip src/pip/_internal/commands/install.py: logger.info(\"Successfully installed %s\", ' '.join(name-version ...)) (10+)"),
    W(Symptom.PACKAGE_VERSION, ("Requirement already satisfied: ",),
      r"Requirement already satisfied: (?P<package>[A-Za-z][\w.-]{0,100})(?:\[[^\]\n]{0,100}\])?(?:[<>=!~][^\s]{0,60})? in \S{1,300} \((?P<version>\d[\w.+!-]{0,60})\)",
      "pypa/pip src/pip/_internal/resolution/resolvelib/factory.py and req_install: \"Requirement already satisfied: %s in %s (%s)\" (10+)"),
)

SYMPTOM_LITERALS: frozenset[str] = frozenset(lit for w in WORDINGS for lit in w.literals)
BY_LITERAL: dict[str, tuple[Wording, ...]] = {}
for _w in WORDINGS:
    for _lit in _w.literals:
        BY_LITERAL[_lit] = (*BY_LITERAL.get(_lit, ()), _w)
# the literals of the symptoms that read the lines below their first one
SPANNING_LITERALS: frozenset[str] = frozenset(
    lit for w in WORDINGS if w.symptom in (Symptom.TENSOR_PRINTED, Symptom.P2P_BANDWIDTH, Symptom.STACK_DUMP) for lit in w.literals)
