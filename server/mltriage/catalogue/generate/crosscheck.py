"""Cross-check the catalogue's C++ formats against built binaries: ``python -m
mltriage.catalogue.generate.crosscheck PROJECT WHEEL...``.

For each wheel, the printable strings of its shared libraries are read, and each of the project's
formats counts as found when its longest literal piece is one of them (or part of one). A format
whose literal is absent was not built into that wheel (a CUDA file in a CPU build, MPI, UCC, ROCm),
changed after the releases read, is a join of literals the binary keeps apart (``"Gloo::scatter: "
+ msg`` with ``msg`` from the call), or the extractor got its text wrong; the shares are what the
README reports. Reading a 500 MB library takes about a minute and 2 GB of memory.
"""

from __future__ import annotations

import argparse
import re
import sys
import zipfile
from pathlib import Path

from mltriage.catalogue.formats import text_parts
from mltriage.catalogue.store import Catalogue

MIN_LITERAL = 12  # a shorter literal ("rank ", " failed") is in any binary and proves nothing
_PRINTABLE = re.compile(rb"[\t\n\r\x20-\x7e]{8,}")
_LIBRARY = re.compile(r"(?:^|/)lib[\w.+-]*\.so(?:\.\d+)*$")


def longest_literal(format_text: str) -> str:
    return max((p for p in text_parts(format_text) if isinstance(p, str)), key=len, default="")


def wheel_strings(wheel: Path) -> str:
    """The printable strings (8 characters or more) of every shared library in the wheel, one per line."""
    out: list[str] = []
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            if _LIBRARY.search(info.filename):
                with zf.open(info) as fh:
                    data = fh.read()
                out.extend(m.group(0).decode("ascii") for m in _PRINTABLE.finditer(data))
    return "\n".join(out)


def crosscheck(catalogue: Catalogue, project: str, wheels: list[Path]) -> dict[str, dict[str, tuple[int, int]]]:
    """Per wheel, for all the project's formats and for those present in its newest release:
    (formats whose longest literal is in the wheel's strings, formats checked)."""
    newest = len(catalogue.releases(project)) - 1
    checked = [(lit, any(site.last == newest for site in e.sites)) for e in catalogue.all_entries()
               if e.project == project for lit in [longest_literal(e.format)] if len(lit) >= MIN_LITERAL]
    result = {}
    for wheel in wheels:
        strings = wheel_strings(wheel)
        found = [(lit in strings, in_newest) for lit, in_newest in checked]
        result[wheel.name] = {"all": (sum(f for f, _ in found), len(found)),
                              "newest": (sum(f for f, n in found if n), sum(n for _, n in found))}
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mltriage.catalogue.generate.crosscheck", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("project", help="a catalogue project with C/C++ formats (libtorch, nccl)")
    ap.add_argument("wheels", nargs="+", type=Path)
    args = ap.parse_args(argv)
    missing = [str(w) for w in args.wheels if not w.is_file()]
    if missing:
        ap.error(f"no such wheel: {', '.join(missing)}")
    catalogue = Catalogue()
    releases = catalogue.releases(args.project)
    if not releases:
        ap.error(f"no project {args.project!r} in the catalogue")
    for name, counts in crosscheck(catalogue, args.project, args.wheels).items():
        for subset, label in (("all", "formats"), ("newest", f"formats present in {releases[-1].name}")):
            found, checked = counts[subset]
            share = f"{100 * found / checked:.1f}%" if checked else "-"
            print(f"{name}: {found} of {checked} {label}: longest literal found ({share})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
