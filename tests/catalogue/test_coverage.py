"""The catalogue README's coverage table is the data's: written from each project's releases.json,
and its 'missing' column names exactly the listed releases the data lacks."""

from __future__ import annotations

import re
import shutil

import pytest

from cli_runner import ROOT, run_cli
from mltriage.catalogue import coverage
from mltriage.catalogue.generate.projects import C_PROJECTS, PYTHON_PROJECTS
from mltriage.catalogue.store import default_catalogue

CATALOGUE = default_catalogue()
README = ROOT / "server" / "mltriage" / "catalogue" / "README.md"
pytestmark = pytest.mark.skipif(not CATALOGUE.available, reason="catalogue data not generated")


def test_the_readme_table_is_the_one_written_from_the_data():
    shown = coverage.readme_block(README.read_text())
    assert shown is not None, "the README has no coverage markers"
    assert shown == coverage.block(CATALOGUE), "run `mltriage catalogue coverage --readme` after regenerating"


def test_every_project_in_the_data_has_a_row_with_its_own_figures():
    assert set(CATALOGUE.projects) <= set(coverage.ORDER)
    by_name = {row[0]: row for row in coverage.rows(CATALOGUE)}
    for name, doc in CATALOGUE.projects.items():
        row = by_name[name]
        assert row[1] == f"{len(doc['releases']):,}"
        assert row[2] == f"{doc['releases'][0].name} – {doc['releases'][-1].name}"
        assert row[6] == f"{doc['coverage']['entries']:,}"
    assert by_name["tensorrt-llm"][1] == "0"  # no data: the row says so, and why


def _listed(project) -> tuple[str, ...]:
    """The releases the generator is told to read beyond a mirror's tags (wheels, sdists, tarballs)."""
    if hasattr(project, "versions"):
        return tuple(project.versions)
    return tuple(p.version for p in getattr(project, "pypi", ()))


def _named(version: str, text: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(version)}(?![\w]|\.\d)", text) is not None


@pytest.mark.parametrize("name", sorted({**PYTHON_PROJECTS, **C_PROJECTS}))
def test_the_missing_column_names_exactly_the_listed_releases_the_data_lacks(name):
    project = {**PYTHON_PROJECTS, **C_PROJECTS}[name]
    present = {r.name for r in CATALOGUE.releases(name)}
    note = coverage.MISSING[name]
    for version in _listed(project):
        if version in present:
            assert not _named(version, note), f"{name} {version} is in the data but the table says it is missing"
        else:
            assert _named(version, note), f"{name} {version} is listed in projects.py, absent from the data, " \
                                          "and the table does not say why"


def test_the_coverage_command_rewrites_a_stale_readme(tmp_path):
    stale = tmp_path / "README.md"
    text = README.read_text()
    block = coverage.readme_block(text)
    stale.write_text(text.replace(block, f"{coverage.BEGIN}\n| nccl | 1 | old |\n{coverage.END}"))
    done = run_cli("catalogue", "coverage", "--readme", str(stale))
    assert done.returncode == 0 and b"rewritten" in done.stdout
    assert coverage.readme_block(stale.read_text()) == coverage.block(CATALOGUE)
    again = run_cli("catalogue", "coverage", "--readme", str(stale))
    assert again.returncode == 0 and b"already up to date" in again.stdout


def test_the_coverage_command_prints_the_table_and_refuses_a_readme_without_markers(tmp_path):
    printed = run_cli("catalogue", "coverage")
    assert printed.returncode == 0 and printed.stdout.decode().strip() == coverage.table(CATALOGUE)
    plain = tmp_path / "README.md"
    shutil.copy(ROOT / "README.md", plain)
    done = run_cli("catalogue", "coverage", "--readme", str(plain))
    assert done.returncode == 2 and b"no coverage markers" in done.stderr and b"Traceback" not in done.stderr
