"""Message sites in Python source, found with ``ast``: raises, asserts, logger calls, warnings.

A message may be a literal, an f-string, ``%`` or ``.format`` formatting, a concatenation of
these, a call's ``%``-style arguments (``logger.error("x %s", y)``), or a name assigned earlier in
the same function (``msg = f"..."; raise ValueError(msg)``). Whatever is not literal text becomes
a placeholder named after the expression that fills it.
"""

from __future__ import annotations

import ast
import re

from mltriage.catalogue.formats import Format, Part, Placeholder, merged
from mltriage.catalogue.generate.sites import SourceSite

# logger.<method> → the level a user sees; *_once variants print the same message once
LOG_LEVELS = {
    "critical": "critical", "fatal": "critical", "error": "error", "exception": "error",
    "warning": "warning", "warn": "warning", "warning_once": "warning", "warn_once": "warning",
    "info": "info", "info_once": "info",
}
# print helpers of the stack that reach users without a logger (rank-0 printers, DeepSpeed's log_dist)
PRINT_HELPERS = {"print_rank_0": "info", "print_rank_last": "info", "log_dist": "info", "print0": "info",
                 "log_single_rank": None, "warn_rank_0": "warning", "print_rank0": "info"}
# Dynamo's graph-break helpers raise torch._dynamo.exc.Unsupported: `unimplemented(msg)` (2.0-2.6), then
# `unimplemented_v2(gb_type=, context=, explanation=, hints=)` (2.7) renamed `unimplemented` (2.9); the
# message is format_graph_break_message's "{gb_type}\n  Explanation: {explanation}\n  Hint: ...". Read in
# torch's own files only (other projects' functions of these names are not Dynamo's).
GRAPH_BREAKS = ("unimplemented", "unimplemented_v2", "unimplemented_with_warning")
# DeepSpeed's op builders warn through their own method: OpBuilder.warning(msg) prints f"{WARNING} {msg}"
# (op_builder/builder.py, "[WARNING] " in yellow): `self.warning(...)` in those files only
BUILDER_WARNINGS = "op_builder/"
_PERCENT = re.compile(r"%(?:\([^)]*\))?[-+ #0]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlLqjzt]*([diouxXeEfFgGcrsa%])")
_PERCENT_TYPE = {"d": "int", "i": "int", "u": "int", "o": "int", "x": "hex", "X": "hex", "c": "char",
                 "e": "float", "E": "float", "f": "float", "F": "float", "g": "float", "G": "float"}
_BRACE = re.compile(r"\{\{|\}\}|\{([^{}!:]*)(?:![rsa])?(?::([^{}]*))?\}")


def _spec_type(spec: str | None) -> str:
    if not spec:
        return "str"
    last = spec[-1:]
    return {"d": "int", "x": "hex", "X": "hex", "f": "float", "e": "float", "g": "float", "%": "float"}.get(last, "str")


def _name_of(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # unparse of odd nodes: the name only labels a capture
        return "value"


class _Message:
    """Turns an expression into format parts, or None when nothing of it is literal."""

    def __init__(self, assigned: dict[str, ast.AST]) -> None:
        self.assigned = assigned  # names bound earlier in the function

    def parts(self, node: ast.AST, depth: int = 0) -> list[Part] | None:
        if depth > 8:
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.JoinedStr):
            out: list[Part] = []
            for value in node.values:
                if isinstance(value, ast.Constant):
                    out.append(str(value.value))
                elif isinstance(value, ast.FormattedValue):
                    spec = None
                    if isinstance(value.format_spec, ast.JoinedStr):
                        spec = "".join(str(v.value) for v in value.format_spec.values if isinstance(v, ast.Constant))
                    out.append(Placeholder(_name_of(value.value), _spec_type(spec)))
            return out
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.parts(node.left, depth + 1), self.parts(node.right, depth + 1)
            if left is None and right is None:
                return None
            return (left or [Placeholder(_name_of(node.left))]) + (right or [Placeholder(_name_of(node.right))])
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            template = self.parts(node.left, depth + 1)
            if template is None or not all(isinstance(p, str) for p in template):
                return None
            args = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
            return percent_parts("".join(template), args)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
            template = self.parts(node.func.value, depth + 1)
            if template is None or not all(isinstance(p, str) for p in template):
                return None
            return brace_parts("".join(template), node.args, node.keywords)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str" and node.args:
            return [Placeholder(_name_of(node.args[0]))]
        if isinstance(node, ast.Name) and node.id in self.assigned and depth < 4:
            return self.parts(self.assigned[node.id], depth + 1)
        return None


