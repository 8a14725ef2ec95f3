"""Message sites in C/C++ source, found with tree-sitter: NCCL's logger, c10's checks and logs, TensorRT-LLM's.

What is read, per project:
- NCCL: ``WARN(fmt, ...)``, ``INFO(flags, fmt, ...)``, ``INFO_LOC``; ``fprintf(stderr, ...)``; ``printf``
  where it reports an error (followed by abort/exit/trap/an error return, or worded as an error).
  ``TRACE`` is compiled out of released builds and is left out.
- PyTorch: ``TORCH_CHECK*``/``TORCH_INTERNAL_ASSERT`` (c10::str concatenation of the message
  arguments), ``TORCH_WARN*``, ``C10_THROW_ERROR(Type, msg)``, ``C10D_ERROR/WARNING/INFO`` (fmt
  style), ``LOG(LEVEL) << ...`` streams, ``throw std::runtime_error(...)`` and the like.
- TensorRT-LLM: ``TLLM_CHECK_WITH_INFO``, ``TLLM_THROW``, ``TLLM_LOG_ERROR/WARNING`` (printf style),
  and its throws.

A message argument may be string literals joined by the compiler (``"a" "b"``, ``"%" PRIu64``), a
``fmt::format``/``c10::str`` call, a ``+`` concatenation, or a local variable holding one of these
(``auto msg = fmt::format(...); TORCH_CHECK(false, msg)``): the value assigned on every path to the
message, then what ``+=``, ``.append(x)`` or ``<<`` added (an addition on some paths only, a
``push_back`` or a stream passed to a call is a placeholder); a text variable set in several branches
gives one message per value (and one without it, where it may stay empty). A local lambda that
raises with its argument makes each call of it a site of the whole message. Anything else becomes
a placeholder named after the expression that fills it. Calls written inside a ``#define``
body (NCCL's ``CUDACHECK``, ``SYSCHECKVAL``) are found by parsing that body on its own; their
function is the macro's name, and a stringified parameter (``#call``) or a parameter spliced into
the literal (``"Call to " name``) becomes a placeholder.

Where tree-sitter alone is not enough (it parses one text, not the preprocessor's output):
- a ``/* */`` comment inside a ``#define`` ends the macro for tree-sitter: comments are blanked first;
- ``#if``/``#else`` branches that open braces differently lose their function to ERROR nodes: the
  function is then read from a second parse with only the first branch of each ``#if`` kept;
- where even that parse has no function (namespace-scope macro calls without ``;``, NCCL's
  ``NCCL_NVML_FN(...)`` lines), a heuristic brace scan finds the ``name(...) {`` block around the call;
- ``"x %" PRIu64 "y"`` and ``"(" STR(PORT) ")"`` are not concatenations tree-sitter knows: their
  pieces, wherever it puts them (ERROR nodes, a call of the string), are joined here.

Formats with no literal text at all are dropped here; the stricter "too generic to match"
threshold (``formats.MIN_LITERAL_CHARS``) is the build step's decision, applied to every extractor.

tree-sitter is a generator-only dependency (the ``catalogue`` extra): the runtime never imports this.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from mltriage.catalogue.formats import Format, Part, Placeholder, merged
from mltriage.catalogue.generate.sites import SourceSite

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

PROJECTS = ("nccl", "pytorch", "tensorrt-llm")


@dataclass(frozen=True, slots=True)
class _Call:
    """How one macro or function carries its message."""

    kind: str | None  # None: the kind is an argument (``C10_THROW_ERROR(DistBackendError, ...)``)
    style: str  # printf | fmt | concat (c10::str: every argument in turn)
    message_at: int  # index of the message's first argument
    kind_at: int | None = None
    prefix: tuple[Part, ...] = ()  # text the macro itself puts before the message


_INFO_LOC_PREFIX = (Placeholder("file"), ":", Placeholder("line", "int"), " (", Placeholder("func"), ") ")

CALLS: dict[str, dict[str, _Call]] = {
    "nccl": {
        "WARN": _Call("warn", "printf", 0),
        "INFO": _Call("info", "printf", 1),
        "INFO_LOC": _Call("info", "printf", 1, prefix=_INFO_LOC_PREFIX),
        "fprintf": _Call("error", "printf", 1),  # only to stderr (checked below)
        "printf": _Call("error", "printf", 0),  # only on an error path (checked below)
    },
    "pytorch": {
        "TORCH_CHECK": _Call("RuntimeError", "concat", 1),
        "TORCH_CHECK_ALWAYS_SHOW_CPP_STACKTRACE": _Call("RuntimeError", "concat", 1),
        "TORCH_CHECK_VALUE": _Call("ValueError", "concat", 1),
        "TORCH_CHECK_TYPE": _Call("TypeError", "concat", 1),
        "TORCH_CHECK_INDEX": _Call("IndexError", "concat", 1),
        "TORCH_CHECK_LINALG": _Call("LinAlgError", "concat", 1),
        "TORCH_CHECK_NOT_IMPLEMENTED": _Call("NotImplementedError", "concat", 1),
        "TORCH_CHECK_WITH": _Call(None, "concat", 2, kind_at=0),
        "TORCH_INTERNAL_ASSERT": _Call("RuntimeError", "concat", 1),
        "TORCH_WARN": _Call("warning", "concat", 0),
        "TORCH_WARN_ONCE": _Call("warning", "concat", 0),
        "TORCH_WARN_DEPRECATION": _Call("warning", "concat", 0),
        "C10_THROW_ERROR": _Call(None, "concat", 1, kind_at=0),
        "C10D_THROW_ERROR": _Call(None, "concat", 1, kind_at=0),  # c10d's own (SocketError, ...)
        "C10D_ERROR": _Call("error", "fmt", 0),
        "C10D_WARNING": _Call("warning", "fmt", 0),
        "C10D_INFO": _Call("info", "fmt", 0),
        # torch/csrc/DataLoader.cpp's worker signal handlers write their message to stderr, then re-raise the signal
        "SIGNAL_HANDLER": _Call("error", "concat", 2),
        "recordError": _Call("warning", "fmt", 0),  # c10d socket.cpp's helper: C10D_WARNING, and kept for the error
    },
    "tensorrt-llm": {
        "TLLM_CHECK_WITH_INFO": _Call("TllmException", "printf", 1),
        "TLLM_THROW": _Call("TllmException", "printf", 0),
        "TLLM_LOG_ERROR": _Call("error", "printf", 0),
        "TLLM_LOG_WARNING": _Call("warning", "printf", 0),
    },
}
# glog-style streams (c10's LOG, LOG_FIRST_N) and C++ throws, read where the project uses them
_STREAM_LEVELS = {"ERROR": "error", "WARNING": "warning", "INFO": "info", "FATAL": "fatal"}
_STREAMS = {"pytorch": ("LOG", "LOG_FIRST_N", "LOG_EVERY_N", "C10_LOG_FIRST_N", "C10_LOG_EVERY_N")}
_THROWS = {"pytorch", "tensorrt-llm"}
# what Python sees when pybind11 translates a standard exception; other types keep their C++ name
_STD_EXCEPTIONS = {
    "runtime_error": "RuntimeError", "logic_error": "RuntimeError", "exception": "RuntimeError",
    "invalid_argument": "ValueError", "domain_error": "ValueError", "length_error": "ValueError",
    "range_error": "ValueError", "out_of_range": "IndexError", "overflow_error": "OverflowError",
}
# pybind11's exceptions (torch/csrc throws py::value_error(...)) as Python raises them
_PYBIND_EXCEPTIONS = {
    "type_error": "TypeError", "value_error": "ValueError", "index_error": "IndexError", "key_error": "KeyError",
    "attribute_error": "AttributeError", "stop_iteration": "StopIteration", "buffer_error": "BufferError",
    "import_error": "ImportError", "cast_error": "RuntimeError", "reference_cast_error": "RuntimeError",
}

# An NCCL result a site returns (or assigns before ``goto``) right after logging: its cause.
_NCCL_RESULT = re.compile(r"nccl(?:\w*Error|Invalid\w+|InProgress)")
_EXITS = re.compile(r"\b(?:abort|exit|_exit|__trap|__assertfail|assert|std::abort|std::terminate)\s*\(|\bthrow\b")
_ERROR_WORDS = re.compile(r"(?i)\b(?:error|errors|fail|failed|failure|invalid|cannot|unable|abort\w*|fatal)\b")

_PRINTF = re.compile(
    r"%(?P<flags>[-+ #0']*)(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d*))?(?P<len>hh|h|ll|l|L|q|j|z|Z|t|I64|I32)?"
    r"(?P<conv>[diouxXeEfFgGaAcspn%])")
_PRINTF_TYPE = {"d": "int", "i": "int", "u": "int", "o": "int", "x": "hex", "X": "hex", "c": "char", "p": "ptr",
                "s": "str", **{c: "float" for c in "eEfFgGaA"}}
_PRI_MACRO = re.compile(r"PRI([diouxX])(?:8|16|32|64|MAX|PTR|LEAST\d+|FAST\d+)")  # <inttypes.h>: "%" PRIu64
_BRACE = re.compile(r"\{\{|\}\}|\{([^{}:]*)(?::([^{}]*))?\}")
_FMT_TYPE = {"d": "int", "b": "int", "o": "int", "x": "hex", "X": "hex", "c": "char", "p": "ptr",
             **{c: "float" for c in "eEfFgG%"}}
_ESCAPE = re.compile(rb"\\(x[0-9a-fA-F]+|[0-7]{1,3}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", re.S)
_SIMPLE_ESCAPES = {b"n": "\n", b"t": "\t", b"r": "\r", b"a": "\a", b"b": "\b", b"f": "\f", b"v": "\v", b"0": "\0",
                   b"\\": "\\", b"'": "'", b'"': '"', b"?": "?", b"e": "\x1b"}
_CAST = re.compile(r"^\(\s*(?:const\s+)?[A-Za-z_][\w:]*(?:\s+[A-Za-z_]\w*)*\s*\**\s*\)\s*(?=[\w(])")
_TEXT_VALUES = {"string_literal", "raw_string_literal", "concatenated_string", "call_expression", "binary_expression"}
# where file-scope declarations live: the file, namespaces, extern "C", preprocessor branches, and
# the ERROR nodes tree-sitter leaves after a construct it cannot fit (the rest of the file, at worst)
_SCOPES = {"translation_unit", "namespace_definition", "declaration_list", "linkage_specification",
           "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "ERROR"}
_STRING_NODES = {"string_literal", "raw_string_literal", "concatenated_string"}
_FUNCTION_DECLARATORS = {"function_declarator"}
_WRAPPING_DECLARATORS = {"pointer_declarator", "reference_declarator", "attributed_declarator",
                         "parenthesized_declarator"}
_MACRO_FUNCTION = b"__mltriage_macro_body__"
_COMMENT_OR_STRING = re.compile(
    rb"""R"([^(\s]{0,16})\(.*?\)\1"|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|/\*.*?\*/|//[^\n]*""", re.S)
