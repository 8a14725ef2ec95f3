"""What causes ask of the run's numeric precision and the values it printed."""

from __future__ import annotations

import re

from mltriage.causes.conditions.registry import Judged, condition
from mltriage.lazy_pattern import lazy
from mltriage.model import Finding
from mltriage.run_model.model import RunModel
from mltriage.symptoms.observe import Observations
from mltriage.symptoms.vocabulary import Precision, Symptom

# where numpy's cast warning comes from an image or video conversion (diffusers' numpy_to_pil, export_to_video, PIL)
_IMAGE_CAST = lazy(re.compile, r"image|video|frame|vae|diffusers|pil\b|PIL", re.IGNORECASE)

@condition("precision-fp16", "the run computes in fp16 (fp16=True, --dtype half, \"fp16\": {\"enabled\": true}, mixed precision fp16, autocast)")
def _precision_fp16(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    held = run.precision is Precision.FP16
    facts = [f for f in run.precision_evidence if "fp16" in f.words]
    return Judged(held, [f.cited() for f in facts] if held else [], tuple(f.text for f in facts) if held else ())


@condition("precision-not-fp16", "the run says it computes in bf16 or fp32")
def _precision_not_fp16(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    # the run says it computes in bf16 or fp32: fp16's range is not what broke
    return Judged(run.precision in (Precision.BF16, Precision.FP32), [])


@condition("gpu-without-bf16", "the log names a GPU without bf16 (V100, T4, RTX 20xx...): its runs use fp16 or fp32")
def _gpu_without_bf16(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    facts = run.without_bf16
    return Judged(bool(facts), [f.cited() for f in facts], tuple(f.text for f in facts))


@condition("beyond-fp16-range", "a value dump shows magnitudes beyond 65504, or a debug hook found inf/nan in a layer")
def _beyond_fp16_range(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    obs = observations.first(Symptom.FP16_RANGE_EXCEEDED)
    if obs is None:
        return Judged(False, [])
    value, where = obs.facts.get("abs_max"), obs.facts.get("where")
    words = (f"values reach {value}, beyond float16's largest finite value 65504 (line {obs.line})" if value else
             f"the {where} produced all-NaN output while running in half precision (line {obs.line})" if where else
             f"a debug hook found inf/nan in a layer's output (line {obs.line})")
    return Judged(True, [words], (obs.text,))


@condition("nan-image", "numpy cast NaN pixels to 8-bit in an image/video conversion (black images)")
def _nan_image(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    obs = next((o for o in observations.of(Symptom.NONFINITE_CAST) if _IMAGE_CAST.search(o.text)), None)
    return Judged(obs is not None, [f"NaN pixel values were cast to 8-bit (line {obs.line}): the images come out black or "
                                    "empty; half-precision image decoders (a VAE in fp16) overflow so"] if obs else [],
                  (obs.text,) if obs else ())
