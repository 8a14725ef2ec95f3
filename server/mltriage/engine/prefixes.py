"""Peel launcher prefixes and timestamps off a log line.

Multi-rank logs arrive decorated: torchrun's ``[default3]:`` and ``[rank3]:``, DeepSpeed's
``[Rank 3]``, ``srun -l``'s ``3:``, Open MPI's ``[1,3]<stderr>:``, NCCL's ``host:pid:tid [dev]``,
Ray/vLLM worker tags ``(VllmWorker rank=1 pid=123)``, the container's name that ``docker compose``
and ``kubectl logs --prefix`` put before each line, journald's and syslog's ``Mon DD HH:MM:SS host ident[pid]:``, and timestamps in half a dozen formats.
Signatures match the bare message; the prefixes tell us which rank, host and time it came from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime
from functools import lru_cache

from mltriage.lazy_pattern import lazy
from mltriage.numbers import parse_float, parse_int

_MONTHS = {m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1)}


@dataclass(frozen=True, slots=True)
class LineContext:
    message: str
    offset: int  # where the message starts in the cleaned line
    rank: int | None = None
    local_rank: int | None = None
    host: str | None = None
    pid: int | None = None
    device: int | None = None
    timestamp: float | None = None  # seconds since the epoch (naive times read as UTC)
    clock: str | None = None  # "wall" for full dates, "time" for time-of-day only, "uptime" for dmesg
    level: str | None = None  # the logging level a prefix names (vLLM, "[WARNING]"), lower-case


# One alternative per prefix kind; tried repeatedly at the start of the line since they stack
# (``2026-11-30 09:00:01 [default0]:[rank0]: ...``). Anchored, and every repetition is bounded, so
# a match costs the same on a 16 KiB adversarial line as on a real one (hence ``re``, no timeout).
_PREFIX = lazy(re.compile,
    r"""
    (?:
        \[(?:rank|Rank|RANK)\s?(?P<rank_a>\d{1,6})\]:?             # [rank3]: (PyTorch) / [Rank 3] (DeepSpeed)
      | \[(?P<role>[A-Za-z_][\w-]{0,30}?)(?P<role_rank>\d{1,6})\]:  # [default3]: (torchrun --tee)
      | \[(?P<mpi_job>\d{1,6}),(?P<mpi_rank>\d{1,6})\]<std(?:out|err)>:  # Open MPI --tag-output
      | (?P<srun_rank>\d{1,6}):[ \t]                              # srun -l
      | \((?P<ray_tag>[A-Za-z_][\w.-]{0,40}(?:[ ][A-Za-z_][\w.-]{0,20}){0,2})?[ ,]{0,8}(?P<ray_kv>(?:(?:rank|pid|ip|node)=[\w.:-]{1,64}[ ,]{0,8}){1,4})\)   # Ray/vLLM worker tag
      | (?P<nccl_host>[A-Za-z0-9][\w.-]{0,62}):(?P<nccl_pid>\d{1,8}):(?P<nccl_tid>\d{1,8})[ \t]\[(?P<nccl_dev>\d{1,3})\][ \t]  # NCCL
      | (?P<iso>\[?(?P<date>\d{4}-\d{2}-\d{2})[T ](?P<time>\d{2}:\d{2}:\d{2})(?P<frac>[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?\]?)  # ISO
      | (?P<glog>[IWEF](?P<glog_md>\d{4})[ ](?P<glog_time>\d{2}:\d{2}:\d{2})(?P<glog_frac>\.\d{1,6})?[ ]{1,8}(?P<glog_pid>\d{1,12})[ ][^\]\s]{1,200}\])  # glog/c10
      | (?P<vllm>(?P<vllm_level>INFO|WARNING|ERROR|DEBUG|CRITICAL)[ ](?P<vllm_md>\d{2}-\d{2})[ ](?P<vllm_time>\d{2}:\d{2}:\d{2})(?:\.\d{1,9})?[ ](?:\[[^\]]{1,120}\]|[\w.-]{1,120}:\d{1,6}\]))  # vLLM (<= 0.5: "file.py:N]")
      | (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[ ]{1,2}\d{1,2}[ ]\d{2}:\d{2}:\d{2}[ ][A-Za-z0-9][\w.-]{0,62}[ ][\w.@/-]{1,64}(?:\[\d{1,10}\])?:  # journalctl / syslog: peeled only (its time and host are the journal's; the program's own prefixes after it say when and where)
      | \[(?P<dmesg_ctime>(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[ ](?P<dm_mon>[A-Z][a-z]{2})[ ]{1,2}(?P<dm_day>\d{1,2})[ ](?P<dm_time>\d{2}:\d{2}:\d{2})[ ](?P<dm_year>\d{4}))\]  # dmesg -T
      | \[[ ]{0,12}(?P<uptime>\d{1,10}\.\d{6})\]                     # dmesg
      | (?P<level>\[(?P<level_word>INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL)\])  # [INFO] after a timestamp
      | [A-Za-z0-9][\w.-]{0,62}[ ]{2,64}\|(?=[ ]|$)               # docker compose: fmt.Sprintf("%-"+width+"s | ", name), width > len(name)
      | \[(?:pod/[\w.-]{1,253}/[\w.-]{0,63}|node/[\w.-]{1,253})\]  # kubectl logs --prefix: "[pod/%s/%s] ", "[node/%s] "
    )
    [ ]?                                                          # one separator space; indentation after it is content
    """,
    re.VERBOSE,
)
_KV = lazy(re.compile, r"(rank|pid|ip|node)=([\w.:-]+)")
_TP_RANK = lazy(re.compile, r"(?:^|[_ ])TP(\d+)\b")  # vLLM: (Worker_TP1 pid=..), (VllmWorker TP1 pid=..)


MEMO_LINE = 512  # lines this long or shorter are parsed once (ranks repeat their lines, prefixes and all)
MAX_MEMO = 16_384  # lines remembered; past it the memo starts afresh (what it holds never changes an answer)
_memo: dict[str, LineContext] = {}


def parse_prefixes(line: str) -> LineContext:
    """What the prefixes of ``line`` say (a function of the text alone: the same line, the same value)."""
    ctx = _memo.get(line)
    if ctx is None:
        ctx = _parse(line)
        if len(line) <= MEMO_LINE:
            if len(_memo) >= MAX_MEMO:
                _memo.clear()
            _memo[line] = ctx
    return ctx


def parse_prefixes_behind(line: str, margin: str) -> LineContext:
    """The prefixes of ``line`` past a pasted block's ``margin`` (its indentation or a quote's '> '); the
    offset still counts from the line's start."""
    if margin and line.startswith(margin):
        ctx = parse_prefixes(line[len(margin):])
        return replace(ctx, offset=ctx.offset + len(margin))
    return parse_prefixes(line)


