"""Which catalogue entries a log line is, and which releases the log can come from.

A line is cut into words; the words that index entries pick the candidates; each candidate's line
matchers are tried, without a time limit (the same line finds the same entries on a busy machine):
the work is bounded by counts and lengths instead (see MAX_MESSAGE). Every entry that matches is kept (a message whose later
release turned a literal into a value matches both entries, and the log may come from either),
ranked by what the log itself says: a file:line hint that lands on one of the entry's sites, the
exception type, a release the log states, then the literal text matched.

Releases are narrowed by every catalogued line together (a log printed all of them, so its
release has them all) and by file:line hints that log prefixes carry (NCCL's
``misc/shmutils.cc:129``, c10's ``[W socket.cpp:426]`` and ``(Triggered internally at FILE:LINE.)``,
vLLM's ``[file.py:N]``, a traceback's innermost frame, c10's ``Exception raised from F at FILE:LINE``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mltriage.catalogue.formats import MIN_LITERAL_CHARS, TOKEN
from mltriage.catalogue.store import Catalogue, Entry, Site
from mltriage.lazy_pattern import lazy
from mltriage.numbers import parse_int

MAX_MESSAGE = 4096  # characters of a line matched (a message is shorter; a longer line is a dump)
# A quarter of the matchers put a value (`.*?`) beside a run of whitespace (`\s+`): quadratic on a long
# run of spaces (48 ms on 4 KiB). Formats are flexible only in whitespace, so a run of it is matched as
# one space: linear, whatever the line.
_SPACE_RUN = lazy(re.compile, r"\s{2,}")
# A line that names hundreds of indexed words is not a message: at most this many matchers are tried on
# it, of candidates that hold the matcher's longest literal (a substring test, at most MAX_ANCHOR_TESTS).
# Counts, not time: the same line finds the same entries on a busy machine.
MAX_CANDIDATES = 200
MAX_ANCHOR_TESTS = 20_000
NICE_NAMES = {"nccl": "NCCL", "vllm": "vLLM", "deepspeed": "DeepSpeed", "megatron": "Megatron-LM",
              "accelerate": "accelerate", "transformers": "transformers", "pytorch": "PyTorch",
              "libtorch": "PyTorch C++", "tensorrt-llm": "TensorRT-LLM"}

# file:line hints in the prefixes and bodies of log lines
_HINTS = [
    re.compile(r"(?P<file>[\w./-]+\.(?:cc|cu|cpp|h|hpp)):(?P<line>\d+)(?: \([\w:~<>]+\))? NCCL (?:WARN|INFO)"),  # v2.30.7: "(func)"
    re.compile(r"^\[[IWEF] (?:[\d-]+ [\d:.]+ )?(?:\d+ )?(?P<file>[\w.-]+\.(?:cpp|cc|h)):(?P<line>\d+)\]"),
    re.compile(r"\[(?P<file>[\w./-]+\.py):(?P<line>\d+)(?::\w+)?\]"),  # vLLM [file.py:N], DeepSpeed [file.py:N:func]
    re.compile(r"^(?P<file>/?[\w./-]+\.py):(?P<line>\d+): \w*Warning"),
    # c10's TORCH_WARN as Python shows it: "{} (Triggered internally at {}:{}.)" (torch 2.13.0 libtorch_python)
    re.compile(r"\(Triggered internally at (?P<file>[\w./-]+\.(?:cpp|cc|cu|h|hpp)):(?P<line>\d+)\.\)"),
]
# c10::Error's what() with its C++ stack (TORCH_SHOW_CPP_STACKTRACES=1, c10d's watchdog errors): the line after
# the message, "Exception raised from " + SourceLocation ("{function} at {file}:{line}") + " (most recent call first):"
_RAISED_FROM = lazy(re.compile, r"^\s*Exception raised from \S+ at (?P<file>[\w./-]+\.(?:cpp|cc|cu|h|hpp)):(?P<line>\d+)"
                          r" \(most recent call first\):")
RAISED_FROM_GAP = 8  # lines from a message's first line to the "Exception raised from" line (a message has a few)


# What may stand before a message in a log line, once launcher/time prefixes are gone: an exception
# type ("RuntimeError: "), Python's warning form ("file.py:N: UserWarning: "), NCCL's "file.cc:N NCCL WARN ",
# c10's "[W file.cpp:N] " and "[c10d] " tags, a logger name ("WARNING:name:"). A catalogued message starts
# right after these; a match in the middle of some other sentence is not that message.
_WRAPPERS = lazy(re.compile,
    r"""(?:[A-Za-z_][\w.]*(?:Error|Exception|Warning|Exit|Interrupt|Failure|Timeout|Abort|Unsupported|Failed)(?:\[[^\]]*\])?:[ ]
      | \S+?:\d+:[ ]\w*Warning:[ ]
      | [\w./-]+\.\w+:\d+(?:[ ]\([\w:~<>]+\))?[ ]NCCL[ ](?:WARN|INFO)[ ]
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
    complete: bool = False  # the match reaches the end of the line
    # (hint lands on a site, exception type agrees, a stated release agrees, complete, literal characters,
    # newest release): what the log says for this entry, compared in this order
    rank: tuple = ()

    exception: str | None = None  # the exception type the line names

    def sites_in(self, releases: set[int]) -> list[Site]:
        return [s for s in self.entry.sites if any(s.first <= r <= s.last for r in releases)]

    def site(self, releases: set[int] | None = None) -> Site:
        """The site this line most likely comes from: in ``releases`` (default: the match's), the one
        its hint lands on, of the exception type it names, the newest; of sites alike in all that, the
        one highest in the source tree (ATen's ``native/LinearAlgebra.cpp`` raises a check that its
        sparse and CUDA variants in subfolders repeat)."""
        sites = self.sites_in(self.releases if releases is None else releases) or self.entry.sites
        if self.hint is not None:
            sites = [s for s in sites if _lands(self.hint, s)] or sites
        if self.exception is not None:
            sites = [s for s in sites if (s.kind or self.entry.kind) == self.exception] or sites
        return max(sites, key=lambda s: (s.last, s.first, -s.path.count("/"), s.path, s.line))


