"""Python tracebacks in a log: their markers, one error report's facts, and the per-stream tracker.

A traceback is read as one error report, so a finding inside it can cite the whole of it and name
its exception, its innermost frame in the user's code and the library it was raised in.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from mltriage.engine import linear_regex

from mltriage.masking import clip

StreamKey = tuple[str, int | None]  # (source name, rank): the lines of one process

TRACEBACK_HEADER = "Traceback (most recent call last)"
# DataLoader re-raises a worker's exception in the main process and appends the worker's own
# traceback under this header: one error report, whose innermost part is the real cause.
ORIGINAL_TRACEBACK = "Original Traceback (most recent call last)"
# Python prints an exception raised in __del__ or a callback it cannot propagate under this line:
# the program went on, so such a traceback is a warning, never the failure.
IGNORED_MARKER = "Exception ignored in"
# A traceback pasted without its header still starts with a frame line.
FRAME_MARKER = 'File "'
GENERIC_TRACEBACK_RULE = "python-unhandled-exception"
# PyTorch's NCCL errors continue the exception message on the next lines: the NCCL result's name
# and meaning, then "Last error:" and NCCL's own detail. They belong to the same error report.
LAST_ERROR_MARKER = "Last error:"
_MESSAGE_CONTINUATION = linear_regex.compile(r"^(?:nccl[A-Z]\w*(?:Error|Usage)\b|Last error:)")
CHAIN_MARKERS = (
    "The above exception was the direct cause of the following exception",
    "During handling of the above exception, another exception occurred",
)
MAX_TRACEBACK_LINES = 20_000  # a "traceback" that never closes was not one

MAX_FRAME_LINE = 4096  # a frame line is a path, a line number and a function: longer is no frame
_COLLECTIVE_FRAME = linear_regex.compile(
    r'torch/distributed/[^"]{0,1000}", line \d{1,9}, in (all_reduce|barrier|monitored_barrier|broadcast|all_gather|'
    r"all_gather_into_tensor|all_gather_object|reduce_scatter|reduce_scatter_tensor|all_to_all|all_to_all_single|"
    r"reduce|gather|scatter|send|recv|isend|irecv|broadcast_object_list|batch_isend_irecv)\b"
)
FRAME_LINE = linear_regex.compile(r'File "(?P<path>[^"]{1,1000})", line (?P<line>\d{1,9}), in (?P<function>\S{1,200})')
# Frames in these places are libraries and the interpreter, not the user's program.
_PACKAGE_PATH = linear_regex.compile(r"(?:site-packages|dist-packages)/(?P<package>[A-Za-z0-9_\-]+)")
_INTERPRETER_PATH = linear_regex.compile(r"/lib/python\d\.\d+/|^<frozen |^<string>")
_EXCEPTION_LINE = linear_regex.compile(r"^(?P<type>[A-Za-z_][\w.]{0,200}?)(?::[ ]?(?P<message>.*))?$")



@dataclass(slots=True)
class TracebackBlock:
    stream: StreamKey
    start: int
    end: int
    header_text: str
    tail: deque = field(default_factory=lambda: deque(maxlen=6))
    exception_type: str | None = None
    exception_message: str | None = None
    collective: str | None = None  # the torch.distributed call the stack was in, if any
    closed: bool = False
    chain_pending: bool = False
    ignored: bool = False  # "Exception ignored in ...": Python printed it and went on
    headerless: bool = False  # began with a frame line: the paste lost its "Traceback" header
    frames: int = 0
    # The last frame line and the last one in the user's code, as printed: parsed only when a
    # finding reads them (a 5,000-line stack costs two parses, not 1,700).
    _innermost_line: str | None = None
    _user_line: str | None = None

    def note_frame(self, line: str) -> None:
        if 'File "' not in line or '", line ' not in line or ", in " not in line:  # FRAME_LINE's literals
            return
        line = line[:MAX_FRAME_LINE]
        self.frames += 1
        self._innermost_line = line
        # a line without these substrings cannot have a library or interpreter path: no parse needed
        if ("-packages/" not in line and "/lib/python" not in line and 'File "<' not in line) or _user_path(line):
            self._user_line = line

    def report(self) -> tuple:
        """What a finding reads of this error report, not who printed it (frames and messages
        without their rank prefixes): two ranks' tracebacks with one report are one failure."""
        return (self.exception_type, self.exception_message, self.collective, self._innermost_line, self._user_line,
                self.ignored, self.headerless, self.frames)

    def final(self, line_no: int) -> bool:
        """Whether nothing after ``line_no`` of its source can change it: closed, and too far behind
        for a chained exception, a continuation line or a chain marker to join it (``start``,
        ``continued``, ``chain_marker``: at most 3 lines after its end)."""
        return self.closed and line_no - self.end > 3

    @property
    def innermost(self) -> tuple[str, str, str] | None:
        """(path, line, function) of the last frame."""
        return _frame(self._innermost_line)

    @property
    def user_frame(self) -> tuple[str, str, str] | None:
        """The last frame outside libraries and the interpreter."""
        return _frame(self._user_line)

    @property
    def library(self) -> str | None:
        """The package of the innermost frame, when it lies in one (and is not the user's code)."""
        frame = self.innermost
        if frame is None or self._user_line is self._innermost_line:
            return None
        package = linear_regex.search(_PACKAGE_PATH, frame[0])
        return package.group("package") if package else None


