"""The probe's result types and their JSON form (schema ``mltriage.probe/v1``, see README.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SCHEMA = "mltriage.probe/v1"

# Pair verdicts, worst first; the machine verdict is the worst pair verdict.
CRASH = "CRASH"
HANG = "HANG"
CORRUPT = "CORRUPT"
SLOW = "SLOW"
NOT_SUPPORTED = "NOT_SUPPORTED"
UNTESTED = "UNTESTED"  # the worker died or hung before reaching this pair
OK = "OK"
PAIR_VERDICTS = (CRASH, HANG, CORRUPT, SLOW, NOT_SUPPORTED, UNTESTED, OK)
BAD_VERDICTS = frozenset({CRASH, HANG, CORRUPT, SLOW, NOT_SUPPORTED})

# Machine-only verdicts.
SINGLE_GPU = "SINGLE_GPU"  # nothing to test: exit 0
NO_GPU = "NO_GPU"  # no driver, no GPU or no GPU runtime: exit 3

EXIT_OK = 0
EXIT_BAD = 1
EXIT_NO_GPU = 3


def worst(verdicts: list[str]) -> str:
    """The most severe verdict of ``verdicts`` (OK when empty)."""
    order = {v: i for i, v in enumerate(PAIR_VERDICTS)}
    return min(verdicts, key=lambda v: order.get(v, 0), default=OK)


@dataclass
class PairResult:
    """One ordered GPU pair, numbered by CUDA ordinal (as the user's process sees them)."""

    src: int
    dst: int
    verdict: str = UNTESTED
    reason: str = ""
    can_access_peer: bool | None = None
    link: str = "unknown"  # NV18 / PIX / PXB / PHB / NODE / SYS / unknown (from NVML)
    checks: int = 0  # byte-exact comparisons that passed or failed
    mismatch: dict[str, Any] | None = None  # first failing check: path, size, pattern, offset, ...
    p2p_gbps: float | None = None
    host_gbps: float | None = None
    bidir_p2p_gbps: float | None = None  # both directions of the unordered pair together
    bidir_host_gbps: float | None = None
    latency_p2p_us: float | None = None
    latency_host_us: float | None = None
    nvml_caps: dict[str, str] = field(default_factory=dict)  # read/write/nvlink/atomics -> word

    @property
    def label(self) -> str:
        return f"GPU{self.src}->GPU{self.dst}"

    def summary(self) -> str:
        """One line the diagnosis can attach to a finding."""
        head = f"{self.label}: {self.verdict}"
        if self.verdict == CORRUPT and self.mismatch:
            m = self.mismatch
            return (
                f"{head} at offset {m['offset']} ({m['path']} copy of {m['size']} bytes, "
                f"{m['pattern']} pattern)"
            )
        if self.verdict in (OK, SLOW) and self.p2p_gbps is not None:
            host = f", host path {self.host_gbps:.1f} GB/s" if self.host_gbps is not None else ""
            return f"{head}, P2P {self.p2p_gbps:.1f} GB/s{host} [{self.link}]"
        return f"{head}" + (f" ({self.reason})" if self.reason else "")

    def to_json(self) -> dict[str, Any]:
        return {
            "src": self.src,
            "dst": self.dst,
            "verdict": self.verdict,
            "reason": self.reason,
            "can_access_peer": self.can_access_peer,
            "link": self.link,
            "nvml_caps": dict(self.nvml_caps),
            "correctness": {"checks": self.checks, "first_mismatch": self.mismatch},
            "bandwidth": {
                "p2p_gbps": self.p2p_gbps,
                "host_gbps": self.host_gbps,
                "bidir_p2p_gbps": self.bidir_p2p_gbps,
                "bidir_host_gbps": self.bidir_host_gbps,
                "latency_p2p_us": self.latency_p2p_us,
                "latency_host_us": self.latency_host_us,
            },
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> PairResult:
        bw = d.get("bandwidth") or {}
        corr = d.get("correctness") or {}
        return cls(
            src=d["src"],
            dst=d["dst"],
            verdict=d.get("verdict", UNTESTED),
            reason=d.get("reason", ""),
            can_access_peer=d.get("can_access_peer"),
            link=d.get("link", "unknown"),
            nvml_caps=dict(d.get("nvml_caps") or {}),
            checks=corr.get("checks", 0),
            mismatch=corr.get("first_mismatch"),
            **{k: bw.get(k) for k in (
                "p2p_gbps", "host_gbps", "bidir_p2p_gbps", "bidir_host_gbps",
                "latency_p2p_us", "latency_host_us")},
        )


@dataclass
class ProbeReport:
    machine_verdict: str
    exit_code: int
    message: str
    pairs: list[PairResult] = field(default_factory=list)
    advice: dict[str, list[str]] = field(default_factory=dict)
    inventory: dict[str, Any] = field(default_factory=dict)
    platform: dict[str, Any] = field(default_factory=dict)
    runtime: dict[str, Any] = field(default_factory=dict)
    worker: dict[str, Any] = field(default_factory=dict)
    timing: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    cache: dict[str, Any] = field(default_factory=dict)
    created: str = ""

    def pair(self, src: int, dst: int) -> PairResult | None:
        return next((p for p in self.pairs if p.src == src and p.dst == dst), None)

    def pair_summaries(self) -> list[str]:
        return [p.summary() for p in self.pairs]

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "created": self.created,
            "machine_verdict": self.machine_verdict,
            "exit_code": self.exit_code,
            "message": self.message,
            "pairs": [p.to_json() for p in self.pairs],
            "advice": self.advice,
            "inventory": self.inventory,
            "platform": self.platform,
            "runtime": self.runtime,
            "worker": self.worker,
            "timing": self.timing,
            "options": self.options,
            "cache": self.cache,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ProbeReport:
        if d.get("schema") != SCHEMA:
            raise ValueError(f"not a {SCHEMA} report (schema={d.get('schema')!r})")
        return cls(
            machine_verdict=d["machine_verdict"],
            exit_code=d["exit_code"],
            message=d.get("message", ""),
            pairs=[PairResult.from_json(p) for p in d.get("pairs", [])],
            advice=d.get("advice") or {},
            inventory=d.get("inventory") or {},
            platform=d.get("platform") or {},
            runtime=d.get("runtime") or {},
            worker=d.get("worker") or {},
            timing=d.get("timing") or {},
            options=d.get("options") or {},
            cache=d.get("cache") or {},
            created=d.get("created", ""),
        )