_STRING_LITERAL = re.compile(rb""""(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'""")
_FUNCTION_HEADER = re.compile(r"([A-Za-z_~][\w:~]*)\s*\([^;{}]*\)\s*(?:const|noexcept|override|final|volatile|"
                              r"->\s*[\w:<>*&\s]+|\s)*$")
_NOT_FUNCTIONS = {"if", "for", "while", "switch", "catch", "return", "sizeof", "do", "else", "defined", "__attribute__"}
_DIRECTIVE = re.compile(rb"\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b")
_STRINGIFY = re.compile(rb"""("(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')|#(?=[A-Za-z_])""")


@dataclass(frozen=True, slots=True)
class Miss:
    """A call the extractor recognised but could not turn into a format (for the generator's report)."""

    path: str
    line: int
    name: str
    reason: str


def __getattr__(name: str):
    """NCCL's release and source readers live in ``nccl_source`` (which imports this module); they
    are reachable from here too, for callers that know the extractor by this name."""
    if name in ("nccl_releases", "nccl_files", "iter_nccl_sites", "sites_at"):
        from mltriage.catalogue.generate import nccl_source

        return getattr(nccl_source, name)
    raise AttributeError(name)


@lru_cache(maxsize=1)
def _parser():
    import tree_sitter  # the 'catalogue' extra: generator only
    import tree_sitter_cpp

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_cpp.language()))


def extract_c(path: str, text: str, project: str) -> list[SourceSite]:
    """Every message site of one C/C++ file of ``project`` (one of ``PROJECTS``)."""
    return extract_c_with_misses(path, text, project)[0]


def extract_c_with_misses(path: str, text: str, project: str) -> tuple[list[SourceSite], list[Miss]]:
    if project not in CALLS:
        raise ValueError(f"unknown C/C++ project {project!r}; expected one of {', '.join(PROJECTS)}")
    source = text.encode("utf-8", "replace")
    extraction = _Extraction(path, project)
    if extraction.candidates.search(source):
        extraction.run(source, line_offset=0, macro=None)
    return extraction.sites, extraction.misses