def _filled(arg: ast.AST | None, type_: str, fallback: str) -> Part:
    """A constant argument is text every output shows; anything else is a placeholder."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, (str, int, float)) and not isinstance(arg.value, bool):
        return str(arg.value)
    return Placeholder(_name_of(arg) if arg is not None else fallback, type_)


def percent_parts(template: str, args: list[ast.AST]) -> list[Part]:
    out: list[Part] = []
    pos = 0
    n = 0
    for m in _PERCENT.finditer(template):
        out.append(template[pos:m.start()])
        pos = m.end()
        if m.group(1) == "%":
            out.append("%")
            continue
        arg = args[n] if n < len(args) else None
        n += 1
        out.append(_filled(arg, _PERCENT_TYPE.get(m.group(1), "str"), f"arg{n - 1}"))
    out.append(template[pos:])
    return out


def brace_parts(template: str, args: list[ast.AST], keywords: list[ast.keyword]) -> list[Part]:
    named = {k.arg: k.value for k in keywords if k.arg}
    out: list[Part] = []
    pos = 0
    auto = 0
    for m in _BRACE.finditer(template):
        out.append(template[pos:m.start()])
        pos = m.end()
        if m.group(0) in ("{{", "}}"):
            out.append(m.group(0)[0])
            continue
        field = m.group(1) or ""
        if field == "":
            node = args[auto] if auto < len(args) else None
            auto += 1
        elif field.isdigit():
            node = args[int(field)] if int(field) < len(args) else None
        else:
            node = named.get(field.split(".")[0].split("[")[0])
        out.append(_filled(node, _spec_type(m.group(2)), field or "value"))
    out.append(template[pos:])
    return out


def _exception_name(node: ast.AST) -> str | None:
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute):
        return target.attr
    return None


def _is_logger(node: ast.AST) -> bool:
    """``logger.error``, ``self.logger.warning``, ``logging.warning``, ``log.info``, ``_LOGGER.error``."""
    while isinstance(node, ast.Attribute):
        if "log" in node.attr.lower():
            return True
        node = node.value
    return isinstance(node, ast.Name) and "log" in node.id.lower()


class _Visitor(ast.NodeVisitor):
    def __init__(self, path: str) -> None:
        self.path = path
        self.sites: list[SourceSite] = []
        self.scope: list[str] = []
        self.assigned: list[dict[str, ast.AST]] = [{}]
        self.caught: dict[str, str | None] = {}  # `except X as name`: name -> X

    # scopes: the enclosing function, and the names it binds before a raise
    def _scoped(self, node, name: str) -> None:
        self.scope.append(name)
        self.assigned.append({})
        self.generic_visit(node)
        self.assigned.pop()
        self.scope.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._scoped(node, node.name)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._scoped(node, node.name)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        # `except OSError as e: raise RuntimeError(...) from e`: the chained cause is the caught type
        if node.name and node.type is not None:
            caught = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
            names = [n for n in (_exception_name(c) for c in caught) if n]
            self.caught[node.name] = " | ".join(names) if names else None
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            if isinstance(target, ast.Name):
                self.assigned[-1][target.id] = node.value
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.target, ast.Name) and isinstance(node.op, ast.Add):
            previous = self.assigned[-1].get(node.target.id)
            if previous is not None:
                self.assigned[-1][node.target.id] = ast.BinOp(left=previous, op=ast.Add(), right=node.value)
        self.generic_visit(node)

    def _function(self) -> str | None:
        return ".".join(self.scope) or None

    def _add(self, node: ast.AST, kind: str, parts: list[Part] | None, cause: str | None = None) -> None:
        if not parts:
            return
        fmt = Format(merged(parts))
        if not any(isinstance(p, str) and p.strip() for p in fmt.parts):
            return
        self.sites.append(SourceSite(self.path, node.lineno, getattr(node, "end_lineno", node.lineno) or node.lineno,
                                     self._function(), kind, fmt, cause))

    def visit_Raise(self, node: ast.Raise) -> None:
        exc = node.exc
        if isinstance(exc, ast.Call) and exc.args:
            kind = _exception_name(exc)
            if kind:
                cause = None
                if isinstance(node.cause, ast.Name):
                    cause = self.caught.get(node.cause.id, node.cause.id)
                elif node.cause is not None:
                    cause = _exception_name(node.cause)
                self._add(node, kind, _Message(self._names()).parts(exc.args[0]), cause)
        self.generic_visit(node)

    def visit_Assert(self, node: ast.Assert) -> None:
        if node.msg is not None:
            self._add(node, "AssertionError", _Message(self._names()).parts(node.msg))
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if node.args:
            if isinstance(func, ast.Attribute) and func.attr in LOG_LEVELS and _is_logger(func.value):
                self._add(node, LOG_LEVELS[func.attr], self._log_parts(node))
            elif isinstance(func, ast.Attribute) and func.attr == "warn" and isinstance(func.value, ast.Name) \
                    and func.value.id == "warnings":
                category = _exception_name(node.args[1]) if len(node.args) > 1 else None
                for k in node.keywords:
                    if k.arg == "category":
                        category = _exception_name(k.value)
                self._add(node, category or "UserWarning", _Message(self._names()).parts(node.args[0]))
            elif isinstance(func, ast.Attribute) and func.attr == "warning" and isinstance(func.value, ast.Name) \
                    and func.value.id == "self" and self.path.startswith(BUILDER_WARNINGS):
                self._add(node, "warning", _Message(self._names()).parts(node.args[0]))
            elif isinstance(func, ast.Name) and func.id in PRINT_HELPERS:
                level = PRINT_HELPERS[func.id]
                args = node.args
                if level is None and len(args) >= 2:  # Megatron's log_single_rank(logger, level, msg, *args)
                    level, args = _level_name(args[1]), args[2:]
                if level and args:
                    self._add(node, level, _Message(self._names()).parts(args[0]))
        if self.path.startswith("torch/") and _exception_name(node) in GRAPH_BREAKS:
            self._graph_break(node)
        self.generic_visit(node)

    def _graph_break(self, node: ast.Call) -> None:
        """A Dynamo graph break: its gb_type line and its explanation (indented by four spaces past its
        first line, as textwrap.indent does); the hints and the developer context are left out (lists
        built at run time, and text for Dynamo's developers)."""
        # the enclosing functions' names too: 2.9's generic_jump binds `_explanation` around the closure that breaks
        message = _Message({name: value for scope in self.assigned for name, value in scope.items()})
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        cause = _exception_name(keywords["from_exc"]) if "from_exc" in keywords else None
        if cause and isinstance(keywords["from_exc"], ast.Name):
            cause = self.caught.get(cause, cause)
        if "gb_type" not in keywords:  # the old form: unimplemented(msg, from_exc=...)
            if node.args:
                self._add(node, "Unsupported", message.parts(node.args[0]), cause)
            return
        parts = message.parts(keywords["gb_type"])
        explanation = message.parts(keywords["explanation"]) if "explanation" in keywords else None
        if parts and explanation:
            parts = parts + ["\n  Explanation: "] + [p.replace("\n", "\n    ") if isinstance(p, str) else p
                                                     for p in explanation]
        self._add(node, "Unsupported", parts, cause)

    def _log_parts(self, node: ast.Call) -> list[Part] | None:
        message = _Message(self._names())
        first = message.parts(node.args[0])
        if first is None or len(node.args) == 1:
            return first
        if all(isinstance(p, str) for p in first):  # logger's own lazy %-formatting
            return percent_parts("".join(first), node.args[1:])
        return first

    def _names(self) -> dict[str, ast.AST]:
        return self.assigned[-1]


def _level_name(node: ast.AST) -> str | None:
    name = _exception_name(node) if not isinstance(node, ast.Constant) else None
    return LOG_LEVELS.get(name.lower()) if name else None


def extract_python(path: str, text: str) -> list[SourceSite]:
    """Every message site of one Python file; a file that does not parse (Python 2, templates) yields none."""
    try:
        tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    visitor = _Visitor(path)
    try:
        visitor.visit(tree)
    except RecursionError:
        return visitor.sites
    return visitor.sites
