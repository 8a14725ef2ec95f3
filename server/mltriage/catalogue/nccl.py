"""What NCCL's own log lines say about an error: its result codes, and the chain of ``-> N`` lines
that follows a ``WARN`` up the call stack.

Every NCCL call site that checks a result (``NCCLCHECK``, ``NCCLCHECKGOTO``, ``SYSCHECK``, the async
``NCCLCHECKTHREAD``... of ``src/include/checks.h``) logs at INFO where a non-success result passes
through it, and returns it on. So a ``WARN`` followed by ``file:line -> N`` lines is where an NCCL
call failed: the WARN's site returned code N and every line above it passed N on. The forms, as
the format strings of checks.h write them (path of the macros: ``src/include/core.h`` in v2.3.x,
``src/include/checks.h`` from v2.4.2):

- ``"%s:%d -> %d"`` (``__FILE__, __LINE__, res``): v2.3.5-5 – v2.30.4-1
- ``"%s:%d -> %d [Async thread]"``: v2.12.7-1 – v2.30.4-1
- ``"%s:%d -> %d (%s)"`` (``strerror(errno)``): v2.18.3-1 – v2.30.4-1
- v2.30.7-1 writes them through ``INFO_LOC`` (``src/include/debug.h``: ``"%s:%d (%s) " fmt`` with
  ``__FILE__, __LINE__, __func__``): ``"-> %d"``, ``"-> %d (%s)"``, ``"-> %d [Async thread]"``

each after the INFO prefix of ``src/debug.cc`` (``"%s:%d:%d [%d] NCCL INFO "``: host, pid, tid,
CUDA device; v2.29.2-1 on ``"[%d] NCCL INFO %s\\n"`` after ``"%s:%d:%d "``, the same text).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum

from mltriage.lazy_pattern import lazy


class NcclResult(IntEnum):
    """``ncclResult_t`` (``src/nccl.h.in``): 0-5 since v2.3.5-5, 6 since v2.13.4-1, 7 since
    v2.14.3-1, 8 since v2.30.3-1."""

    ncclSuccess = 0
    ncclUnhandledCudaError = 1
    ncclSystemError = 2
    ncclInternalError = 3
    ncclInvalidArgument = 4
    ncclInvalidUsage = 5
    ncclRemoteError = 6
    ncclInProgress = 7
    ncclTimeout = 8


# ncclGetErrorString (v2.30.7-1 src/init.cc), without its "(run with NCCL_DEBUG=... for details)" tails
MEANING = {
    NcclResult.ncclUnhandledCudaError: "unhandled cuda error: a CUDA call NCCL made failed",
    NcclResult.ncclSystemError: "unhandled system error: a system call (socket, shared memory, file, thread) failed",
    NcclResult.ncclInternalError: "internal error: NCCL reached a state it does not expect "
                                  "(\"please report this issue to the NCCL developers\")",
    NcclResult.ncclInvalidArgument: "invalid argument: a value passed to NCCL is wrong",
    NcclResult.ncclInvalidUsage: "invalid usage: NCCL was called in a way it does not allow",
    NcclResult.ncclRemoteError: "remote process exited or there was a network error",
    NcclResult.ncclInProgress: "NCCL operation in progress",
    NcclResult.ncclTimeout: "timeout",
}


def result_name(code: int) -> str:
    try:
        return NcclResult(code).name
    except ValueError:
        return f"result {code}"


def describe_result(code: int) -> str:
    """``ncclInternalError (3: internal error: ...)``."""
    try:
        result = NcclResult(code)
    except ValueError:
        return f"NCCL result {code} (a code this catalogue's NCCL releases do not define)"
    return f"{result.name} ({code}: {MEANING.get(result, 'success')})"


# The part of a message after NCCL's INFO prefix: "init.cc:1357 -> 2", "misc/socket.cc:565 -> 2 (Connection
# refused)", "init.cc:1234 -> 3 [Async thread]", v2.30.7's "init.cc:1357 (ncclCommInitRankFunc) -> 2"
_CHAIN = lazy(re.compile, r"NCCL INFO (?P<file>[\w./+-]+\.(?:cc|cu|h|cuh|hpp|cpp)):(?P<line>\d{1,7})"
                    r"(?: \((?P<function>[\w:~<>]+)\))? -> (?P<code>\d{1,3})"
                    r"(?P<tail> \[Async thread\]| \((?P<errno>[^()\n]{0,200})\))?\s*$")
# "host:pid:tid [dev] " before NCCL's level: which thread logged the line (a WARN's chain is its thread's)
_THREAD = lazy(re.compile, r"(?P<host>[^\s:\[\]]+):(?P<pid>\d+):(?P<tid>\d+) \[\d+\] $")
# a WARN's own site, as its prefix prints it: "bootstrap.cc:572 NCCL WARN ", v2.30.7's "... (bootstrapClose) NCCL WARN "
WARN_SITE = lazy(re.compile, r"(?P<file>[\w./+-]+\.(?:cc|cu|h|cuh|hpp|cpp)):(?P<line>\d{1,7})(?: \((?P<function>[\w:~<>]+)\))? "
                       r"NCCL WARN (?P<message>.*)$", re.DOTALL)
# literals every chain line holds (its file's suffix before ':'): what the scanner lands on
CHAIN_MARKERS = (".cc:", ".cu:", ".h:")


@dataclass(frozen=True, slots=True)
class ChainStep:
    """One ``file:line -> N`` line: a call site that passed result N on."""

    file: str
    line: int
    function: str | None
    code: int
    errno: str | None  # the strerror text of the "(%s)" form
    async_thread: bool


def chain_step(message: str) -> ChainStep | None:
    """The chain step a message is (the message as prefixes leave it: ``NCCL INFO init.cc:1357 -> 2``)."""
    m = _CHAIN.match(message.lstrip())
    if m is None:
        return None
    return ChainStep(m["file"], int(m["line"]), m["function"], int(m["code"]), m["errno"], m["tail"] == " [Async thread]")


def thread_of(prefix: str) -> tuple[str, int, int] | None:
    """(host, pid, tid) from the text before NCCL's level (``node1:2045:2107 [0] ``)."""
    m = _THREAD.search(prefix[-200:])
    return (m["host"], int(m["pid"]), int(m["tid"])) if m else None