# "NCCL INFO NCCL version 2.28.9+cuda13.0", c10d's "..., NCCL version 2.12.10", vLLM's start-up banner,
# DeepSpeed's "DeepSpeed info: version=0.19.8": the log saying which release it is
STATED = {
    "nccl": re.compile(r"\bNCCL version (\d+\.\d+\.\d+)"),
    "vllm": re.compile(r"\bvLLM (?:API server )?version (\d+\.\d+\.\d+(?:\.post\d+|\.\d+)?)\b"
                       r"|LLM engine \(v(\d+\.\d+\.\d+(?:\.post\d+|\.\d+)?)\)"),
    "deepspeed": re.compile(r"DeepSpeed info: version=(\d+\.\d+\.\d+)"),
}


def stated_releases(texts, catalogue: Catalogue) -> dict[str, set[int]]:
    """Per project, the releases the text names itself (one version per project; two different ones name none)."""
    stated: dict[str, set[str]] = {}
    for text in texts:
        for project, pattern in STATED.items():
            m = pattern.search(text)
            if m:
                stated.setdefault(project, set()).add(next(g for g in m.groups() if g))
    out = {}
    for project, versions in stated.items():
        if len(versions) != 1:
            continue
        match = release_indices(catalogue, project, versions.pop())
        if match:
            out[project] = match
    return out


