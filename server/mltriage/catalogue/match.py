"""Which catalogue entries a log line is, and which releases the log can come from.

A line is cut into words; the words that index entries pick the candidates; each candidate's line
matchers are tried with a time limit. The most specific match (the most literal text matched)
wins; equally specific matches from several projects (a vendored copy) are all kept.

Releases are narrowed by every catalogued line together (a log printed all of them, so its
release has them all) and by file:line hints that log prefixes carry (NCCL's
``misc/shmutils.cc:129``, c10's ``[W socket.cpp:426]``, vLLM's ``[file.py:N]``, a traceback's
innermost frame).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mltriage.catalogue.formats import MIN_LITERAL_CHARS, TOKEN
from mltriage.catalogue.store import Catalogue, Entry, Site
from mltriage.numbers import parse_int

MATCH_TIMEOUT_S = 0.02
MAX_CANDIDATES = 200  # a line that names hundreds of indexed words is not a message: try the first ones
NICE_NAMES = {"nccl": "NCCL", "vllm": "vLLM", "deepspeed": "DeepSpeed", "megatron": "Megatron-LM",
              "accelerate": "accelerate", "transformers": "transformers", "pytorch": "PyTorch",
              "libtorch": "PyTorch C++", "tensorrt-llm": "TensorRT-LLM"}

# file:line hints in the prefixes and bodies of log lines
_HINTS = [
    re.compile(r"(?P<file>[\w./-]+\.(?:cc|cu|cpp|h|hpp)):(?P<line>\d+) NCCL (?:WARN|INFO)"),
    re.compile(r"^\[[IWEF] (?:[\d-]+ [\d:.]+ )?(?:\d+ )?(?P<file>[\w.-]+\.(?:cpp|cc|h)):(?P<line>\d+)\]"),
    re.compile(r"\[(?P<file>[\w./-]+\.py):(?P<line>\d+)(?::\w+)?\]"),  # vLLM [file.py:N], DeepSpeed [file.py:N:func]
    re.compile(r"^(?P<file>/?[\w./-]+\.py):(?P<line>\d+): \w*Warning"),
]


# What may stand before a message in a log line, once launcher/time prefixes are gone: an exception
# type ("RuntimeError: "), Python's warning form ("file.py:N: UserWarning: "), NCCL's "file.cc:N NCCL WARN ",
# c10's "[W file.cpp:N] " and "[c10d] " tags, a logger name ("WARNING:name:"). A catalogued message starts
# right after these; a match in the middle of some other sentence is not that message.
_WRAPPERS = re.compile(
    r"""(?:[A-Za-z_][\w.]*(?:Error|Exception|Warning|Exit|Interrupt|Failure|Timeout|Abort)(?:\[[^\]]*\])?:[ ]
      | \S+?:\d+:[ ]\w*Warning:[ ]
      | [\w./-]+\.\w+:\d+[ ]NCCL[ ](?:WARN|INFO)[ ]
      | NCCL[ ](?:WARN|INFO)[ ]
      | \[[IWEF][ ][^\]]{1,200}\][ ]
      | \[c10d\][ ]
      | \[[\w.-]+\.py:\d+:\w+\][ ]
      | \[[\w.-]+\.py:\d+\][ ]
      | (?:CRITICAL|ERROR|WARNING|INFO):[\w.]*:
      | \[(?:CRITICAL|ERROR|WARNING|WARN|INFO)\][ ]
      )""", re.VERBOSE)


def message_starts(message: str) -> list[int]:
    """Where a catalogued message may begin in this text: its start, and after each wrapper."""
    starts = [0]
    pos = len(message) - len(message.lstrip())
    if pos:
        starts.append(pos)
    for _ in range(4):  # wrappers stack: "RuntimeError: [c10d] ..."
        m = _WRAPPERS.match(message, pos)
        if not m:
            break
        pos = m.end()
        starts.append(pos)
    return starts


@dataclass(frozen=True, slots=True)
class Hint:
    file: str  # a path or its tail
    line: int


@dataclass(slots=True)
class CatalogueMatch:
    entry: Entry
    line_index: int  # which of the entry's output lines matched
    facts: dict[str, str]
    specificity: int  # literal characters matched
    hint: Hint | None = None
    releases: set[int] = field(default_factory=set)  # narrowed by hints and the whole log

    def sites_in(self, releases: set[int]) -> list[Site]:
        return [s for s in self.entry.sites if any(s.first <= r <= s.last for r in releases)]


def hints_in(text: str) -> list[Hint]:
    out = []
    for pattern in _HINTS:
        m = pattern.search(text)
        line = parse_int(m.group("line")) if m else None
        if line is not None:
            out.append(Hint(m.group("file"), line))
    return out


def match_line(message: str, catalogue: Catalogue, hints: list[Hint] | None = None) -> list[CatalogueMatch]:
    """The most specific entries this message is an instance of (none when it is no catalogued message)."""
    if not catalogue.available or not message.strip():
        return []
    words = set(TOKEN.findall(message[:4096]))
    starts = message_starts(message)
    found: list[CatalogueMatch] = []
    for entry in catalogue.candidates(words)[:MAX_CANDIDATES]:
        anchors = entry.anchors
        for n, pattern in enumerate(entry.lines):
            if pattern is None or (n < len(anchors) and anchors[n] not in message):
                continue
            matcher = entry.matchers[n]
            m = _anchored(matcher, message, starts, floating=entry.floating(n))
            if m is None:
                continue
            specificity = (m.end() - m.start()) - sum(len(v) for v in m.groups() if v)
            if specificity < MIN_LITERAL_CHARS:
                continue  # a line of a message that is mostly values (" {x}.") says nothing on its own
            facts = {k: v.strip()[:200] for k, v in m.groupdict().items() if v and v.strip()}
            found.append(CatalogueMatch(entry, n, facts, specificity))
            break
    if not found:
        return []
    best = max(f.specificity for f in found)
    kept = [f for f in found if f.specificity == best]
    for match in kept:
        match.releases = match.entry.release_indices()
        for hint in hints or ():
            narrowed = _narrow_by_hint(match.entry, hint)
            if narrowed:
                match.hint, match.releases = hint, narrowed
                break
    return kept


def _anchored(matcher, message: str, starts: list[int], floating: bool):
    """The matcher at a place a message can start (anywhere, for a format that begins with a value)."""
    try:
        if floating:
            return matcher.search(message, timeout=MATCH_TIMEOUT_S)
        for start in starts:
            m = matcher.match(message, start, timeout=MATCH_TIMEOUT_S)
            if m is not None:
                return m
    except TimeoutError:
        return None
    return None


def _narrow_by_hint(entry: Entry, hint: Hint) -> set[int]:
    out: set[int] = set()
    for site in entry.sites:
        if same_file(hint.file, site.path) and site.line <= hint.line <= max(site.end_line, site.line):
            out.update(range(site.first, site.last + 1))
    return out


def same_file(seen: str, site_path: str) -> bool:
    """A path a log shows is a site's repository path: the tail a prefix prints (``misc/shmutils.cc``,
    ``core.py``), or an installed copy (``.../site-packages/vllm/x.py``; the ``src/`` of transformers and
    accelerate is not installed)."""
    seen = seen.replace("\\", "/").lstrip("./")
    site = site_path.removeprefix("src/")
    return bool(seen) and (seen == site or site.endswith("/" + seen) or seen.endswith("/" + site)
                           or site_path.endswith("/" + seen))


def narrow_releases(matches: list[list[CatalogueMatch]]) -> dict[str, set[int]]:
    """Per project, the releases that hold every catalogued line of the log (each line counts once,
    with the releases of any of its equally good matches). A line that contradicts the others is left
    out rather than emptying the answer."""
    by_project: dict[str, set[int] | None] = {}
    for alternatives in matches:
        per_line: dict[str, set[int]] = {}
        for m in alternatives:
            per_line.setdefault(m.entry.project, set()).update(m.releases)
        for project, releases in per_line.items():
            current = by_project.get(project)
            if current is None:
                by_project[project] = set(releases)
            elif current & releases:
                by_project[project] = current & releases
    return {p: r for p, r in by_project.items() if r}


def describe_releases(catalogue: Catalogue, project: str, releases: set[int]) -> str:
    """``vLLM 0.5.4–0.10.1``: runs of releases consecutive in version order (at most three runs).
    A run that reaches the oldest release catalogued says the log may be older still; for a project
    whose releases are a sample of upstream's (PyTorch's C++ side), which ones were read is said
    instead: its runs skip releases nobody read."""
    names = [r.name for r in catalogue.releases(project)]
    order = sorted(range(len(names)), key=lambda i: version_key(names[i]))
    runs: list[list[int]] = []
    previous_in = False
    for i in order:
        inside = i in releases
        if inside and previous_in:
            runs[-1][1] = i
        elif inside:
            runs.append([i, i])
        previous_in = inside
    nice = NICE_NAMES.get(project, project)
    if not runs:
        return nice
    parts = [names[a] if a == b else f"{names[a]}–{names[b]}" for a, b in runs[:3]]
    more = f" and {len(runs) - 3} more ranges" if len(runs) > 3 else ""
    if catalogue.projects.get(project, {}).get("sampled"):
        read = [names[i] for i in order]
        if len(read) == 1:
            listed = f"{read[0]} is"
        elif len(read) <= 4:
            listed = ", ".join(read[:-1]) + f" and {read[-1]} are"
        else:
            listed = f"{len(read)} releases from {read[0]} to {read[-1]} are"
        return f"{nice} {', '.join(parts)}{more} (of {nice}, only {listed} catalogued)"
    older = f" (or older: the catalogue starts at {nice} {names[order[0]]})" if runs[0][0] == order[0] else ""
    return f"{nice} {', '.join(parts)}{more}{older}"


def version_key(name: str) -> tuple[int, ...]:
    """A release name's numbers, for ordering by version (``2.18.6-1`` after ``2.18.5-1``)."""
    return tuple(int(n) for n in re.findall(r"\d+", name)[:6])
