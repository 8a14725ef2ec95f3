"""Stage 3b of the engine: causes, named from evidence across lines and ranks.

A cause is a derived signature with a ``[cause]`` table (``schema.Cause``): the symptoms it needs,
how and where the run must have stopped, and the run-model conditions that make it likely or rule
it out. ``raise_causes`` fires every cause whose evidence holds and returns their findings, each
citing the lines of the observations it stands on; a cause that ``outranks`` makes the error
findings on those lines context it explains."""

from mltriage.causes.evaluate import raise_causes

__all__ = ["raise_causes"]
