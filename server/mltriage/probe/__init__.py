"""Local GPU peer-to-peer probe: support (NVML), byte-exact correctness and speed per GPU pair.

API for the diagnosis engine: ``load_cached_report()`` (no GPU work), ``run_probe(...)``,
``ProbeReport.pair_summaries()`` / ``.machine_verdict`` / ``.to_json()``, and
``parse_pasted_matrices(text)`` for ``nvidia-smi topo -m`` / ``p2pBandwidthLatencyTest`` output.
"""

from .api import DEFAULT_TIMEOUT_S, load_cached_report, run_probe
from .model import SCHEMA, PairResult, ProbeReport
from .pasted import PastedTopology, parse_pasted_matrices

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "SCHEMA",
    "PairResult",
    "PastedTopology",
    "ProbeReport",
    "load_cached_report",
    "parse_pasted_matrices",
    "run_probe",
]
