"""What causes ask of the run model, one module per family; every condition registers itself in
``registry.CONDITIONS`` under the name signatures use."""

from mltriage.causes.conditions import machine, nccl_errors, network, numerics, timeouts, versions  # noqa: F401  (they register)
from mltriage.causes.conditions.registry import CONDITIONS, Condition, Judged

__all__ = ["CONDITIONS", "Condition", "Judged"]