@dataclass
class _Extraction:
    path: str
    project: str
    sites: list[SourceSite] = field(default_factory=list)
    misses: list[Miss] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.calls = CALLS[self.project]
        self.streams = _STREAMS.get(self.project, ())
        words = [*self.calls, *self.streams] + (["throw"] if self.project in _THROWS else [])
        self.candidates = re.compile(rb"\b(" + b"|".join(re.escape(w.encode()) for w in words) + rb")\b")

    # -- walking ---------------------------------------------------------------------------------
    def run(self, source: bytes, line_offset: int, macro: str | None) -> None:
        """Find every candidate name by text, then let the parse tree say what it is. Walking only
        from candidates (not the whole tree) keeps a 300-file release to about a second."""
        unit = _Unit(_blank_comments(source), line_offset, macro)
        root = unit.root
        seen_macros: set[int] = set()
        for m in self.candidates.finditer(unit.source):
            node = root.descendant_for_byte_range(m.start(), m.end())
            if node is None:
                continue
            if node.type == "preproc_arg" or (node.parent is not None and node.parent.type == "preproc_arg"):
                arg = node if node.type == "preproc_arg" else node.parent
                if macro is None and arg.start_byte not in seen_macros and not _compiled_out(arg):
                    seen_macros.add(arg.start_byte)
                    self._macro_body(arg, line_offset)
                continue
            if node.type not in ("identifier", "throw") or _compiled_out(node):
                continue
            ctx = _Site(self, unit, node)
            name = m.group(1).decode()
            if name == "throw":
                if node.parent is not None and node.parent.type == "throw_statement":
                    ctx.throw(node.parent)
            elif name in self.streams:
                ctx.stream(name)
            else:
                ctx.call(name, self.calls[name])

    def _macro_body(self, arg: Node, line_offset: int) -> None:
        """A ``#define``'s body parsed as a function body of its own (tree-sitter keeps it as raw text)."""
        define = arg.parent
        name_node = define.child_by_field_name("name") if define is not None else None
        if name_node is None:
            return
        body = arg.text.replace(b"\\\r\n", b"  \n").replace(b"\\\n", b" \n")
        body = body.replace(b"##", b"  ")
        body = _STRINGIFY.sub(lambda m: m.group(1) or b"_", body)  # #call (a stringified parameter) → _call
        wrapped = b"void " + _MACRO_FUNCTION + b"() {" + body + b"\n;}"
        self.run(wrapped, line_offset + arg.start_point.row, name_node.text.decode())

    def add(self, node: Node, unit: _Unit, function: str | None, kind: str, parts: list[Part],
            cause: str | None) -> None:
        fmt = Format(merged(_without_final_newline(parts)))
        if not any(isinstance(p, str) and p.strip() for p in fmt.parts):
            self.miss(node, unit, "no literal text")
            return
        self.sites.append(SourceSite(self.path, node.start_point.row + 1 + unit.line_offset,
                                     node.end_point.row + 1 + unit.line_offset, function, kind, fmt, cause))

    def miss(self, node: Node, unit: _Unit, reason: str) -> None:
        name = node.text.decode("utf-8", "replace").split("(")[0][:40]
        self.misses.append(Miss(self.path, node.start_point.row + 1 + unit.line_offset, name, reason))


def _without_final_newline(parts: list[Part]) -> list[Part]:
    """printf's closing ``\\n`` ends the output line; it is not text of the message."""
    if parts and isinstance(parts[-1], str):
        return [*parts[:-1], parts[-1].rstrip("\n")]
    return parts


class _Unit:
    """One parsed text: a file, or a ``#define`` body parsed on its own (its lines offset into the file)."""

    def __init__(self, source: bytes, line_offset: int, macro: str | None) -> None:
        self.source = source
        self.line_offset = line_offset
        self.macro = macro
        self.root = _parser().parse(source).root_node
        self._first_branch_root: Node | None = None
        self._constants: dict[bytes, Node] | None = None
        self._brace_text: bytes | None = None

    def first_branch_root(self) -> Node:
        """The same text with only the first branch of each ``#if`` kept (the rest blanked, offsets
        unchanged): braces opened differently in ``#if``/``#else`` branches break tree-sitter's
        function bodies, and this reading gives them back their function."""
        if self._first_branch_root is None:
            self._first_branch_root = _parser().parse(_first_branches(self.source)).root_node
        return self._first_branch_root

    def file_constants(self) -> dict[bytes, Node]:
        """Text constants declared ``const``/``constexpr`` outside functions, by name."""
        if self._constants is None:
            self._constants = {}
            stack = [self.root]
            while stack:
                node = stack.pop()
                if node.type == "declaration":
                    if _is_const(node):
                        for declarator in node.children_by_field_name("declarator"):
                            if declarator.type != "init_declarator":
                                continue
                            value = declarator.child_by_field_name("value")
                            name = _declared_identifier(declarator.child_by_field_name("declarator"))
                            if name and value is not None and value.type in _STRING_NODES:
                                self._constants[name] = value
                elif node.type in _SCOPES:
                    stack.extend(node.children)
        return self._constants

    def function_by_braces(self, offset: int) -> str | None:
        """The heuristic fallback where tree-sitter gives no function at all (a file whose namespace
        scope holds macro calls without a semicolon, ``NCCL_NVML_FN(...)``, loses its function
        bodies to ERROR nodes): the outermost brace block around ``offset`` whose header reads
        like ``name(params) [const...]``, on the text with strings, comments and other branches blanked."""
        if self._brace_text is None:
            self._brace_text = _STRING_LITERAL.sub(lambda m: b'"' + b" " * (len(m.group(0)) - 2) + b'"',
                                                   _first_branches(self.source))
        text = self._brace_text
        stack: list[int] = []
        for m in re.finditer(rb"[{}]", text[:offset]):
            if m.group(0) == b"{":
                stack.append(m.start())
            elif stack:
                stack.pop()
        for brace in stack:
            start = max(text.rfind(b";", 0, brace), text.rfind(b"}", 0, brace), text.rfind(b"{", 0, brace)) + 1
            header = _FUNCTION_HEADER.search(text[start:brace].decode("utf-8", "replace"))
            if header and header.group(1).rsplit("::", 1)[-1] not in _NOT_FUNCTIONS:
                return header.group(1)
        return None


