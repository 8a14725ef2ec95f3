"""Find a program's invocation in shell text, and add or set one of its flags there.

One owner for "this flag on that command line": the engine writes the log's own launch command
with a fix's flags (``Fix.relaunch``), the language server edits a launch script's line. Shell is
read word by word (quotes, ``$(...)``, backslash-newline continuations) only as far as needed to
find the invocation, its flags and where the command ends; nothing is run or expanded.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass

from mltriage.lazy_pattern import lazy
from mltriage.model import LaunchFlag, shell_value


@dataclass(frozen=True)
class Program:
    spellings: tuple[str, ...]  # regexes for the words that start it
    flags_at_end: bool  # where a new flag goes: the end of the command, or right after the program


# torchrun hands every word after the training script to the script, so its flags go right after
# `torchrun`; vLLM parses options anywhere, so a flag goes at the end, where people read them.
_PYTHON_M = r"python[\d.]*(?:[ \t]+-[A-Za-z]+)*[ \t]+-m[ \t]+"
PROGRAMS: dict[str, Program] = {
    "vllm serve": Program((r"vllm[ \t]+serve", _PYTHON_M + r"vllm\.entrypoints\.openai\.api_server"), True),
    "torchrun": Program((r"torchrun", _PYTHON_M + r"torch\.distributed\.run"), False),
    # SGLang's server parses its options anywhere (argparse): a flag goes at the end
    "sglang.launch_server": Program((_PYTHON_M + r"sglang\.launch_server",), True),
    # every word after the image is the container's command: docker's own flags go right after `docker run`
    "docker run": Program((r"docker[ \t]+run", r"docker[ \t]+container[ \t]+run", r"podman[ \t]+run"), False),
}
_OPERATORS = frozenset(";&|<>\n\r")
_UNESCAPED_QUOTE = lazy(re.compile, r'(?<!\\)"')


@dataclass(frozen=True)
class Invocation:
    start: int  # offset of the program's first word
    program_end: int  # offset just after the program words
    end: int  # offset just after the command's last word (before redirections, `;`, `&`, `|`, a comment)
    words: tuple[tuple[int, int], ...]  # (start, end) of each word after the program
    flags_at_end: bool


@dataclass(frozen=True)
class Edit:
    """Replace ``text[start:end]`` with ``new_text`` (an insertion when start == end)."""

    start: int
    end: int
    new_text: str


def _program(command: str) -> Program:
    known = PROGRAMS.get(command)
    if known is not None:
        return known
    return Program((r"[ \t]+".join(map(re.escape, command.split())),), True)


def _pattern(command: str) -> re.Pattern[str]:
    spellings = "|".join(_program(command).spellings)
    # the program as a word of its own (or a path's last part): after a line start, a blank, an
    # operator, `(` or `/`; no leading `\S*/` in the pattern, which would rescan long words at every start
    return re.compile(r"(?<![^\s;&|(`/])(?:" + spellings + r")(?=[\s;&|)\\]|$)")


_MAX_PATH = 4096  # a directory in front of a program name is never longer


class _LineState:
    """Whether a position is inside a comment or a quoted string on its line, read once from left
    to right: every question is about a later position than the one before."""

    def __init__(self, text: str) -> None:
        self.text, self.pos, self.line_start = text, 0, 0
        self.single = self.double = False
        self.comment: bool | None = None  # None: the line's first word not reached yet

    def plain_at(self, at: int) -> bool:
        text = self.text
        while self.pos < at:
            c = text[self.pos]
            if c in "\n\r":
                self.line_start, self.single, self.double, self.comment = self.pos + 1, False, False, None
            elif self.comment is None and c not in " \t":
                self.comment = c == "#"
            if c == "'" and not self.double:
                self.single = not self.single
            elif c == '"' and not self.single and (self.pos == 0 or text[self.pos - 1] != "\\"):
                self.double = not self.double
            self.pos += 1
        return not (self.comment or self.single or self.double)


def _word_start(text: str, at: int) -> int | None:
    """Where the path in front of a program name begins (``/opt/venv/bin/`` of ``.../torchrun``),
    or None when that is no word of its own (``--script=/x/torchrun``, a quoted path, a huge word)."""
    start = at
    while start > 0 and text[start - 1] not in " \t\n\r;&|(`":
        start -= 1
        if at - start > _MAX_PATH or text[start] in "='\"$":
            return None
    return start


def _closing(text: str, i: int) -> int:
    """Offset just after the quoted string or ``$(...)`` that starts at ``i`` (the end of ``text``
    when it never closes)."""
    n = len(text)
    if text[i] == "'":
        j = text.find("'", i + 1)
        return n if j < 0 else j + 1
    if text[i] == '"':
        j = i + 1
        while j < n and text[j] != '"':
            j += 2 if text[j] == "\\" else 1
        return min(n, j + 1)
    depth, j = 1, i + 1  # the "(" of "$(": count parentheses, skipping quoted parts
    while j < n and depth:
        c = text[j]
        if c in "'\"":
            j = _closing(text, j)
            continue
        depth += (c == "(") - (c == ")")
        j += 1
    return j


def _words(text: str, i: int) -> list[tuple[int, int]]:
    """The words of the command from ``i`` to where it ends: an unescaped line break, an operator
    (`;`, `&`, `|`), a redirection (`>`, `2>&1`, `<`) or a comment."""
    words: list[tuple[int, int]] = []
    n = len(text)
    while i < n:
        c = text[i]
        if c in " \t":
            i += 1
            continue
        if c == "\\" and text.startswith(("\n", "\r\n"), i + 1):  # a continuation line
            i += 2 if text[i + 1] == "\n" else 3
            continue
        if c in _OPERATORS or c == "#":
            break
        start = i
        while i < n and text[i] not in " \t" and text[i] not in _OPERATORS:
            c = text[i]
            if c == "\\":
                if text.startswith(("\n", "\r\n"), i + 1):
                    break
                i += 2
            elif c in "'\"" or text.startswith("$(", i):
                i = _closing(text, i + (c == "$"))
            else:
                i += 1
        i = min(i, n)
        if text[start:i].isdigit() and i < n and text[i] in "<>":
            break  # `2>&1`: a redirection, not an argument
        words.append((start, i))
    return words


def invocations(text: str, command: str) -> list[Invocation]:
    """Every place ``text`` (a script, or one command line) runs ``command`` outside comments and
    quotes; a program name among an earlier invocation's own words is an argument, not another run."""
    program = _program(command)
    state = _LineState(text)
    found: list[Invocation] = []
    taken = 0  # the end of the last invocation's words
    for m in _pattern(command).finditer(text):
        if m.start() < taken:
            continue
        start = _word_start(text, m.start()) if m.start() and text[m.start() - 1] == "/" else m.start()
        if start is None or not state.plain_at(start):
            continue  # a comment, or inside a quoted string (`echo "vllm serve ..."`)
        words = _words(text, m.end())
        end = words[-1][1] if words else m.end()
        found.append(Invocation(start, m.end(), end, tuple(words), program.flags_at_end))
        taken = end
    return found


