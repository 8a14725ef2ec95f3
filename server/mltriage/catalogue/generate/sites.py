"""What an extractor finds in one source file of one release: the places that raise or log a message."""

from __future__ import annotations

from dataclasses import dataclass

from mltriage.catalogue.formats import Format


@dataclass(frozen=True, slots=True)
class SourceSite:
    """One raise/log call in one file of one release, as the source writes it."""

    path: str  # repository-relative, '/'-separated (``src/misc/shmutils.cc``)
    line: int  # first line of the call (1-based)
    end_line: int  # last line of the call: compilers and loggers may report either end
    function: str | None  # the enclosing function (``Class.method`` where known)
    kind: str  # exception type (``RuntimeError``) or log level (``error``, ``warning``, ``info``)
    format: Format
    cause: str | None = None  # an NCCL result code returned after it, or the chained cause (``from e``)