class _Site:
    """One candidate name in the tree: the call around it, its message, function and cause."""

    def __init__(self, extraction: _Extraction, unit: _Unit, name: Node) -> None:
        self.x = extraction
        self.unit = unit
        self.source = unit.source
        self.name = name

    def _add(self, node: Node, kind: str, parts: list[Part] | None, cause: str | None = None) -> None:
        if parts is None:
            self.x.miss(node, self.unit, "message is not a literal, format call or local variable")
            return
        self.x.add(node, self.unit, self._function(node), kind, parts, cause)
        self._helper_calls(node, kind, parts)

    def _helper_calls(self, site: Node, kind: str, parts: list[Part]) -> None:
        """A local lambda that raises with its argument (``auto invalidArgument = [](const
        std::string& msg) { TORCH_CHECK(false, "Gloo::broadcast: " + msg); }``): each later call
        of it in the same function (``invalidArgument("unsupported layout")``) is a site of the
        whole message."""
        lam = _enclosing(site, {"lambda_expression", "function_definition"})
        if lam is None or lam.type != "lambda_expression" or lam.parent is None or lam.parent.type != "init_declarator":
            return
        name = _declared_identifier(lam.parent.child_by_field_name("declarator"))
        declarator = lam.child_by_field_name("declarator")
        params = declarator.child_by_field_name("parameters") if declarator is not None else None
        if not name or params is None:
            return
        slots = {}
        for n, param in enumerate(c for c in params.named_children if c.type == "parameter_declaration"):
            identifier = _declared_identifier(param.child_by_field_name("declarator"))
            if identifier:
                slots[identifier.decode()] = n
        if not any(isinstance(p, Placeholder) and p.name in slots for p in parts):
            return
        scope = _enclosing(lam, {"function_definition", "lambda_expression"})
        body = scope.child_by_field_name("body") if scope is not None else None
        calls, stack = [], [body] if body is not None else []
        while stack:
            node = stack.pop()
            stack.extend(node.children)
            function = node.child_by_field_name("function") if node.type == "call_expression" else None
            if function is not None and function.type == "identifier" and function.text == name \
                    and node.start_byte > lam.end_byte:
                calls.append(node)
        for node in sorted(calls, key=lambda n: n.start_byte):
            args = _arguments(node.child_by_field_name("arguments"))
            whole: list[Part] = []
            for part in parts:
                slot = slots.get(part.name) if isinstance(part, Placeholder) else None
                whole.extend(self._expression(args[slot], node, 1) if slot is not None and slot < len(args)
                             and args[slot] else [part])
            self.x.add(node, self.unit, self._function(node), kind, whole, None)

    # -- the three shapes a message site takes -----------------------------------------------------
    def call(self, name: str, spec: _Call) -> None:
        call = self.name.parent
        if call is None or call.type != "call_expression" or call.child_by_field_name("function") != self.name:
            return  # a declaration, a definition, a mention in an expression: not a call of the macro
        arglist = call.child_by_field_name("arguments")
        if arglist is None:
            return
        args = _arguments(arglist)
        if name == "fprintf" and not (args and _text(args[0]) == "stderr"):
            return  # into a file or a buffer: not what a user reads
        kind = spec.kind
        if spec.kind_at is not None:
            if len(args) <= spec.kind_at:
                return
            kind = _exception_kind(_text(args[spec.kind_at]))
        message = args[spec.message_at:]
        if not message or not message[0]:
            return  # TORCH_CHECK(cond) alone: its message is the condition's code, not a format
        assert kind is not None
        cause = self._cause(call)
        for variant in self._variants(message):
            if spec.style == "concat":
                parts = self._concat(variant, call)
            else:
                parts = self._formatted(variant, call, spec.style)
            if parts is not None and spec.prefix:
                parts = [*spec.prefix, *parts]
            if name == "printf" and not self._error_path(call, parts):
                return
            self._add(call, kind, parts, cause)

    def stream(self, name: str) -> None:
        """``LOG(ERROR) << "a" << b``: the call is the innermost left operand of a ``<<`` chain."""
        call = self.name.parent
        if call is None or call.type != "call_expression" or call.child_by_field_name("function") != self.name:
            return
        arglist = call.child_by_field_name("arguments")
        args = _arguments(arglist) if arglist is not None else []
        level = _STREAM_LEVELS.get(_text(args[0]).rsplit(":", 1)[-1]) if args and args[0] else None
        if level is None:
            return
        top, pieces = call, []
        while top.parent is not None and top.parent.type == "binary_expression" \
                and top.parent.child_by_field_name("left") == top and _operator(top.parent) == "<<":
            top = top.parent
            right = top.child_by_field_name("right")
            if right is not None and _text([right]) not in ("std::endl", "endl", "std::flush"):
                pieces.append([right])
        if not pieces:
            return
        for variant in self._variants(pieces):
            self._add(top, level, self._concat(variant, top), self._cause(top))

    def throw(self, statement: Node) -> None:
        """``throw std::runtime_error(msg)``, ``throw DistNetworkError(fmt::format(...))``."""
        expr = next((c for c in statement.named_children if c.type != "comment"), None)
        if expr is None or expr.type != "call_expression":
            return
        function = expr.child_by_field_name("function")
        arglist = expr.child_by_field_name("arguments")
        if function is None or arglist is None:
            return
        args = _arguments(arglist)
        if not args or not args[0]:
            return
        kind = _exception_kind(_text([function]))
        for variant in self._variants(args[:1]):
            self._add(statement, kind, self._concat(variant, expr))

    # -- messages ------------------------------------------------------------------------------------
    def _formatted(self, args: list[list[Node]], anchor: Node, style: str) -> list[Part] | None:
        """A format string (literal, or a local variable holding one) and the arguments it consumes."""
        template = _literal(args[0])
        if template is None:
            if len(args) == 1:  # WARN(buffer), C10D_ERROR(msg): an already-built message
                return self._concat(args[:1], anchor)
            return None
        values = [_Value(_name(a), self._known_text(a, anchor)) for a in args[1:]]
        return _printf_parts(template, values) if style == "printf" else _fmt_parts(template, values)

    def _known_text(self, arg: list[Node], anchor: Node) -> tuple[Part, ...] | None:
        """What an argument prints where the source shows it: a literal, or a local variable holding
        literal text (``constexpr auto* what = "..."``, ``std::string where = "at " + host``)."""
        constant = _constant(arg)
        if constant is not None:
            return (constant,)
        if len(arg) == 1 and arg[0].type == "identifier":
            value = self._local_binding(arg[0].text, arg[0]).single()
            # text only (a number in a variable is a counter as often as a constant), and all of it
            if value is not None and value.node is not None and not value.appends and value.node.type in _TEXT_VALUES:
                parts = self._expression([value.node], value.node, 1)
                if any(isinstance(p, str) for p in parts):
                    return tuple(parts)
        return None

    def _concat(self, args: list[list[Node]], anchor: Node, depth: int = 0) -> list[Part] | None:
        """c10::str's rule: each argument printed in turn; literals literal, the rest placeholders."""
        out: list[Part] = []
        for arg in args:
            out.extend(self._expression(arg, anchor, depth))
        return out

    def _expression(self, arg: list[Node], anchor: Node, depth: int) -> list[Part]:
        template = _literal(arg)
        if template is not None:
            return [p if isinstance(p, str) else Placeholder(p.name) for p in template]
        if len(arg) != 1 or depth > 6:
            return [Placeholder(_name(arg))]
        node = arg[0]
        kind = node.type
        if kind == "char_literal":
            return [_unescape(node.text[1:-1])]
        if kind == "number_literal":
            return [node.text.decode()]
        if kind == "parenthesized_expression":
            inner = [c for c in node.named_children if c.type != "comment"]
            return self._expression(inner, anchor, depth + 1) if len(inner) == 1 else [Placeholder(_name(arg))]
        if kind == "call_expression":
            function = _text([node.child_by_field_name("function")])
            arglist = node.child_by_field_name("arguments")
            inner_args = _arguments(arglist) if arglist is not None else []
            if function.endswith(("fmt::format", "std::format")) or function == "format":
                if inner_args and inner_args[0]:
                    parts = self._formatted(inner_args, anchor, "fmt")
                    if parts is not None:
                        return parts
            elif function in ("c10::str", "str", "::c10::str") and inner_args and inner_args[0]:
                return self._concat(inner_args, anchor, depth + 1) or []
            elif function in ("std::string", "string") and len(inner_args) == 1 and inner_args[0]:
                return self._expression(inner_args[0], anchor, depth + 1)
            elif function in ("std::to_string", "to_string", "c10::to_string") and len(inner_args) == 1 \
                    and inner_args[0]:
                return [Placeholder(_name(inner_args[0]))]  # the number itself names the value
        if kind == "binary_expression" and _operator(node) == "+":
            operands = _plus_operands(node)
            parts = [p for operand in operands for p in self._expression([operand], anchor, depth + 1)]
            if any(isinstance(p, str) for p in parts):  # a string join, not arithmetic
                return parts
        if kind == "identifier":
            return self._variable(node, depth)
        if kind == "call_expression" and _is_str_call(node):  # oss.str(): what was streamed into oss
            return self._variable(node.child_by_field_name("function").child_by_field_name("argument"), depth)
        return [Placeholder(_name(arg))]

    def _variable(self, node: Node, depth: int) -> list[Part]:
        """A local variable's text where the message uses it: its one possible value, then what was
        appended to it (an append made only on some paths is a placeholder); a placeholder where
        branches leave it holding one of several values."""
        value = self._local_binding(node.text, node).single()  # what it holds where it is read
        if value is None:
            return [Placeholder(_name([node]))]
        out = self._expression([value.node], value.node, depth + 1) if value.node is not None else []
        for piece in value.appends:
            if piece is None:
                if not (out and isinstance(out[-1], Placeholder) and out[-1].name == _name([node])):
                    out.append(Placeholder(_name([node])))
            else:
                out.extend(self._expression([piece], piece, depth + 1))
        return out

    def _variants(self, message: list[list[Node]]) -> list[list[list[Node]]]:
        """A message holding a local text variable assigned in several branches (``msg = fmt::format(A)``
        or ``msg = fmt::format(B)``; ``LOG(ERROR) << prefix << msg``; a ``std::string extra;`` set on
        one path only) is several messages, one site each: the first such variable's every value, and
        its empty one where it is one piece of several (an empty message alone is no message)."""
        for n, arg in enumerate(message):
            if len(arg) != 1 or arg[0].type != "identifier":
                continue
            binding = self._local_binding(arg[0].text, arg[0])
            values = [v for v in binding.values if v is not None]
            if not (binding.known and binding.text and binding.single() is None and not binding.appends and values
                    and all(v.type in _TEXT_VALUES for v in values)):
                continue
            pieces: list[list[Node]] = [[v] for v in values]
            if len(message) > 1 and len(values) < len(binding.values):
                pieces.append([])
            return [[*message[:n], *([p] if p else []), *message[n + 1:]] for p in pieces[:MAX_VARIANTS]]
        return [message]

    def _local_binding(self, name: bytes, anchor: Node) -> _Binding:
        """What ``name`` may hold at ``anchor``, from the statements before it in the same function:
        the last declaration (its initialiser, or none: a default-constructed string is empty), the
        plain assignments after it, and what ``+=``, ``.append(x)`` and ``<<`` add to it. An array
        (``char buf[256] = ""``) is a buffer filled elsewhere: never a value."""
        scope = _enclosing(anchor, {"function_definition", "lambda_expression"})
        body = scope.child_by_field_name("body") if scope is not None else None
        if body is None:
            return _Binding([], [], known=False)
        declared: Node | None = None
        events: list[Node] = []  # assignments and appends
        writes: list[tuple[int, bool]] = []  # changes the source does not spell out: (where, only as a call argument)
        stack = [body]
        while stack:
            node = stack.pop()
            if node.start_byte >= anchor.start_byte:
                continue
            if _declares(node, name):
                if declared is None or node.start_byte > declared.start_byte:
                    declared = node
            elif _changes(node, name):
                events.append(node)
            else:
                write = _write(node, name)
                if write is not None:
                    writes.append((node.start_byte, write))
            stack.extend(node.children)
        if declared is None:
            constant = self.unit.file_constants().get(name)
            if constant is not None and not events:  # (``const char* x`` is a pointer to const: assignable)
                return _Binding([constant], [], known=True, text=True)  # constexpr char const* msg = "..." at file scope
            return _Binding([], [], known=False)  # a parameter or a member: the source does not show it
        # a stream is filled by whatever it is passed to (``isSubtypeOf(t, &why)``, ``print(os)``)
        stream = _stream_typed(declared)
        if any(start > declared.start_byte and (stream or not as_argument) for start, as_argument in writes):
            return _Binding([], [], known=False)
        known, initial = _initial_value(declared)
        text = _text_typed(declared)
        if not text and (initial is None or any(not _is_assignment(e) for e in events)):
            known = False  # a number declared without a value, or one that += adds to: not text
        values: list[Node | None] = [initial]
        appends: list[tuple[Node | None, bool]] = []
        for event in sorted(events, key=lambda n: n.start_byte):
            if event.start_byte < declared.end_byte:
                continue  # inside the declaration itself
            branched = _branched(event, anchor)
            if _is_assignment(event):
                value = event.child_by_field_name("right")
                if branched:
                    values.append(value)
                else:
                    values, appends, known = [value], [], True
            else:
                appends.extend((piece, branched) for piece in _appended(event))
        return _Binding(values, appends, known, text)

    # -- context -------------------------------------------------------------------------------------
    def _function(self, node: Node) -> str | None:
        """The C/C++ function whose body holds the call (a lambda's is the function around it);
        ``Class::method`` for a method defined in its class; the macro's name inside a ``#define``."""
        if self.unit.macro is not None:
            return self.unit.macro
        name = _function_around(node)
        if name is None:
            around = self.unit.first_branch_root().descendant_for_byte_range(node.start_byte, node.end_byte)
            name = _function_around(around, inclusive=True) if around is not None else None
        if name is None:
            name = self.unit.function_by_braces(node.start_byte)
        return name

    def _cause(self, call: Node) -> str | None:
        """The NCCL result the same block returns (or assigns, then jumps) after the log: the first
        return/goto of the statements that follow, past cleanup calls and other log lines."""
        statement = call
        while statement.parent is not None and statement.type != "expression_statement":
            if statement.type in ("compound_statement", "function_definition"):
                return None
            statement = statement.parent
        if statement.type != "expression_statement":
            return None
        candidate = None
        sibling = statement.next_named_sibling
        while sibling is not None:
            kind = sibling.type
            if kind == "return_statement":
                value = next((c for c in sibling.named_children if c.type != "comment"), None)
                text = _text([value]) if value is not None else ""
                return text if _NCCL_RESULT.fullmatch(text) else candidate
            if kind != "expression_statement":
                return candidate  # goto, break, a nested block or branch: the path ends or forks here
            expr = next((c for c in sibling.named_children if c.type != "comment"), None)
            if expr is not None and expr.type == "assignment_expression":
                right = _text([expr.child_by_field_name("right")])
                if _NCCL_RESULT.fullmatch(right):
                    candidate = right  # ret = ncclSystemError; goto fail;
            elif expr is not None and expr.type == "call_expression":
                function = _text([expr.child_by_field_name("function")])
                arglist = expr.child_by_field_name("arguments")
                args = _arguments(arglist) if arglist is not None else []
                first = _text(args[0]) if args and args[0] else ""
                if "CHECK" in function and _NCCL_RESULT.fullmatch(first):
                    return first  # NCCLCHECKGOTO(ncclSystemError, ret, fail)
            sibling = sibling.next_named_sibling
        return candidate

    def _error_path(self, call: Node, parts: list[Part] | None) -> bool:
        """A plain printf counts when it reports a failure: worded as one, or followed in its block by
        an abort, exit, trap, throw or error return."""
        if parts and _ERROR_WORDS.search("".join(p for p in parts if isinstance(p, str))):
            return True
        block = _enclosing(call, {"compound_statement"})
        if block is None:
            return False
        after = self.source[call.end_byte:block.end_byte].decode("utf-8", "replace")
        return bool(_EXITS.search(after) or _NCCL_RESULT.search(after))


