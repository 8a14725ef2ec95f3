"""What the server keeps of a document's diagnosis for its hovers: small, and loaded where it is read.

A diagnosis of a 10 MB log can hold 20,000 findings. Made objects again in the server, they cost
0.5 s of unpickling there, and the garbage collector's full passes over them held the event loop
70-130 ms at a time. Kept instead: the diagnosis without its lists (`summary`), a flat array of
where each finding is, and the findings pickled a few at a time (bytes, which the collector never
visits); a hover loads the one chunk that holds its finding. The worker builds it (`keepable`).
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from mltriage.lsp.convert import Span, verdict_root
from mltriage.model import Diagnosis, Finding

CHUNK = 32  # findings per pickle: ~1 ms to load
_PLACE = 6  # per finding: line, first line, last line (the document's, 1-based), span row, start, end


def keepable(diagnosis: Diagnosis, spans: list[Span]) -> dict[str, Any]:
    """In the worker: the payload entries a `Result` is made from."""
    summary = copy.copy(diagnosis)
    for f in dataclasses.fields(Diagnosis):
        if isinstance(getattr(summary, f.name), list):
            setattr(summary, f.name, [])
    places = array("q")
    for finding, span in zip(diagnosis.findings, spans, strict=True):
        places.extend((finding.line, finding.lines[0], finding.lines[1], *span))
    findings = diagnosis.findings
    chunks = [pickle.dumps(findings[i:i + CHUNK], protocol=5) for i in range(0, len(findings), CHUNK)]
    return {"summary": summary, "root": verdict_root(diagnosis), "places": places.tobytes(), "findings": chunks}


@dataclass
class Result:
    """What the last finished run found for one document."""

    version: int | None
    summary: Diagnosis  # the diagnosis without its findings, ranks and other lists
    root: int | None = None  # the verdict's root cause (`convert.verdict_root`): the summary has no findings to say
    places: array = field(default_factory=lambda: array("q"))
    chunks: list[bytes] = field(default_factory=list)
    _loaded: tuple[int, list[Finding]] | None = field(default=None, repr=False)

    @classmethod
    def from_payload(cls, version: int | None, payload: dict[str, Any]) -> Result:
        places = array("q")
        places.frombytes(payload["places"])
        return cls(version, payload["summary"], payload["root"], places, payload["findings"])

    def __len__(self) -> int:
        return len(self.places) // _PLACE

    def placed(self) -> Iterator[tuple[int, int, int, int, Span]]:
        """(index, line, first, last, span) of each finding, without loading any."""
        p = self.places
        for i in range(len(self)):
            at = i * _PLACE
            yield i, p[at], p[at + 1], p[at + 2], (p[at + 3], p[at + 4], p[at + 5])

    def finding(self, index: int) -> Finding:
        chunk = index // CHUNK
        if self._loaded is None or self._loaded[0] != chunk:  # hovers come back to the same place
            self._loaded = (chunk, pickle.loads(self.chunks[chunk]))
        return self._loaded[1][index % CHUNK]
