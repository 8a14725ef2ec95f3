"""What the catalogue covers, per project: its coverage table, written from the data.

Every figure comes from the projects' ``releases.json`` (what the generator wrote); only the last
column, what is missing and why, is written here by hand, where a regeneration that adds a release
must change it (``tests/catalogue/test_coverage.py`` fails while a release the generator lists is
absent from the data and not named here, or named here and present). ``mltriage catalogue coverage``
prints the table; ``--readme`` rewrites it in the catalogue README between its markers.
"""

from __future__ import annotations

from pathlib import Path

from mltriage.catalogue.store import Catalogue

ORDER = ("nccl", "deepspeed", "megatron", "accelerate", "vllm", "transformers", "pytorch", "libtorch", "tensorrt-llm")
BEGIN = "<!-- coverage: written by `mltriage catalogue coverage --readme` from the data; do not edit by hand -->"
END = "<!-- end of coverage -->"

# per project: the releases and sources upstream has that the data does not, and why
MISSING = {
    "nccl": "v1.x (no WARN/INFO macros); 2.31.2 and 2.32.3 (on PyPI as `nvidia-nccl-cu12`/`-cu13` wheels, which hold "
            "only `libnccl.so.2`: strings, no file or line; not tagged in the newest snapshot of github.com/NVIDIA/nccl, "
            "fetched 2026-12-02, whose last v2 tag is v2.30.7-1); TRACE sites (compiled out of release builds); "
            "messages built at run time",
    "deepspeed": "the diagnostics its C++/CUDA ops print with `printf`/`std::cerr` (`csrc/` is read for c10's "
                 "`TORCH_CHECK`s and C++ throws only)",
    "megatron": "none newer is known (PyPI's megatron-core stops at 0.16.1); release candidates and `core_r*` "
                "branches (not releases); its few C++/CUDA sources (dataset helpers, fused kernels: "
                "`GitProject.c_roots` reads such files, Megatron-LM's are not regenerated with them yet)",
    "accelerate": "–",
    "vllm": "0.0.1 and 0.1.x (2023's first releases, not read yet); its C++/CUDA kernels (wheels ship them compiled; the "
            "repository, 1.1 GB, is not mirrored here; the sdists hold `csrc/`, the C/C++ extractor has no vLLM "
            "reader yet)",
    "transformers": "3.x and older; `models/*/modular_*.py` (the input of a code generator: the `modeling_*.py` it "
                    "writes is what runs and what tracebacks cite)",
    "pytorch": "1.7 and older; the Python files outside the kept folders (`torch/nn` other than `parallel`, "
               "`torch/_functorch`, `torch/fx`, `torch/export`, ...)",
    "libtorch": "1.8–1.12, 2.0–2.5, 2.7–2.15: no C++ source of them reachable here (wheels hold built libraries: "
                "strings without file, line or function, see below); the C++ outside the kept folders (`torch/csrc/jit`, "
                "`torch/csrc/api`, `c10/util`, ...)",
    "tensorrt-llm": "every release (0.6.1 – 1.2.1 on PyPI): PyPI has only stub sdists (pip finds no wheel of 1.2.1 "
                    "for CPython 3.12 on manylinux x86-64), the real wheels live on NVIDIA's own index, which this "
                    "machine cannot reach, and the repository (2.5 GB) is too large to mirror; curated signatures "
                    "cover it",
}


def _n(value) -> str:
    return f"{value:,}" if isinstance(value, int) else "–"


def rows(catalogue: Catalogue) -> list[list[str]]:
    """One row per project: the figures its data holds, and what is missing."""
    out = []
    for name in ORDER:
        doc = catalogue.projects.get(name)
        if doc is None:
            out.append([name, "0", "–", "–", "–", "–", "–", "–", MISSING[name]])
            continue
        releases = doc["releases"]
        cov = doc.get("coverage", {})
        per_release = list(cov.get("releases", {}).values())
        span = f"{releases[0].name} – {releases[-1].name}" if releases else "–"
        sites = f"{min(per_release):,}–{max(per_release):,}" if per_release else "–"
        out.append([name, _n(len(releases)), span, _source(doc), _n(cov.get("formats")),
                    _n(cov.get("formats_kept")), _n(cov.get("entries")), sites, MISSING.get(name, "–")])
    return out


def _source(doc: dict) -> str:
    """Where the releases came from; a git project's releases with no pinned commit came from PyPI
    (newer than the mirror's last tag)."""
    source = doc.get("source", "–")
    if source.startswith("git tags"):
        untagged = [r.name for r in doc["releases"] if r.commit is None]
        if untagged:
            names = untagged[0] if len(untagged) == 1 else f"{untagged[0]}–{untagged[-1]}"
            source += f"; {names} from PyPI (not tagged in the mirror)"
    return source


def data_bytes(catalogue: Catalogue) -> int:
    return sum(p.stat().st_size for p in catalogue.data.glob("*/*") if p.is_file())


def table(catalogue: Catalogue) -> str:
    """The README's coverage block: the table and the totals under it."""
    head = ["project", "releases", "first – last (by date)", "source", "distinct formats", "formats kept",
            "entries (messages)", "sites per release", "missing, and why"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows(catalogue)]
    covs = [doc.get("coverage", {}) for doc in catalogue.projects.values()]
    entries, kept = sum(c.get("entries", 0) for c in covs), sum(c.get("formats_kept", 0) for c in covs)
    lines += ["", f"{entries:,} entries (one per message text; {kept:,} formats kept) in all; the data is "
                  f"{data_bytes(catalogue) / 1e6:.1f} MB (the files of `server/mltriage/catalogue/data`)."]
    return "\n".join(lines)


def block(catalogue: Catalogue) -> str:
    return f"{BEGIN}\n{table(catalogue)}\n{END}"


def readme_block(text: str) -> str | None:
    """The coverage block a README holds (markers included), if it has one."""
    start, end = text.find(BEGIN), text.find(END)
    return text[start:end + len(END)] if 0 <= start < end else None


def rewrite_readme(path: Path, catalogue: Catalogue) -> bool:
    """Put the table written from the data into the README between its markers; whether it changed."""
    text = path.read_text()
    old = readme_block(text)
    if old is None:
        raise ValueError(f"{path} has no coverage markers ({BEGIN!r} ... {END!r})")
    new = text.replace(old, block(catalogue))
    if new != text:
        path.write_text(new)
    return new != text
