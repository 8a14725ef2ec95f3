"""The one registry of what a cause can ask of the run: each condition's name, what it means, and
the function that judges it. Signatures name conditions in ``requires``/``requires_any``/``rules_out``;
the schema takes the names from here, so a cause cannot name a condition nobody judges."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from mltriage.model import Finding
    from mltriage.run_model.model import RunModel
    from mltriage.symptoms.observe import Observations


@dataclass(frozen=True)
class Judged:
    holds: bool
    why: list[str]  # the run-model facts that made it hold, in words with their lines
    lines: tuple[str, ...] = ()  # the log lines those facts come from (cited as evidence)


Judge = Callable[["RunModel", "list[Finding]", "Observations"], Judged]


@dataclass(frozen=True)
class Condition:
    name: str
    meaning: str  # one line, as the signature schema shows it
    judge: Judge


CONDITIONS: dict[str, Condition] = {}


def condition(name: str, meaning: str) -> Callable[[Judge], Judge]:
    """Register ``judge`` as the condition ``name``."""

    def register(judge: Judge) -> Judge:
        if name in CONDITIONS:
            raise ValueError(f"condition {name!r} registered twice")
        CONDITIONS[name] = Condition(name, meaning, judge)
        return judge

    return register