@dataclass(frozen=True, slots=True)
class _Held:
    """The one text a variable holds where a message uses it: its value (None: empty) and what was
    appended to it after that (None for an append made on some paths only, or of several arguments)."""

    node: Node | None
    appends: tuple[Node | None, ...]


@dataclass(frozen=True, slots=True)
class _Binding:
    values: list[Node | None]  # what it may hold (None: declared without a value, so empty)
    appends: list[tuple[Node | None, bool]]  # appended after the last value every path assigns: (text, on some paths only)
    known: bool  # False: a parameter or member, or an initialiser that is not one expression
    text: bool = False  # declared as text (a string or stream, or auto holding a literal or a join)

    def single(self) -> _Held | None:
        if not self.known or len(self.values) != 1:
            return None
        return _Held(self.values[0], tuple(None if branched else piece for piece, branched in self.appends))


# statements between a declaration and a use that run on some paths only
_BRANCHES = {"if_statement", "else_clause", "for_statement", "for_range_loop", "while_statement", "do_statement",
             "switch_statement", "case_statement", "try_statement", "catch_clause", "conditional_expression",
             "lambda_expression", "preproc_else", "preproc_elif"}
_STREAM_ENDS = ("std::endl", "endl", "std::flush")
MAX_VARIANTS = 4  # messages one site may be, by the values of one variable