# an installed package (by its PEP 503 name, '-' as '_': run_model.package_key) -> the projects whose releases it is
PACKAGES = {"torch": ("pytorch", "libtorch"), "vllm": ("vllm",), "transformers": ("transformers",),
            "deepspeed": ("deepspeed",), "accelerate": ("accelerate",), "megatron_core": ("megatron",),
            "nvidia_nccl_cu11": ("nccl",), "nvidia_nccl_cu12": ("nccl",), "nvidia_nccl_cu13": ("nccl",)}


def installed_releases(packages: dict[str, str], catalogue: Catalogue) -> dict[str, set[int]]:
    """Per project, the release of the installed version the log lists (pip freeze, collect_env's
    ``[pip3] torch==2.5.1``, pip's install lines): ``packages`` is package key -> version. NCCL's
    wheel ``nvidia-nccl-cu12 2.21.5`` is release 2.21.5-1."""
    out: dict[str, set[int]] = {}
    for package, version in packages.items():
        for project in PACKAGES.get(package, ()):
            match = release_indices(catalogue, project, version)
            if match:
                out[project] = match
    return out


_LOCAL = lazy(re.compile, r"\+.*$|\.post\d+$")  # torch's "+cu121", a wheel's ".post1" rebuild


def release_indices(catalogue: Catalogue, project: str, version: str) -> set[int]:
    """The releases of ``project`` a stated version is: its own name, NCCL's ``-1`` packaging suffix,
    the version without a local build tag (``2.5.1+cu121``) or a wheel rebuild's ``.postN``."""
    names = [r.name for r in catalogue.releases(project)]
    for candidate in dict.fromkeys((version, _LOCAL.sub("", version))):
        match = {i for i, name in enumerate(names) if name == candidate or name.startswith(candidate + "-")}
        if match:
            return match
    return set()


_FRAME = lazy(re.compile, r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)')


def frame_hint(lines: list[str], before: int) -> Hint | None:
    """The innermost traceback frame above line ``before``: the file and line that raised what follows."""
    for text in reversed(lines[max(0, before - 64):before]):
        m = _FRAME.match(text)
        if m:
            line = parse_int(m.group("line"))
            return Hint(m.group("file"), line) if line is not None else None
    return None


def raised_from_hint(lines: list[str], at: int) -> Hint | None:
    """The C++ site c10 names under an exception's message at line ``at`` (its "Exception raised from ...
    at file:line" line, a few lines below; none once a traceback starts)."""
    for text in lines[at + 1:at + 1 + RAISED_FROM_GAP]:
        if text.startswith("Traceback"):
            return None
        m = _RAISED_FROM.match(text)
        if m:
            line = parse_int(m.group("line"))
            return Hint(m.group("file"), line) if line is not None else None
    return None


# (Dynamo's torch._dynamo.exc.Unsupported and BackendCompilerFailed are exceptions too)
_EXCEPTION = lazy(re.compile, r"\s*(?:[\w.]+\.)?(?P<kind>[A-Za-z_]\w*(?:Error|Exception|Warning|Exit|Interrupt|Failure|Timeout|Abort"
                        r"|Unsupported|Failed))"
                        r"(?:\[[^\]]*\])?: ")


def exception_type(message: str) -> str | None:
    """``RuntimeError`` of ``torch.RuntimeError: ...``: the type a message line is raised as."""
    m = _EXCEPTION.match(message)
    return m.group("kind") if m else None


def hints_in(text: str) -> list[Hint]:
    out = []
    for pattern in _HINTS:
        m = pattern.search(text)
        line = parse_int(m.group("line")) if m else None
        if line is not None:
            out.append(Hint(m.group("file"), line))
    return out


