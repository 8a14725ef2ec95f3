"""The signature schema: what one entry of the failure encyclopedia must carry.

Signatures live as TOML files under ``signatures/<area>/<id>.toml``; this pydantic model is the
single source of truth for their shape (``mltriage signatures schema`` exports it as JSON Schema
for editors). Controlled vocabularies are ``Literal`` types so a typo fails validation with the
field's name instead of silently creating a new category.
"""

from __future__ import annotations

import re
from typing import Literal

from mltriage.causes.conditions import CONDITIONS
from mltriage.run_model.model import Phase, Silence, StopKind
from mltriage.symptoms.vocabulary import Symptom
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Area = Literal[
    "nccl",
    "cuda",
    "torch-distributed",
    "torchrun",
    "dataloader",
    "numerics",
    "vllm",
    "deepspeed",
    "megatron",
    "huggingface",
    "fsdp",
    "tensorrt-llm",
    "sglang",
    "host",
    "python",
]
Category = Literal[
    "communication",  # collectives, transports, rendezvous, stores
    "memory",  # device or host memory exhaustion
    "hardware",  # Xid, ECC, fallen-off-the-bus, link errors
    "driver",  # driver/runtime/library version and install problems
    "kernel",  # illegal access, device asserts, missing kernel images
    "configuration",  # wrong settings: ports, lengths, parallel sizes
    "data",  # data loading, workers, shared memory
    "numerics",  # NaN/inf, overflow, loss-scale collapse
    "launcher",  # torchrun/srun/mpirun supervision, signals, exit codes
    "correctness",  # silent corruption
    "performance",
    "program",  # plain Python errors in user code
]
Severity = Literal["critical", "error", "warning", "info"]
Role = Literal["root-cause", "collateral", "context"]
Status = Literal["stable", "test", "experimental"]
# What kind of failure a signature names; triage reads it (a hang is decided by kind, not by words).
Kind = Literal[
    "crash",  # the process died or raised
    "hang",  # something waited until a timeout, or never finished
    "silent-corruption",  # the run went on with wrong numbers or output
    "performance",  # slow, not broken
    "configuration",  # a setting or install problem found before or at start-up
]