def _declares(node: Node, name: bytes) -> bool:
    """``T name = v``, ``T name(v)``, ``T name{v}``, or ``T name;``."""
    if node.type == "init_declarator":
        return _declared_identifier(node.child_by_field_name("declarator")) == name
    return node.type == "declaration" and any(d.type == "identifier" and d.text == name
                                              for d in node.children_by_field_name("declarator"))


def _initial_value(declared: Node) -> tuple[bool, Node | None]:
    """(whether the source shows it, the value): ``T name;`` is empty, ``T name(a, b)`` is not shown."""
    if declared.type == "declaration":
        return True, None
    value = declared.child_by_field_name("value")
    if value is not None and value.type in ("argument_list", "initializer_list"):  # msg(...), msg{...}
        inner = [c for c in value.named_children if c.type != "comment"]
        return (True, None) if not inner else (len(inner) == 1, inner[0] if len(inner) == 1 else None)
    return value is not None, value


def _changes(node: Node, name: bytes) -> bool:
    """``name = v``, ``name += v``, ``name.append(v)``, or a statement ``name << a << b``."""
    if node.type == "assignment_expression":
        left = node.child_by_field_name("left")
        return left is not None and left.text == name and _operator(node) in ("=", "+=")
    if node.type == "call_expression":
        function = node.child_by_field_name("function")
        return function is not None and function.type == "field_expression" and \
            _text([function.child_by_field_name("argument")]) == name.decode() and \
            _text([function.child_by_field_name("field")]) == "append"
    if node.type == "binary_expression" and _operator(node) == "<<" and node.parent is not None \
            and node.parent.type == "expression_statement":
        left = node
        while left is not None and left.type == "binary_expression" and _operator(left) == "<<":
            left = left.child_by_field_name("left")
        return left is not None and left.type == "identifier" and left.text == name
    return False


_MUTATORS = {"push_back", "emplace_back", "insert", "assign", "resize", "clear", "erase", "replace", "pop_back",
             "swap", "write", "put"}
_FILLERS = {"std::getline", "getline", "std::back_inserter", "back_inserter", "std::swap", "swap"}


def _write(node: Node, name: bytes) -> bool | None:
    """A change to ``name`` whose text the source does not show: ``name.push_back(c)``,
    ``std::getline(in, name)``, ``format_to(std::back_inserter(name), ...)``, ``in >> name``, ``&name``
    (False); ``f(name)`` (True: a change only where ``name`` is a stream). None: not a change."""
    if node.type == "call_expression":
        function = node.child_by_field_name("function")
        arglist = node.child_by_field_name("arguments")
        if function is None or arglist is None:
            return None
        if function.type == "field_expression":
            mutates = _text([function.child_by_field_name("argument")]) == name.decode() and \
                _text([function.child_by_field_name("field")]) in _MUTATORS
            return False if mutates else None
        if not any(len(a) == 1 and a[0].text == name for a in _arguments(arglist)):
            return None
        return _text([function]) not in _FILLERS
    if node.type == "binary_expression" and _operator(node) == ">>":
        right = node.child_by_field_name("right")
        return False if right is not None and right.text == name else None
    if node.type == "pointer_expression" and node.text.replace(b" ", b"") == b"&" + name:
        return False
    return None


def _is_assignment(event: Node) -> bool:
    return event.type == "assignment_expression" and _operator(event) == "="


_TEXT_TYPE = re.compile(r"string|stream|char|\bstr\b")
_STREAM_TYPE = re.compile(r"stream\b")
_TEXT_CALLS = re.compile(r"(?:^|::)(?:str|format|string|to_string)$")


def _declared_type(declared: Node) -> str:
    declaration = declared if declared.type == "declaration" else declared.parent
    type_node = declaration.child_by_field_name("type") if declaration is not None else None
    return _text([type_node]) if type_node is not None else ""


def _stream_typed(declared: Node) -> bool:
    return bool(_STREAM_TYPE.search(_declared_type(declared)))


def _text_typed(declared: Node) -> bool:
    """Whether a declaration holds text (so ``+=`` appends): its type names a string or stream, or
    ``auto`` takes a literal, a ``c10::str``/``fmt::format``/``std::string`` value or a join."""
    if _TEXT_TYPE.search(_declared_type(declared)):
        return True
    _, value = _initial_value(declared)
    if value is None:
        return False
    if value.type in _STRING_NODES:
        return True
    if value.type == "call_expression":
        return bool(_TEXT_CALLS.search(_text([value.child_by_field_name("function")])))
    return value.type == "binary_expression" and _operator(value) == "+" and \
        any(n.type in _STRING_NODES for n in _plus_operands(value))


