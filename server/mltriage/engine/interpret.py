"""Read the numbers a finding captured and narrow its fix to the one that applies.

A signature's fix lists every remedy for its failure; the captured facts often say which one this
log needs. Interpreters are small, per-signature and conservative: they add a note that cites the
numbers and drop a remedy only when the numbers rule it out.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import Enum

from mltriage.lazy_pattern import lazy
from mltriage.numbers import parse_float
from mltriage.model import Finding

_UNITS = {"bytes": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4}
_SIZE = lazy(re.compile, r"^\s*(\d+(?:\.\d+)?)\s*(bytes|KiB|MiB|GiB|TiB)\s*$")


def size_bytes(text: str | None) -> float | None:
    m = _SIZE.match(text or "")
    number = parse_float(m.group(1)) if m else None
    return number * _UNITS[m.group(2)] if number is not None else None


class Memory(Enum):
    """What a CUDA OOM message's numbers say about the caching allocator's cache."""

    FRAGMENTED = "fragmented"  # enough is reserved but unallocated: an allocator setting can reclaim it
    FULL = "full"  # little is cached: the working set itself does not fit
    TOO_BIG = "too-big"  # one request is larger than the whole GPU
    UNKNOWN = "unknown"  # the message did not give the numbers


_ALLOCATOR_SETTING = ("expandable_segments", "_ALLOC_CONF")  # the remedy that only helps a fragmented cache


def _unallocated(facts: dict[str, str]) -> float | None:
    """Bytes reserved by the allocator but not allocated: said outright since PyTorch 2.1, reserved
    minus allocated in 1.4-2.0, "cached" in 1.0-1.3."""
    said = size_bytes(facts.get("reserved_unallocated"))
    if said is not None:
        return said
    reserved, allocated = size_bytes(facts.get("reserved")), size_bytes(facts.get("allocated"))
    if reserved is not None and allocated is not None:
        return max(0.0, reserved - allocated)
    return size_bytes(facts.get("cached"))


def oom_memory(facts: dict[str, str]) -> Memory:
    requested, total = size_bytes(facts.get("requested")), size_bytes(facts.get("total"))
    if requested is not None and total is not None and requested > total:
        return Memory.TOO_BIG
    cached = _unallocated(facts)
    if cached is None or total is None:
        return Memory.UNKNOWN
    if cached > 0.1 * total or (requested is not None and cached >= requested):
        return Memory.FRAGMENTED
    return Memory.FULL


def _without_allocator_setting(f: Finding, summary: str) -> None:
    """A cache with nothing to reclaim: no export, step or command of the fix offers the allocator
    setting, and the summary says what does apply."""
    for name in [n for n in f.fix.env if any(s in n or s in f.fix.env[n] for s in _ALLOCATOR_SETTING)]:
        del f.fix.env[name]
    f.fix.steps = [x for x in f.fix.steps if not any(s in x for s in _ALLOCATOR_SETTING)]
    f.fix.commands = [x for x in f.fix.commands if not any(s in x for s in _ALLOCATOR_SETTING)]
    f.fix.summary = summary


def _cuda_oom(f: Finding) -> None:
    facts = f.facts
    total, free, allocated = size_bytes(facts.get("total")), size_bytes(facts.get("free")), size_bytes(facts.get("allocated"))
    memory = oom_memory(facts)
    if memory is Memory.TOO_BIG:
        f.notes.append(
            f"one allocation of {facts['requested']} is larger than the whole GPU ({facts['total']}): "
            "no allocator setting can satisfy it; shrink or shard that tensor"
        )
        _without_allocator_setting(f, "One allocation is larger than the whole GPU: shrink or shard that tensor.")
        return
    cached = _unallocated(facts)
    cached_text = facts.get("reserved_unallocated") or (f"{cached / 1024**3:.2f} GiB" if cached is not None else "")
    if memory is Memory.FRAGMENTED:
        f.notes.append(
            f"fragmentation: {cached_text} is reserved by PyTorch but unallocated"
            + (f" (the request was {facts['requested']})" if facts.get("requested") else "")
            + (": expandable segments should fix this" if facts.get("reserved_unallocated") else
               # the message of PyTorch < 2.1, whose allocator has no expandable segments yet
               ": an allocator setting should fix this (max_split_size_mb:512 before PyTorch 2.1)")
        )
        f.confidence = min(0.99, f.confidence + 0.02)
        return
    if memory is Memory.FULL:
        f.notes.append(
            f"no fragmentation to reclaim (only {cached_text} cached): the working set does not fit"
            + (f" ({facts['allocated']} allocated by tensors of {facts['total']})" if allocated is not None else "")
            + "; reduce batch or sequence length, checkpoint activations, or shard"
        )
        _without_allocator_setting(f, "The working set does not fit in the GPU: shrink it (batch, sequence length, "
                                      "activation checkpointing, sharding) or free the GPU from other processes.")
    if free is not None and allocated is not None and total is not None and total - free - allocated > 0.2 * total:
        f.notes.append(
            f"about {(total - free - allocated) / 1024**3:.1f} GiB of this GPU is held outside PyTorch's tensors "
            "(other processes, the CUDA context, NCCL buffers): check nvidia-smi for other processes"
        )


def _python_exception(f: Finding) -> None:
    """The generic traceback layer: name the exception, where it was raised and which library."""
    facts = f.facts
    kind = facts.get("exception_type")
    if not kind:
        return
    message = facts.get("exception_message", "")
    where = facts.get("user_frame")
    function = facts.get("user_function")
    library = facts.get("library")
    text = f"The process raised an uncaught {kind}" + (f": {message}" if message else "")
    if where:
        text += f" — in your code at {where}" + (f" (`{function}`)" if function else "")
    if library:
        text += f", from inside {library}" + (f" ({facts['raised_in']})" if facts.get("raised_in") else "")
    f.root_cause = text + "."
    if where:
        f.fix.steps.insert(0, f"Open {where}" + (f" (`{function}`)" if function else "") +
                           f" and fix what raised {kind}" + (f" there inside {library}" if library else "") +
                           "; read the final exception line for the value that was wrong")
        f.verify = f"{facts.get('command') or '<command>'}  # rerun: the {kind} at {where} must be gone"
    if not where and not facts.get("raised_in"):
        f.confidence = min(f.confidence, 0.4)  # no frame at all: only the exception line is known


_GPU_LIST = lazy(re.compile, r"^[(\[]\s*(\d+(?:\s*,\s*\d+)*)\s*(?:,\s*)?[)\]]$")  # (not `\s*,?\s*`: quadratic)


def gpu_list(text: str | None) -> list[int] | None:
    m = _GPU_LIST.match((text or "").strip())
    return [int(n) for n in m.group(1).split(",")] if m else None


def _vllm_p2p_batch_test(f: Finding) -> None:
    """vLLM prints the tested pairs as two parallel lists, zip(*product(ids, ids)): sources and
    targets. A reader sees the pairs."""
    sources, targets = gpu_list(f.facts.get("batch_src")), gpu_list(f.facts.get("batch_tgt"))
    if not sources or not targets or len(sources) != len(targets):
        return
    pairs = ", ".join(f"{s}→{t}" for s, t in zip(sources, targets))
    f.facts["gpu_pairs"] = pairs
    f.notes.append(f"GPU pairs tested (source→target): {pairs}; the child's own error, printed under this line, names the one that failed")


INTERPRETERS: dict[str, Callable[[Finding], None]] = {
    "cuda-oom": _cuda_oom,
    "python-unhandled-exception": _python_exception,
    "vllm-p2p-access-test-crashed": _vllm_p2p_batch_test,
}


def interpret(findings: list[Finding]) -> None:
    for finding in findings:
        hook = INTERPRETERS.get(finding.signature)
        if hook is not None:
            hook(finding)