def match_line(message: str, catalogue: Catalogue, hints: list[Hint] | None = None, kind: str | None = None,
               stated: dict[str, set[int]] | None = None) -> list[CatalogueMatch]:
    """Every entry this message is an instance of, best first (none when it is no catalogued message).
    ``kind``: the exception type the log names; ``stated``: per project, the releases the log says it runs."""
    if not catalogue.available or not message.strip():
        return []
    message = _SPACE_RUN.sub(" ", message[:MAX_MESSAGE])
    words = set(TOKEN.findall(message))
    starts = message_starts(message)
    end = len(message.rstrip())
    found: list[CatalogueMatch] = []
    tried = 0
    for entry in catalogue.candidates(words)[:MAX_ANCHOR_TESTS]:
        runs = entry.literal_runs
        if tried >= MAX_CANDIDATES:
            break
        for n, pattern in enumerate(entry.lines):
            if pattern is None or (n < len(runs) and not all(run in message for run in runs[n])):
                continue  # an output of this line holds every literal run of it verbatim
            tried += 1
            matcher = entry.matchers[n]
            m = _anchored(matcher, message, starts, floating=entry.floating(n))
            if m is None:
                continue
            specificity = (m.end() - m.start()) - sum(len(v) for v in m.groups() if v)
            if specificity < MIN_LITERAL_CHARS:
                continue  # a line of a message that is mostly values (" {x}.") says nothing on its own
            facts = {k: v.strip()[:200] for k, v in m.groupdict().items() if v and v.strip()}
            found.append(CatalogueMatch(entry, n, facts, specificity, complete=m.end() >= end))
            break
    if not found:
        return []
    for match in found:
        match.releases = match.entry.release_indices()
        for hint in hints or ():
            narrowed = _narrow_by_hint(match.entry, hint)
            if narrowed:
                match.hint, match.releases = hint, narrowed
                break
    exception = kind.rpartition(".")[2] if kind else exception_type(message)
    for match in found:
        match.exception = exception
        said = match.releases & (stated or {}).get(match.entry.project, set())
        if said:  # the log names its release: this line is that release's site
            match.releases = said
        match.rank = (match.hint is not None,
                      exception is not None and exception in match.entry.kinds,
                      bool(said),
                      match.complete, match.specificity, max(match.releases, default=-1))
    found.sort(key=lambda m: (tuple(-int(r) for r in m.rank), m.entry.id))
    return found


def consistent(matches: list[CatalogueMatch]) -> list[CatalogueMatch]:
    """The matches a line's releases come from: those its file:line hint lands on, where it lands on
    any; else those that account for the whole line (an older, shorter form of the message matches
    the start of a newer one's output, but never printed the rest)."""
    hinted = [m for m in matches if m.hint is not None]
    return hinted or [m for m in matches if m.complete] or matches


def _anchored(matcher, message: str, starts: list[int], floating: bool):
    """The matcher at a place a message can start (anywhere, for a format that begins with a value)."""
    if matcher is None:
        return None
    if floating:
        return matcher.search(message)
    for start in starts:
        m = matcher.match(message, start)
        if m is not None:
            return m
    return None


def _narrow_by_hint(entry: Entry, hint: Hint) -> set[int]:
    out: set[int] = set()
    for site in entry.sites:
        if _lands(hint, site):
            out.update(range(site.first, site.last + 1))
    return out


def _lands(hint: Hint, site: Site) -> bool:
    """A hint names this site: its file, and a line of the call's span (compilers and loggers report either end)."""
    return same_file(hint.file, site.path) and site.line <= hint.line <= max(site.end_line, site.line)


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
    with the releases of any entry it may be: see ``consistent``). A line that contradicts the others
    is left out rather than emptying the answer."""
    by_project: dict[str, set[int] | None] = {}
    for line_matches in matches:
        alternatives = consistent(line_matches)
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
    """``vLLM 0.5.4–0.10.1``: runs of releases consecutive in the project's release order (by date:
    ``generate.sources.release_order``; at most three runs). A run that reaches the oldest release
    catalogued says the log may be older still; for a project whose releases are a sample of
    upstream's (PyTorch's C++ side), which ones were read is said instead: its runs skip releases
    nobody read."""
    names = [r.name for r in catalogue.releases(project)]
    order = range(len(names))
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

