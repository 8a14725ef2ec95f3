"""What causes ask of a failed call into NCCL: which result it returned, and whether anything in the log says why."""

from __future__ import annotations

from mltriage.causes.conditions.registry import Judged, condition
from mltriage.masking import clip
from mltriage.model import Finding
from mltriage.run_model.model import RunModel
from mltriage.symptoms.observe import Observation, Observations
from mltriage.symptoms.vocabulary import NcclResult, Symptom

# the findings that only restate the result code in a carrier's words (vLLM's PyNCCL wrapper is one more carrier)
RESULT_CARRIERS = frozenset({"vllm-pynccl-nccl-error"})


def _first_with(observations: Observations, result: NcclResult) -> Observation | None:
    return next((o for o in observations.of(Symptom.NCCL_ERROR) if o.facts.get("result") is result), None)


def _returned(result: NcclResult, observations: Observations) -> Judged:
    obs = _first_with(observations, result)
    if obs is None:
        return Judged(False, [])
    return Judged(True, [f"a call into NCCL returned {result.value} (line {obs.line}: {clip(obs.text, 120)})"])


@condition("nccl-cuda-error", "a call into NCCL returned ncclUnhandledCudaError (\"unhandled cuda error\")")
def _nccl_cuda_error(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    return _returned(NcclResult.CUDA, observations)


@condition("nccl-system-error", "a call into NCCL returned ncclSystemError (\"unhandled system error\")")
def _nccl_system_error(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    return _returned(NcclResult.SYSTEM, observations)


@condition("nccl-error-unexplained", "a call into NCCL failed and no finding but a catch-all layer (the result code, the exception) says why")
def _nccl_error_unexplained(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    """Only the result code is known: no NCCL WARN, CUDA error or network line that a more precise finding reads."""
    named = [f for f in findings if f.is_error and not f.generic and f.reported_by != "launcher" and f.signature not in RESULT_CARRIERS]
    return Judged(observations.has(Symptom.NCCL_ERROR) and not named,
                  ["no line before it says which call failed: NCCL's own WARN lines are not in the log"] if not named else [])


@condition("nodes-or-containers", "the run spans nodes, or its ranks run in containers (bridge addresses, container-id hosts)")
def _nodes_or_containers(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    facts = run.network.multi_node_evidence() + list(run.network.containers[:2])
    return Judged(bool(facts), [f.cited() for f in facts], tuple(f.text for f in facts if f.line))


@condition("nccl-result-restated", "a finding already reads the failed call's line: NCCL's result code in its words, or its caller's own finding")
def _nccl_result_restated(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    """Any error finding on the line but a catch-all of another layer (an exception's type): NCCL's result-code
    findings (catch-alls of NCCL's own), and a caller's finding (vLLM's PyNCCL) that knows more than NCCL's words."""
    lines = {(o.source, o.line) for o in observations.of(Symptom.NCCL_ERROR)}
    restating = next((f for f in findings if f.is_error and (f.source, f.line) in lines and (f.area == "nccl" or not f.generic)), None)
    return Judged(restating is not None, [f"{restating.signature} reads the same line ({restating.line})"] if restating else [])
