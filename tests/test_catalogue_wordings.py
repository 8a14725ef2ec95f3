"""A cause knows its message in every release's words: the catalogue holds each NCCL release's format
of it, and each of those, filled with values of the kind NCCL prints, is diagnosed as that cause.

The catalogue is extracted from NCCL's sources at every tag (src/**: WARN sites with their formats), so
this test reads the wordings from upstream rather than from the signature's own samples: a release
that reworded a message and a pattern that only knows one wording fail here.
"""

import re

import pytest

from mltriage.catalogue.formats import fill_text
from mltriage.catalogue.store import default_catalogue
from mltriage.engine.diagnose import diagnose_text
from mltriage.library import load_library

# (the cause, what the message's format holds in every release that has it)
FAMILIES = [
    ("nccl-peer-size-mismatch", r"^NET/Socket : (?:peer \{\w+\} )?message truncated : receiving "),
    ("nccl-peer-size-mismatch", r"^NET/IB : .*collective mismatch error"),
    ("nccl-peer-size-mismatch", r"^NET/IB : req .* posted incorrect receive info"),
    ("nccl-bootstrap-ranks-disagree", r"^Bootstrap Root : (?:mismatch in rank count|mismatch in info from procs|rank \{\w+\} of \{\w+\} ranks has already checked in)"),
    ("nccl-bootstrap-ranks-disagree", r"^Message truncated : received "),
    ("nccl-socket-connection-closed", r"Call to recv from \{\w+\} failed : "),
]

# What NCCL prints in each placeholder, by the placeholder's name (the catalogue's names come from the
# format's arguments: ncclSocketToString(&addr, line) -> ncclSocketToString_addr_line)
_VALUES = [
    (re.compile(r"(?i)addr_line|sockStr|remoteAddr"), "10.20.1.33<53061>"),
    (re.compile(r"(?i)strerror"), "Connection reset by peer"),
]


def _value(name: str) -> str:
    return next((value for pattern, value in _VALUES if pattern.search(name)), "4096")


def _wordings():
    catalogue = default_catalogue()  # shipped with the package: a missing one fails the family test
    found = []
    for entry in catalogue.all_entries("nccl"):
        for cause, shape in FAMILIES:
            if entry.kind == "warn" and re.search(shape, entry.format):
                site = max(entry.sites, key=lambda s: s.last)
                found.append(pytest.param(cause, entry, site, id=f"{cause}:{entry.id}"))
    return found


WORDINGS = _wordings()


def test_every_family_has_wordings_in_several_releases():
    catalogue = default_catalogue()
    releases = catalogue.releases("nccl")
    for cause, shape in FAMILIES:
        spans = [(s.first, s.last) for _, entry, s in (p.values for p in WORDINGS) if re.search(shape, entry.format)]
        assert spans, f"no catalogue entry has the shape {shape!r}"
        first, last = min(a for a, _ in spans), max(b for _, b in spans)
        assert last > first, f"{shape!r} is one release's wording only ({releases[first].name})"


@pytest.mark.parametrize("cause, entry, site", WORDINGS)
def test_each_release_wording_is_its_cause(cause, entry, site):
    releases = default_catalogue().releases("nccl")
    text = fill_text(entry.format, _value).split("\n")[0]
    line = f"node-b:20933:21087 [0] {site.path.removeprefix('src/')}:{site.line} NCCL WARN {text}\n"
    diagnosis = diagnose_text(line, library=load_library())
    top = diagnosis.findings[0].signature if diagnosis.findings else None
    assert top == cause, (f"NCCL {releases[site.first].name}-{releases[site.last].name} {site.path}:{site.line}: "
                          f"{line!r} is diagnosed as {top}")
