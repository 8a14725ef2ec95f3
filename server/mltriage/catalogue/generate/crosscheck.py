"""Cross-check the catalogue's C++ formats against built binaries: ``python -m
mltriage.catalogue.generate.crosscheck PROJECT WHEEL...``.

For each wheel, the printable strings of its shared libraries are read, and each of the project's
formats counts as found when its longest literal piece is one of them (or part of one: the compiler
joins adjacent literals). A format whose literal is absent was either not built into that wheel
(a CUDA-only file in a CPU build, a backend left out) or changed after the releases read, or the
extractor got its text wrong; the found share is what the README reports.
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


def crosscheck(catalogue: Catalogue, project: str, wheels: list[Path]) -> dict[str, tuple[int, int]]:
    """Per wheel: (formats whose longest literal is in its strings, formats checked)."""
    literals = sorted({lit for e in catalogue.all_entries() if e.project == project
                       for lit in [longest_literal(e.format)] if len(lit) >= MIN_LITERAL})
    result = {}
    for wheel in wheels:
        strings = wheel_strings(wheel)
        result[wheel.name] = (sum(lit in strings for lit in literals), len(literals))
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
    for name, (found, checked) in crosscheck(Catalogue(), args.project, args.wheels).items():
        share = f"{100 * found / checked:.1f}%" if checked else "-"
        print(f"{name}: {found} of {checked} formats' longest literal found ({share})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