def _appended(event: Node) -> list[Node | None]:
    """What one append adds, in order (None: not one expression, ``s.append(n, c)``)."""
    if event.type == "assignment_expression":
        return [event.child_by_field_name("right")]
    if event.type == "call_expression":
        arglist = event.child_by_field_name("arguments")
        args = _arguments(arglist) if arglist is not None else []
        return [args[0][0] if len(args) == 1 and len(args[0]) == 1 else None]
    pieces: list[Node | None] = []
    node: Node | None = event
    while node is not None and node.type == "binary_expression" and _operator(node) == "<<":
        right = node.child_by_field_name("right")
        if right is not None and _text([right]) not in _STREAM_ENDS:
            pieces.append(right)
        node = node.child_by_field_name("left")
    return pieces[::-1]


def _branched(event: Node, anchor: Node) -> bool:
    """Whether ``event`` runs on some of the paths to ``anchor`` only: between it and the innermost
    node holding both lies a branch, a loop, a lambda or a handler (or they sit in different arms)."""
    node = event.parent
    while node is not None and not (node.start_byte <= anchor.start_byte and anchor.end_byte <= node.end_byte):
        if node.type in _BRANCHES:
            return True
        node = node.parent
    return node is not None and node.type in _BRANCHES


def _is_str_call(node: Node) -> bool:
    """``oss.str()``"""
    function = node.child_by_field_name("function")
    arglist = node.child_by_field_name("arguments")
    return function is not None and function.type == "field_expression" and arglist is not None \
        and not arglist.named_children and _text([function.child_by_field_name("field")]) == "str" \
        and function.child_by_field_name("argument") is not None \
        and function.child_by_field_name("argument").type == "identifier"


# -- tree helpers ------------------------------------------------------------------------------------
def _arguments(arglist: Node) -> list[list[Node]]:
    """An argument list split at its top-level commas. tree-sitter wraps what it cannot fit (``"x %"
    PRIu64 "y"`` is not a concatenation it knows) in ERROR nodes: their pieces count as the argument's."""
    args: list[list[Node]] = [[]]

    def feed(node: Node) -> None:
        for child in node.children:
            kind = child.type
            if kind == "ERROR":
                feed(child)
            elif kind == ",":
                args.append([])
            elif kind in ("(", ")") and child.parent == arglist:
                continue
            elif kind != "comment":
                args[-1].append(child)

    feed(arglist)
    return [] if args == [[]] else args


def _literal(arg: list[Node]) -> list[str | Placeholder] | None:
    """String literals joined as the compiler joins them; a macro among them (``PRIu64``, a
    ``#define`` parameter) is its conversion or a placeholder. None when the argument is not that."""
    pieces: list[str | Placeholder] = []
    has_string = False

    def feed(nodes: Iterable[Node]) -> bool:
        nonlocal has_string
        for node in nodes:
            if node.type in ("concatenated_string", "ERROR"):  # ERROR: a macro tree-sitter would not join
                if not feed(node.named_children):
                    return False
            elif node.type == "string_literal":
                has_string = True
                pieces.append(_string_value(node))
            elif node.type == "raw_string_literal":
                has_string = True
                pieces.append(_raw_string_value(node))
            elif node.type == "identifier":
                m = _PRI_MACRO.fullmatch(node.text.decode())
                pieces.append(m.group(1) if m else Placeholder(node.text.decode()))
            elif node.type == "call_expression":  # a macro among the pieces: "(" STR(PORT) " by default)"
                function, args = node.child_by_field_name("function"), node.child_by_field_name("arguments")
                if function is None or args is None:
                    return False
                if function.type == "concatenated_string" and function.named_children[-1].type == "identifier":
                    if not feed(function.named_children[:-1]):
                        return False
                    function = function.named_children[-1]
                if function.type != "identifier":
                    return False
                pieces.append(Placeholder(function.text.decode() + args.text.decode()))
            elif node.type == "comment":
                continue
            else:
                return False
        return True

    if not arg or not feed(arg) or not has_string:
        return None
    out: list[str | Placeholder] = []
    for piece in pieces:
        if isinstance(piece, str) and out and isinstance(out[-1], str):
            out[-1] += piece
        else:
            out.append(piece)
    return out


def _string_value(node: Node) -> str:
    raw = node.text
    start, end = raw.find(b'"'), raw.rfind(b'"')
    return _unescape(raw[start + 1:end] if 0 <= start < end else b"")


def _raw_string_value(node: Node) -> str:
    raw = node.text.decode("utf-8", "replace")
    m = re.search(r'R"([^(]*)\((.*)\)\1"$', raw, re.S)
    return m.group(2) if m else ""


def _unescape(body: bytes) -> str:
    def one(m: re.Match[bytes]) -> bytes:
        esc = m.group(1)
        if esc in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[esc].encode()
        if esc[:1] == b"x":
            return chr(int(esc[1:], 16) & 0xFF).encode()
        if esc[:1] in (b"u", b"U"):
            return chr(int(esc[1:], 16)).encode()
        if esc[:1].isdigit():
            return chr(int(esc, 8) & 0xFF).encode()
        return esc

    return _ESCAPE.sub(one, body).decode("utf-8", "replace")


def _text(arg: list[Node | None] | None) -> str:
    if not arg or arg[0] is None:
        return ""
    return " ".join(n.text.decode("utf-8", "replace") for n in arg if n is not None)


def _name(arg: list[Node]) -> str:
    """A placeholder's name: the expression that fills it, casts left off (``(long long)size`` → size)."""
    text = " ".join(_text(arg).split())
    while True:
        stripped = _CAST.sub("", text, count=1)
        if stripped == text:
            break
        text = stripped
    m = re.fullmatch(r"(?:static|reinterpret|const)_cast<[^>]*>\((.*)\)", text)
    return m.group(1) if m else text or "value"


def _operator(node: Node) -> str:
    op = node.child_by_field_name("operator")
    return op.type if op is not None else ""


def _enclosing(node: Node, types: set[str]) -> Node | None:
    current = node.parent
    while current is not None and current.type not in types:
        current = current.parent
    return current


def _is_const(declaration: Node) -> bool:
    """``constexpr``/``const`` before the declarator (``char const*`` and ``const char*`` alike)."""
    head = declaration.text.split(b"=", 1)[0]
    return bool(re.search(rb"\b(?:const|constexpr)\b", head))


def _plus_operands(node: Node) -> list[Node]:
    """``a + b + c`` (left-nested) as [a, b, c]."""
    operands: list[Node] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "binary_expression" and _operator(current) == "+":
            left, right = current.child_by_field_name("left"), current.child_by_field_name("right")
            stack.extend(n for n in (right, left) if n is not None)
        else:
            operands.append(current)
    return operands


def _declared_identifier(declarator: Node | None) -> bytes | None:
    """``msg``, ``* msg``, ``& msg`` → ``msg``."""
    while declarator is not None and declarator.type in _WRAPPING_DECLARATORS:
        declarator = declarator.child_by_field_name("declarator") or next(
            (c for c in declarator.named_children if c.type.endswith(("declarator", "identifier"))), None)
    return declarator.text if declarator is not None and declarator.type == "identifier" else None


