"""Stage 2b of the engine: one typed record of what a log says about its run.

``model`` holds the types (phases, how the run stopped, its GPUs and their interconnect, the
environment it set, the frameworks and versions it names); ``build`` makes one ``RunModel`` from
the scan's observations, run facts and the findings' severities. Causes (``mltriage.causes``)
read it; nothing here decides what broke."""

from mltriage.run_model.model import Framework, Gpus, Interconnect, Phase, PhaseMark, RunModel, Silence, Stop, StopKind
from mltriage.run_model.build import build_run_model

__all__ = ["Framework", "Gpus", "Interconnect", "Phase", "PhaseMark", "RunModel", "Silence", "Stop", "StopKind", "build_run_model"]