def _parse(line: str) -> LineContext:
    fields: dict[str, object] = {}
    pos = 0
    for _ in range(8):  # prefixes stack, but never this deep in real logs
        m = _PREFIX.match(line, pos)
        if not m or m.end() == pos:
            break
        _apply(fields, m)
        pos = m.end()
    return LineContext(line[pos:], pos, **fields)


def _apply(ctx: dict[str, object], m: re.Match[str]) -> None:
    g = m.group  # (by name: a dict of all 33 groups per prefix cost more than the rest of the parse)
    if g("rank_a") is not None:
        ctx["rank"] = parse_int(g("rank_a"))
    elif g("role_rank") is not None:
        # torchrun's tee prefix carries the global rank of the worker after the role name
        if ctx.get("rank") is None:
            ctx["rank"] = parse_int(g("role_rank"))
    elif g("mpi_rank") is not None:
        ctx["rank"] = parse_int(g("mpi_rank"))
    elif g("srun_rank") is not None:
        if ctx.get("rank") is None:
            ctx["rank"] = parse_int(g("srun_rank"))
    elif g("ray_kv") is not None:
        for key, value in _KV.findall(g("ray_kv")):
            number = parse_int(value)
            if key == "rank" and number is not None:
                ctx["rank"] = number
            elif key == "pid" and number is not None:
                ctx["pid"] = number
            elif key in ("ip", "node"):
                ctx["host"] = value
        tp = _TP_RANK.search(g("ray_tag") or "")
        if tp and ctx.get("rank") is None:
            ctx["rank"] = parse_int(tp.group(1))
    elif g("nccl_host") is not None:
        ctx["host"] = g("nccl_host")
        ctx["pid"] = parse_int(g("nccl_pid"))
        ctx["device"] = parse_int(g("nccl_dev"))
    elif g("iso") is not None:
        ctx["timestamp"] = _epoch(g("date"), g("time"), g("frac"))
        ctx["clock"] = "wall"
    elif g("glog") is not None:
        md = g("glog_md")
        ctx["timestamp"] = _epoch(f"1970-{md[:2]}-{md[2:]}", g("glog_time"), g("glog_frac"))
        ctx["clock"] = "time"
        ctx["pid"] = parse_int(g("glog_pid"))
    elif g("vllm") is not None:
        ctx["level"] = g("vllm_level").lower()
        md = g("vllm_md")
        ctx["timestamp"] = _epoch(f"1970-{md}", g("vllm_time"), None)
        ctx["clock"] = "time"
    elif g("dmesg_ctime") is not None:
        month = _MONTHS.get(g("dm_mon"), 1)
        ctx["timestamp"] = _epoch(f"{g('dm_year')}-{month:02d}-{parse_int(g('dm_day')):02d}", g("dm_time"), None)
        ctx["clock"] = "wall"
    elif g("level") is not None:
        word = g("level_word").lower()
        ctx["level"] = "warning" if word.startswith("warn") else word
    elif g("uptime") is not None:
        ctx["timestamp"] = parse_float(g("uptime"))
        ctx["clock"] = "uptime"


def _epoch(date: str, time: str, frac: str | None) -> float | None:
    value = _whole_seconds(date, time)
    if value is None:
        return None
    if frac:
        value += parse_float("0." + frac[1:]) or 0.0
    return value


@lru_cache(maxsize=4096)
def _whole_seconds(date: str, time: str) -> float | None:
    """(Cached: a log prints many lines within one second, and each parse cost a datetime.)"""
    try:
        return datetime.fromisoformat(f"{date}T{time}+00:00").timestamp()
    except ValueError:
        return None