def _function_around(node: Node, inclusive: bool = False) -> str | None:
    current = node
    if inclusive and node.type == "function_definition":
        current = node.children[0] if node.children else node  # the search below starts at the parent
    while True:
        definition = _enclosing(current, {"function_definition"})
        if definition is None:
            return None
        name = _declared_name(definition)
        if name:
            owner = _enclosing(definition, {"class_specifier", "struct_specifier"})
            owner_name = owner.child_by_field_name("name") if owner is not None else None
            if owner_name is not None and "::" not in name:
                return f"{owner_name.text.decode()}::{name}"
            return name
        current = definition


def _blank_comments(source: bytes) -> bytes:
    """Comments become spaces (newlines and line-continuation backslashes kept, so every offset and
    line stays): tree-sitter ends a ``#define`` body at a ``/* */`` comment inside it."""
    if b"/" not in source:
        return source

    def blank(m: re.Match[bytes]) -> bytes:
        text = m.group(0)
        if text[:1] != b"/":
            return text  # a string or character literal
        return re.sub(rb"[^\n\\]", b" ", text)

    return _COMMENT_OR_STRING.sub(blank, source)


def _first_branches(source: bytes) -> bytes:
    """Only the first branch of every ``#if`` kept: the other branches and all the conditional
    directives themselves blanked (depth-aware), offsets kept."""
    lines = source.split(b"\n")
    past_first: list[bool] = []  # per open #if: whether we are past its first branch
    out = []
    for line in lines:
        directive = _DIRECTIVE.match(line)
        word = directive.group(1) if directive else None
        if word in (b"if", b"ifdef", b"ifndef"):
            past_first.append(False)
        elif word in (b"elif", b"else") and past_first:
            past_first[-1] = True
        elif word == b"endif" and past_first:
            past_first.pop()
        hidden = word is not None or any(past_first)
        out.append(re.sub(rb"[^\\]", b" ", line) if hidden else line)
    return b"\n".join(out)


def _declared_name(definition: Node) -> str | None:
    declarator = definition.child_by_field_name("declarator")
    while declarator is not None and declarator.type in _WRAPPING_DECLARATORS:
        declarator = declarator.child_by_field_name("declarator") or next(
            (c for c in declarator.named_children if c.type.endswith("declarator")), None)
    if declarator is None or declarator.type not in _FUNCTION_DECLARATORS:
        return None
    name = declarator.child_by_field_name("declarator")
    return " ".join(name.text.decode("utf-8", "replace").split()) if name is not None else None


def _compiled_out(node: Node) -> bool:
    """Inside ``#if 0``: never built."""
    current = node.parent
    while current is not None:
        if current.type == "preproc_if":
            condition = current.child_by_field_name("condition")
            if condition is not None and condition.text.strip() in (b"0", b"false"):
                alternative = current.child_by_field_name("alternative")
                return alternative is None or node.start_byte < alternative.start_byte
        current = current.parent
    return False


def _exception_kind(type_text: str) -> str:
    """``std::runtime_error`` → RuntimeError (what Python sees); c10's and others' types keep their name."""
    qualified = re.sub(r"<.*>$", "", type_text.strip()).lstrip(":")
    name = qualified.rsplit("::", 1)[-1]
    if name in _STD_EXCEPTIONS and qualified in (name, f"std::{name}"):
        return _STD_EXCEPTIONS[name]
    if name in _PYBIND_EXCEPTIONS and qualified in (name, f"py::{name}", f"pybind11::{name}"):
        return _PYBIND_EXCEPTIONS[name]
    return "RuntimeError" if qualified in ("c10::Error", "Error") else name


# -- format strings ------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Value:
    """An argument a conversion consumes: its name, and what it prints when the source shows it
    (``WARN("... %d.%d", 12, 0)`` prints ``12.0`` whatever happens)."""

    name: str
    known: tuple[Part, ...] | None = None


def _constant(arg: list[Node]) -> str | None:
    if len(arg) == 1 and arg[0].type == "number_literal" and re.fullmatch(rb"[0-9]+", arg[0].text):
        return arg[0].text.decode()
    literal = _literal(arg)
    if literal is not None and all(isinstance(p, str) for p in literal):
        return "".join(literal)  # type: ignore[arg-type]
    return None


def _value_parts(values: list[_Value], index: int, type_: str, plain: bool) -> list[Part]:
    if index >= len(values):
        return [Placeholder(f"arg{index}", type_)]
    value = values[index]
    known = value.known
    # known text prints as itself where the conversion adds nothing (no width, precision, base)
    if plain and known is not None:
        if type_ == "str" or type_ == "int" and len(known) == 1 and isinstance(known[0], str) and known[0].isdigit():
            return list(known)
    return [Placeholder(value.name, type_)]


def _printf_parts(template: list[str | Placeholder], values: list[_Value]) -> list[Part]:
    """printf conversions as typed placeholders, each named after the argument it consumes;
    ``*`` widths consume one too, ``%%`` is a literal percent sign."""
    out: list[Part] = []
    n = 0
    for piece in template:
        if isinstance(piece, Placeholder):
            out.append(piece)
            continue
        pos = 0
        for m in _PRINTF.finditer(piece):
            out.append(piece[pos:m.start()])
            pos = m.end()
            conv = m.group("conv")
            if conv == "%":
                out.append("%")
                continue
            n += (m.group("width") == "*") + (m.group("prec") == "*")
            plain = not (m.group("flags") or m.group("width") or m.group("prec") is not None) and conv in "dius"
            if conv != "n":  # %n prints nothing
                out.extend(_value_parts(values, n, _PRINTF_TYPE[conv], plain))
            n += 1
        out.append(piece[pos:])
    return out


def _fmt_parts(template: list[str | Placeholder], values: list[_Value]) -> list[Part]:
    """fmt/std::format fields: ``{}`` in turn, ``{0}`` by index, ``{:x}`` typed by its spec."""
    out: list[Part] = []
    auto = 0
    for piece in template:
        if isinstance(piece, Placeholder):
            out.append(piece)
            continue
        pos = 0
        for m in _BRACE.finditer(piece):
            out.append(piece[pos:m.start()])
            pos = m.end()
            if m.group(0) in ("{{", "}}"):
                out.append(m.group(0)[0])
                continue
            field_id = (m.group(1) or "").strip()
            spec = (m.group(2) or "").strip()
            type_ = _FMT_TYPE.get(spec[-1:], "str") if spec else "str"
            if field_id == "" or field_id.isdigit():
                index = auto if field_id == "" else int(field_id)
                auto += field_id == ""
                out.extend(_value_parts(values, index, type_, plain=not spec))
            else:
                out.append(Placeholder(field_id, type_))  # fmt::arg("name", ...)
        out.append(piece[pos:])
    return out
