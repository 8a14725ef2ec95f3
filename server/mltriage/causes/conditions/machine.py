"""What causes ask of the machine and the frameworks: GPUs, their links, P2P, shared memory, GPU errors and memory."""

from __future__ import annotations

from mltriage.causes.conditions.registry import Judged, condition
from mltriage.masking import clip
from mltriage.model import Finding
from mltriage.run_model.model import Interconnect, Phase, RunModel
from mltriage.symptoms.observe import Observations
from mltriage.symptoms.vocabulary import Symptom, Transport

EVAL_TRACEBACK_LINES = 300  # an evaluation frame this far above an OOM line is in its traceback

@condition("multi-gpu", "two or more GPUs/ranks take part")
def _multi_gpu(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    return Judged(run.multi_gpu, [f"{run.gpus.count} GPUs or ranks take part"] if run.multi_gpu else [])


@condition("nvlink", "NVLink / NVSwitch GPUs")
def _nvlink(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    return Judged(run.gpus.interconnect is Interconnect.NVLINK, [])


@condition("pcie", "the GPUs talk over PCIe (PCIe-only models, P2P/SHM transports without NVLink, vLLM turning custom all-reduce off)")
def _pcie(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    facts = run.pcie_evidence
    return Judged(bool(facts), [f.cited() for f in facts], tuple(f.text for f in facts if f.line))


@condition("custom-allreduce", "a custom all-reduce (vLLM, TensorRT-LLM, SGLang) is on the failing path or enabled")
def _custom_allreduce(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    if run.custom_allreduce is False:
        return Judged(False, [])  # the run said it turned custom all-reduce off
    obs = observations.first(Symptom.CUSTOM_ALLREDUCE)
    if obs is not None:
        return Judged(True, [f"a custom all-reduce is on the failing path ({clip(str(obs.facts.get('where', '')), 60)}, line {obs.line})"])
    return Judged(run.custom_allreduce is True, ["the run enabled custom all-reduce"] if run.custom_allreduce else [])


@condition("p2p-disabled", "the run already set NCCL_P2P_DISABLE=1")
def _p2p_disabled(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    return Judged(run.env.get("NCCL_P2P_DISABLE") == "1", [])


@condition("nccl-versions-differ", "the log shows two NCCL releases (major.minor) in one job")
def _nccl_versions_differ(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    # one job, two NCCL releases (major.minor): the ranks do not speak the same protocol
    releases = {".".join(v.split(".")[:2]): fact for v, fact in run.nccl_versions.items()}
    facts = list(releases.values())
    return Judged(len(releases) > 1, [f"the log shows {len(releases)} NCCL releases: " + ", ".join(f.cited() for f in facts)]
                  if len(releases) > 1 else [], tuple(f.text for f in facts))


@condition("no-error", "no error line was found (the cause explains a run that said nothing)")
def _no_error(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    return Judged(not any(f.is_error for f in findings), [])


# the findings of a process that died in native code, whoever reports it: faulthandler, the shell, torchrun, the kernel
NATIVE_CRASHES = frozenset({"python-fatal-signal", "host-segfault-shell", "host-abort-shell", "torchrun-worker-sigsegv",
                            "torchrun-worker-sigabrt", "host-segfault-in-gpu-library", "mpi-process-received-signal"})


@condition("native-crash", "a process died in native code (a segmentation fault or an abort: faulthandler, the shell, torchrun, the kernel)")
def _native_crash(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    crash = next((f for f in findings if f.signature in NATIVE_CRASHES), None)
    if crash is None:
        return Judged(False, [])
    return Judged(True, [f"{crash.title} (line {crash.line})"], tuple(crash.evidence[-1:]))


@condition("shared-memory", "the filesystem that was full is /dev/shm (a shared-memory file, or multiprocessing/shared-tensor code raised it)")
def _shared_memory(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
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


@condition("launch-timed-out", "CUDA reported cudaErrorLaunchTimeout (a display watchdog ended a kernel)")
def _launch_timed_out(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    obs = observations.first(Symptom.LAUNCH_TIMEOUT)
    return Judged(obs is not None, [f"CUDA says the kernel launch timed out and was terminated (cudaErrorLaunchTimeout, line "
                                    f"{obs.line}): a watchdog ended it"] + _windows(observations) if obs else [])


@condition("unknown-error-after-kernel", "CUDA error 999 came back from a synchronize or a copy that waited for kernels")
def _unknown_error_after_kernel(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    # error 999 where the program waited for its kernels (a synchronize, a copy back): the GPU was reset under them
    obs = next((o for o in observations.of(Symptom.CUDA_UNKNOWN_ERROR) if o.facts.get("call")), None)
    return Judged(obs is not None, [f"CUDA error 999 (unknown error) came back from {obs.facts['call']} (line {obs.line}), "
                                    "while the program waited for its kernels to finish"] + _windows(observations) if obs else [])


@condition("serving-engine", "the run is vLLM or SGLang (its framework lines, or its CUDA graph capture lines)")
def _serving_engine(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    # vLLM or SGLang: its memory budget (gpu_memory_utilization / mem_fraction_static) is what ran out
    engines = sorted(f.value for f in run.frameworks if f.value in ("vllm", "sglang"))
    capture = observations.first(Symptom.CUDA_GRAPH_CAPTURE)
    why = [f"the run is {' and '.join(engines)}, which claims a fixed share of GPU memory at start-up"] if engines else []
    if capture is not None:
        why.append(f"it was capturing CUDA graphs (line {capture.line}): their memory comes on top of the profiled budget")
    return Judged(bool(engines) or capture is not None, why, (capture.text,) if capture else ())


@condition("oom-in-eval", "the GPU OOM's traceback runs through an evaluation/validation loop")
def _oom_in_eval(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    # the out-of-memory error's own traceback runs through an evaluation loop (its frames come before it)
    for oom in observations.of(Symptom.GPU_OOM):
        frame = next((o for o in observations.of(Symptom.EVAL_FRAME)
                      if o.source == oom.source and 0 < oom.line - o.line <= EVAL_TRACEBACK_LINES), None)
        if frame is not None:
            return Judged(True, [f"the allocation failed inside evaluation ({frame.facts.get('function')}, line {frame.line})"],
                          (frame.text,))
    return Judged(False, [])


def _framework(name: str):
    def judge(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
        held = any(f.value == name for f in run.frameworks)
        return Judged(held, [f"the run is {name}"] if held else [])
    return judge


for _name in ("tensorrt-llm", "vllm", "sglang"):
    condition(_name, "the run is " + _name)(_framework(_name))


def _windows(observations: Observations) -> list[str]:
    obs = observations.first(Symptom.WINDOWS_HOST)
    return [f"the run is on Windows ({clip(str(obs.facts.get('where', '')), 60)}, line {obs.line}), whose display driver resets a GPU "
            "whose kernel runs past TdrDelay"] if obs else []


# the experiments that take one of NCCL's layers out of the path, each named by what it tests
_LAYER_EXPERIMENTS = {
    "p2p": "NCCL_P2P_DISABLE=1 (direct GPU peer-to-peer: PCIe ACS, the IOMMU, VMs and consumer GPUs break it)",
    "shm": "NCCL_SHM_DISABLE=1 (host shared memory: a container needs --ipc=host or a larger --shm-size for /dev/shm)",
    "nvls": "NCCL_NVLS_ENABLE=0 (NVSwitch multicast: Fabric Manager must run on NVSwitch systems, `systemctl status nvidia-fabricmanager`)",
    "cumem": "NCCL_CUMEM_ENABLE=0 (NCCL's cuMem allocations, which drivers, containers and memory limits can refuse)",
}


@condition("setup-differential", "always holds: which of NCCL's layers a stop in set-up points at first, and the experiment for each")
def _setup_differential(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    """Always holds: the layers a hang in NCCL's set-up can sit in, most likely first for where the log stopped
    and what it shows (a container's /dev/shm, the transport NCCL chose), each with the one export that tests it."""
    order = ["p2p", "shm", "nvls", "cumem"]
    phase = run.stop.phase
    if phase is Phase.LAUNCH:
        where = ("the log shows none of NCCL's set-up lines: rerun with NCCL_DEBUG=INFO to see whether it hangs in NCCL at all; "
                 "if it does, these are its layers")
    elif phase is Phase.COMM_SETUP:
        where = ("NCCL had printed no channel yet: it stopped in its bootstrap or topology detection, where every rank must "
                 "arrive (compare each rank's Init START with nranks: a rank that never started hangs the rest)")
    elif phase is Phase.CHANNELS:
        where = "NCCL was connecting its channels between the GPUs: the transport it chose is the first suspect"
    else:
        where = "the communicator came up and the first collective never finished: the data path between the GPUs is the suspect"
    if Transport.SHM in run.transports or run.network.containers:
        order = ["shm", "p2p", "nvls", "cumem"]  # a container's /dev/shm, or NCCL going through host memory
    why = [where, "the experiments, one layer each, likeliest first: " + "; ".join(_LAYER_EXPERIMENTS[k] for k in order)]
    return Judged(True, why)