def _frame(line: str | None) -> tuple[str, str, str] | None:
    m = linear_regex.search(FRAME_LINE, line) if line is not None else None
    return (m.group("path"), m.group("line"), m.group("function")) if m else None


def _user_path(line: str) -> bool:
    frame = _frame(line)
    return frame is not None and linear_regex.search(_PACKAGE_PATH, frame[0]) is None and \
        linear_regex.search(_INTERPRETER_PATH, frame[0]) is None


class TracebackTracker:
    """The open and just-closed traceback of every stream of one source (the hits tied to a block
    keep it: the tracker does not, so a block no hit cites is not held).

    Python prints a traceback over many lines (interleaved with other ranks' lines): header, frames,
    chain markers, the exception line, and for PyTorch's NCCL errors continuation lines after it.
    The scanner tells the tracker about each line of a stream that has a block open; the tracker
    says which block a line belongs to."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.open: dict[StreamKey, TracebackBlock] = {}
        self.last_closed: dict[StreamKey, TracebackBlock] = {}
        self.ignored_at: dict[StreamKey, int] = {}  # line of the last "Exception ignored in" per stream

    def end_source(self) -> None:
        for block in self.open.values():
            block.closed = True
        self.open.clear()

    def start(self, stream: StreamKey, line_no: int, text: str, continues: bool = False) -> None:
        """A ``Traceback`` header (or DataLoader's ``Original Traceback``, which ``continues``)."""
        previous = self.last_closed.get(stream)
        if previous is not None and (previous.chain_pending or continues) and line_no - previous.end <= 3:
            previous.closed = False
            previous.chain_pending = False
            previous.end = line_no
            self.open[stream] = previous
            return
        block = TracebackBlock(stream=stream, start=line_no, end=line_no, header_text=clip(text, 2048))
        marker = self.ignored_at.get(stream)
        block.ignored = marker is not None and 0 < line_no - marker <= 2
        self.open[stream] = block

    def start_headerless(self, stream: StreamKey, line_no: int, text: str, message: str) -> None:
        """Frames with no ``Traceback`` line above them (a paste that starts mid-traceback)."""
        previous = self.last_closed.get(stream)
        if previous is not None and line_no - previous.end <= 1:
            return  # a frame line right after an exception line belongs to no new report
        self.start(stream, line_no, text)
        block = self.open[stream]
        block.headerless = True
        block.note_frame(message)

    @staticmethod
    def extend(block: TracebackBlock, line_no: int, text: str, message: str) -> None:
        """A frame or source line of an open traceback (``text`` already clipped to 2,048)."""
        block.end = line_no
        block.tail.append(text)  # (clipped by the caller)
        block.note_frame(message)
        if "torch/distributed/" in message:
            m = linear_regex.search(_COLLECTIVE_FRAME, message[:MAX_FRAME_LINE])
            if m:
                block.collective = m.group(1)

    def close(self, block: TracebackBlock, line_no: int, text: str, message: str) -> bool:
        """The exception line; True when a headerless block thereby became an error report."""
        block.end = line_no
        block.tail.append(clip(text, 2048))
        m = linear_regex.match(_EXCEPTION_LINE, message.strip())
        if m:
            block.exception_type = m.group("type")
            block.exception_message = clip((m.group("message") or "").strip(), 500)
        else:
            block.exception_message = clip(message.strip(), 500)
        block.closed = True
        del self.open[block.stream]
        self.last_closed[block.stream] = block
        return bool(block.headerless and m and block.frames)

    def give_up(self, stream: StreamKey) -> None:
        """A "traceback" that never closes was not one."""
        block = self.open.pop(stream)
        block.closed = True

    def continued(self, stream: StreamKey, message: str, line_no: int) -> TracebackBlock | None:
        """The just-closed traceback whose exception message this line continues, if any."""
        block = self.last_closed.get(stream)
        if block is None or line_no - block.end != 1:
            return None
        if linear_regex.match(_MESSAGE_CONTINUATION, message.lstrip()) or (block.tail and block.tail[-1].rstrip().endswith(LAST_ERROR_MARKER)):
            block.end = line_no
            block.tail.append(clip(message, 2048))
            return block
        return None

    def chain_marker(self, stream: StreamKey, line_no: int) -> None:
        previous = self.last_closed.get(stream)
        if previous is not None and line_no - previous.end <= 2:
            previous.chain_pending = True
            previous.end = line_no

    def ignored(self, stream: StreamKey, line_no: int) -> None:
        self.ignored_at[stream] = line_no