_ID_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# A matcher made of only these words (optionally with punctuation) would fire on healthy logs.
WEAK_WORDS = frozenset(
    {"error", "errors", "timeout", "timed out", "failed", "failure", "fail", "warning", "exception", "killed", "abort", "nan"}
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Affects(_Strict):
    system: str = Field(min_length=2, description="Product or layer, e.g. 'vLLM', 'NCCL', 'PyTorch'.")
    versions: str = Field(default="all", description="Version range in words or PEP 440 style, e.g. '>=0.4,<0.6'.")


class Matcher(_Strict):
    """How to recognise the failure in a log, one line at a time.

    A line fires the signature when it contains one of ``triggers`` (plain, case-sensitive
    substrings: they feed the fast pre-filter) and matches one of ``patterns``. ``requires``
    adds AND conditions: each must match some line of the same stream (rank/file) within
    ``within`` lines of the firing line. ``excludes`` vetoes a firing line.
    """

    triggers: list[str] = Field(min_length=1, description="Literal substrings, at least one present on every firing line.")
    patterns: list[str] = Field(min_length=1, description="Regexes (module `regex`), named groups capture facts.")
    requires: list[str] = Field(default_factory=list, description="Regexes that must also match nearby (AND).")
    within: int = Field(default=200, ge=1, le=100_000, description="Line window for `requires`.")
    excludes: list[str] = Field(default_factory=list, description="Regexes that veto a firing line.")
    ignore_case: bool = False
    needs_pattern: list[str] = Field(
        default_factory=list,
        description=(
            "Triggers too common to fire on their own. Every other trigger fires the signature even where no pattern "
            "matches (a release's wording the patterns do not know yet), with no facts and lower confidence."
        ),
    )

    @model_validator(mode="after")
    def _needs_pattern_are_triggers(self) -> "Matcher":
        unknown = [t for t in self.needs_pattern if t not in self.triggers]
        if unknown:
            raise ValueError(f"needs_pattern names {unknown!r}, which are not triggers")
        return self

    @field_validator("triggers")
    @classmethod
    def _triggers_specific(cls, value: list[str]) -> list[str]:
        for trigger in value:
            if len(trigger.strip()) < 4:
                raise ValueError(f"trigger {trigger!r} is shorter than 4 characters: it would match healthy lines")
            if trigger.strip().lower().strip(":!. ") in WEAK_WORDS:
                raise ValueError(f"trigger {trigger!r} is a weak matcher (a bare common word)")
        return value


# What a cause can ask of the run model: the names the causes stage registers (mltriage.causes.conditions)
Condition = Literal[tuple(sorted(CONDITIONS))]  # type: ignore[valid-type]  (sorted: moving a condition between modules changes no schema)
# the names come from their owners: the run model's enums and the vocabulary
StopKindName = Literal[tuple(k.value for k in StopKind)]  # type: ignore[valid-type]
PhaseName = Literal[tuple(p.label for p in Phase)]  # type: ignore[valid-type]
SilenceName = Literal[tuple(s.value for s in Silence)]  # type: ignore[valid-type]
SymptomName = Literal[tuple(s.value for s in Symptom)]  # type: ignore[valid-type]


class Cause(_Strict):
    """A failure named by its evidence: the symptoms it needs, how and where the run stopped, and what
    the run model must (``requires``) or must not (``rules_out``) show. A derived signature with a
    ``cause`` is raised by mltriage.causes, never by one line."""

    needs_any: list[SymptomName] = Field(default_factory=list, description="At least one of these symptoms was observed.")
    needs_all: list[SymptomName] = Field(default_factory=list, description="Every one of these symptoms was observed.")
    stop: list[StopKindName] = Field(default_factory=list, description="The run stopped in one of these ways (empty: any).")
    stopped_in: list[PhaseName] = Field(default_factory=list, description="The stop came in one of these phases (empty: any).")
    silent_in: list[PhaseName] | None = Field(
        default=None,
        description="Where a silent stop (the log just ends, hang-silent) counts, when narrower than stopped_in: a paste cut "
        "during set-up looks like a healthy one; a hang the user noted or dumped counts in every phase of stopped_in.",
    )
    silence: list[SilenceName] = Field(
        default_factory=list,
        description="Only a silent stop of one of these kinds (where the log ended: nccl-setup, benchmark-header, benchmark-rows, ...).",
    )
    requires: list[Condition] = Field(default_factory=list)
    requires_any: list[Condition] = Field(default_factory=list, description="At least one of these holds.")
    rules_out: list[Condition] = Field(default_factory=list)
    explained_by: list[str] = Field(
        default_factory=list,
        description="Signatures that already name this cause, or a more specific form of it: where one fired in the same input "
        "as the cause's evidence, the cause stays silent.",
    )
    explains: list[str] = Field(
        default_factory=list,
        description="Signatures whose error findings in the same input are consequences this cause explains: they become "
        "context (a TCPStore timeout that follows a host name that cannot be resolved).",
    )
    warns_alone: bool = Field(
        default=False,
        description="Without a timed-out collective or a hang its finding is a warning: the evidence is the precursor of the "
        "failure (ZeRO-3 meeting another module order), not yet the failure.",
    )
    outranks: bool = Field(
        default=False,
        description="Its finding leads: error findings on its evidence lines become context explained by it "
        "(a component that needs P2P explains the CUDA error it raised).",
    )

    @model_validator(mode="after")
    def _has_evidence(self) -> "Cause":
        if not (self.needs_any or self.needs_all or self.stop):
            raise ValueError("a cause needs symptoms (needs_any / needs_all) or a stop")
        return self


class EnvVar(_Strict):
    name: str
    value: str
    why: str = Field(min_length=5)

    @field_validator("name")
    @classmethod
    def _env_name(cls, value: str) -> str:
        if not _ENV_NAME_RE.match(value):
            raise ValueError(f"{value!r} is not an environment variable name")
        return value


_FLAG_RE = re.compile(r"^--[a-z0-9][a-z0-9_-]*$")
_PROGRAM_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*(?: [a-z0-9][a-z0-9._-]*)?$")


class LaunchFlag(_Strict):
    """A flag on the launch command line: the fix's step as typed data, so an editor can add it to
    the command (a script's `vllm serve` line) and a report can show it as the exact argument."""

    command: str = Field(description="The program (and subcommand) that takes the flag, as typed: 'vllm serve', 'torchrun'.")
    flag: str = Field(description="The long option, e.g. '--disable-custom-all-reduce'.")
    value: str | None = Field(default=None, description="The option's value (pasted as-is; may use {fact}); none for a switch.")
    why: str = Field(min_length=5)

    @field_validator("command")
    @classmethod
    def _program(cls, value: str) -> str:
        if not _PROGRAM_RE.match(value):
            raise ValueError(f"{value!r} is not a program name (one word, optionally a subcommand: 'vllm serve')")
        return value

    @field_validator("flag")
    @classmethod
    def _long_option(cls, value: str) -> str:
        if not _FLAG_RE.match(value):
            raise ValueError(f"{value!r} is not a long option ('--name', no value: that goes in `value`)")
        return value

    @field_validator("value")
    @classmethod
    def _one_word(cls, value: str | None) -> str | None:
        if value is not None and (not value.strip() or "\n" in value):
            raise ValueError("a flag's value must be a non-empty single-line string (omit it for a switch)")
        return value


class StackChange(_Strict):
    stack: str = Field(description="e.g. 'pytorch', 'vllm', 'deepspeed', 'megatron', 'huggingface', 'slurm', 'docker'")
    change: str = Field(min_length=5, description="The config or code change for that stack (Markdown allowed).")


class Fix(_Strict):
    summary: str = Field(min_length=10)
    env: list[EnvVar] = Field(default_factory=list)
    flags: list[LaunchFlag] = Field(default_factory=list, description="Flags to add to the launch command (an editor edits that line).")
    steps: list[str] = Field(default_factory=list)
    commands: list[str] = Field(default_factory=list, description="Shell commands that apply or support the fix.")
    stacks: list[StackChange] = Field(default_factory=list)


class Reference(_Strict):
    title: str = Field(min_length=3)
    url: str = Field(pattern=r"^https://")


class Sample(_Strict):
    """A log excerpt. ``source`` says where it came from: a reproduction (command) or the upstream
    format string it was built from (repository, path and the format string)."""

    text: str = Field(min_length=1)
    source: str = Field(min_length=10)
    facts: dict[str, str] = Field(default_factory=dict, description="Facts the matcher must capture from this sample.")


class Samples(_Strict):
    positive: list[Sample] = Field(min_length=1)
    negative: list[Sample] = Field(min_length=1)


class Signature(_Strict):
    id: str
    title: str = Field(min_length=8)
    area: Area
    category: Category
    severity: Severity
    role: Role = Field(description="Usually a root cause, usually collateral (a consequence of another failure), or context.")
    kind: Kind = Field(default="crash", description="What kind of failure: crash, hang, silent-corruption, performance, configuration.")
    reported_by: Literal["worker", "launcher"] = Field(
        default="worker",
        description="Who prints the line: the failing process itself, or a launcher/supervisor reporting on a worker "
        "(torchrun's agent, the deepspeed launcher, mpirun, subprocess): a launcher's line is never a worker's own error.",
    )
    status: Status = "stable"
    confidence: float = Field(default=0.8, ge=0.0, le=1.0, description="How sure a match alone makes us.")
    tags: list[str] = Field(min_length=1)
    affects: list[Affects] = Field(min_length=1)
    summary: str = Field(min_length=20, description="One sentence: what happened. May use {fact} placeholders.")
    match: Matcher | None = Field(default=None, description="Line matchers; absent only for a derived signature.")
    derived: bool = Field(
        default=False,
        description="Raised by the run-level reasoning (mltriage.engine.run_reasoning) from what a whole log shows, not matched line by line.",
    )
    cause: Cause | None = Field(default=None, description="For a derived signature: the evidence that raises it (mltriage.causes).")
    mechanism: str = Field(min_length=40, description="Why it happens, in plain words.")
    symptoms: list[str] = Field(min_length=1)
    confirm: list[str] = Field(min_length=1, description="How to confirm the diagnosis.")
    fix: Fix
    verify: str = Field(min_length=5, description="A command (or precise check) that proves the fix worked.")
    prevention: list[str] = Field(min_length=1)
    related: list[str] = Field(default_factory=list)
    references: list[Reference] = Field(min_length=1)
    p2p_related: bool = Field(default=False, description="Attach the local P2P probe's verdicts to this finding.")
    fallback: bool = Field(
        default=False,
        description="Fires only when no other signature explains the same traceback (generic catch-alls).",
    )
    samples: Samples

    @field_validator("id")
    @classmethod
    def _id_shape(cls, value: str) -> str:
        if not _ID_RE.match(value):
            raise ValueError("id must be lower-case words joined by '-'")
        return value

    @model_validator(mode="after")
    def _matched_or_derived(self) -> "Signature":
        if self.match is None and not self.derived:
            raise ValueError("match is required unless the signature is derived")
        if self.match is not None and self.derived:
            raise ValueError("a derived signature has no line matchers")
        return self

    @model_validator(mode="after")
    def _fix_has_substance(self) -> "Signature":
        if not (self.fix.env or self.fix.flags or self.fix.steps or self.fix.commands or self.fix.stacks):
            raise ValueError("fix needs at least one of env, flags, steps, commands or stacks")
        return self


def json_schema() -> dict:
    return Signature.model_json_schema()