def _same_flag(word: str, flag: str) -> bool:
    # torchrun and vLLM take `--nproc_per_node` and `--nproc-per-node` alike
    return word.replace("_", "-") == flag.replace("_", "-")


def _unquoted(word: str) -> str:
    try:
        parts = shlex.split(word)
    except ValueError:
        return word
    return parts[0] if len(parts) == 1 else word


def flag_edit(text: str, invocation: Invocation, flag: LaunchFlag) -> Edit | None:
    """The edit that gives ``invocation`` this flag (with its value), or None when it has it already."""
    words = [text[s:e] for s, e in invocation.words]
    for k, word in enumerate(words):
        name, eq, current = word.partition("=")
        if not _same_flag(name, flag.flag):
            continue
        if flag.value is None:
            return None
        start, end = invocation.words[k]
        if eq:  # --flag=value
            return None if _unquoted(current) == flag.value else Edit(start + len(name) + 1, end, shell_value(flag.value))
        if k + 1 < len(words) and not words[k + 1].startswith("-"):  # --flag value
            value_start, value_end = invocation.words[k + 1]
            return None if _unquoted(words[k + 1]) == flag.value else Edit(value_start, value_end, shell_value(flag.value))
        return Edit(end, end, " " + shell_value(flag.value))  # the flag without its value
    at = invocation.end if invocation.flags_at_end else invocation.program_end
    return Edit(at, at, " " + flag.argument)


def flag_edits(text: str, flag: LaunchFlag) -> list[Edit]:
    """The edits giving every invocation of the flag's program in ``text`` the flag, in text order."""
    edits = (flag_edit(text, inv, flag) for inv in invocations(text, flag.command))
    return [e for e in edits if e is not None]


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        text = text[: edit.start] + edit.new_text + text[edit.end:]
    return text


def with_flags(command_line: str, flags: Iterable[LaunchFlag]) -> str | None:
    """``command_line`` with ``flags`` added where it runs their program; None when nothing changes
    (another program, or the flags are there already)."""
    text = command_line
    for flag in flags:
        text = apply_edits(text, flag_edits(text, flag))
    return text if text != command_line else None
