"""Module-level regexes compiled on first use.

The diagnosis path defines ~150 patterns at module level and a short log uses a handful of them:
compiling them all at import cost more than diagnosing a 9-line log. ``lazy(re.compile, source,
flags)`` stands for ``re.compile(source, flags)`` (any compile function: ``regex.compile`` too)
and compiles on the first use of a method or attribute. From then on its methods are the
compiled pattern's own bound methods (slots, no indirection), so a hot loop pays nothing.
``.pattern`` is the source from the start; ``.compiled`` is the compiled pattern (for code that
needs the real object, e.g. an ``isinstance`` check).
"""

from __future__ import annotations

from typing import Any, Callable

_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split")


class LazyPattern:
    __slots__ = ("pattern", "_flags", "_compile", "_compiled", *_METHODS)

    def __init__(self, compile: Callable[..., Any], pattern: Any, flags: int = 0) -> None:  # noqa: A002 - re's name
        self.pattern = pattern
        self._flags = flags
        self._compile = compile

    @property
    def compiled(self) -> Any:
        try:
            return object.__getattribute__(self, "_compiled")
        except AttributeError:
            pass
        compiled = self._compile(self.pattern, self._flags)
        for name in _METHODS:
            if hasattr(compiled, name):
                setattr(self, name, getattr(compiled, name))
        self._compiled = compiled
        return compiled

    def __getattr__(self, name: str) -> Any:  # a method before the first compile, or any other attribute (flags, groups...)
        return getattr(self.compiled, name)

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r})"


def lazy(compile: Callable[..., Any], pattern: Any, flags: int = 0) -> Any:  # noqa: A002 - re's name
    """``compile(pattern, flags)``, done on first use (a function, so that a module's namespace holds
    no pattern class that a scan of its patterns would take for one)."""
    return LazyPattern(compile, pattern, flags)
