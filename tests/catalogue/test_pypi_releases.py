"""Releases newer than a git mirror's tags, read from PyPI archives: where they sort, which files they
give, and the content-addressed cache that stores a file unchanged between releases once."""

from __future__ import annotations

import io
import os
import tarfile
import zipfile
from pathlib import Path

import pytest

import procs
from mltriage.catalogue.generate import sources
from mltriage.catalogue.generate.sources import GitProject, PypiRelease

RAISE = 'def f():\n    raise ValueError("the mirror has no tag of this release")\n'


@pytest.fixture
def mirror(tmp_path: Path, monkeypatch) -> Path:
    """A bare mirror with tags v1.0.0 (2024) and v1.1.0 (2025), and an empty source cache."""
    work = tmp_path / "work"
    (work / "src" / "pkg").mkdir(parents=True)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    git = lambda *a, **kw: procs.run(["git", *a], cwd=work, check=True, capture_output=True, env={**env, **kw})  # noqa: E731
    git("init", "-q")
    for version, date in (("1.0.0", "2024-01-01T00:00:00"), ("1.1.0", "2025-01-01T00:00:00")):
        (work / "src" / "pkg" / "core.py").write_text(f"# {version}\n" + RAISE)
        git("add", "-A")
        git("commit", "-qm", version, GIT_COMMITTER_DATE=date, GIT_AUTHOR_DATE=date)
        git("tag", f"v{version}")
    mirrors = tmp_path / "mirrors"
    procs.run(["git", "clone", "-q", "--mirror", str(work), str(mirrors / "o+pkg" / "repo")], check=True)
    monkeypatch.setattr(sources, "MIRRORS", mirrors)
    monkeypatch.setattr(sources, "CACHE", tmp_path / "cache")
    return tmp_path


def _project(*pypi: PypiRelease) -> GitProject:
    return GitProject("pkg", "o/pkg", ("src/pkg",), r"v(\d+\.\d+\.\d+)", pypi=pypi, package="pkg", repo_prefix="src/")


def test_a_pypi_release_sorts_by_its_date_and_gives_its_files_at_repository_paths(mirror):
    project = _project(PypiRelease("1.2.0", "2026-01-01", "wheel"))
    assert project.missing() == ["1.2.0"]
    assert [r.name for r in project.releases()] == ["1.0.0", "1.1.0"]  # not cached: not a release yet
    wheel = io.BytesIO()
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("pkg/core.py", "# 1.2.0\n" + RAISE)
        zf.writestr("pkg-1.2.0.dist-info/METADATA", "Name: pkg\n")
    target = sources.CACHE / "pkg" / "1.2.0"
    with sources._filling(target) as partial:  # what fetch does with the archive pip downloaded
        for rel, data in sources._archive_files(_save(mirror / "pkg-1.2.0-py3-none-any.whl", wheel), "wheel"):
            rel = "src/" + rel
            if rel.endswith(".py") and rel.startswith(("src/pkg",)):
                sources._write_file(partial, rel, data)
    releases = project.releases()
    assert [(r.name, r.ref, r.commit, r.date) for r in releases][-1] == ("1.2.0", "v1.2.0", None, "2026-01-01")
    assert [r.name for r in releases] == ["1.0.0", "1.1.0", "1.2.0"] and project.missing() == []
    assert [(path, text.splitlines()[0]) for path, text in project.files(releases[-1])] == [("src/pkg/core.py", "# 1.2.0")]
    assert [path for path, _ in project.files(releases[0])] == ["src/pkg/core.py"]  # a tag: from git


def test_a_pypi_release_the_mirror_already_tags_is_read_from_the_tag(mirror):
    project = _project(PypiRelease("1.1.0", "2025-01-01", "sdist"))
    (sources.CACHE / "pkg" / "1.1.0" / "src" / "pkg").mkdir(parents=True)
    assert [(r.name, r.commit is not None) for r in project.releases()] == [("1.0.0", True), ("1.1.0", True)]


def test_an_sdists_top_folder_is_left_off(tmp_path):
    sdist = tmp_path / "pkg-1.2.0.tar.gz"
    with tarfile.open(sdist, "w:gz") as tar:
        data = RAISE.encode()
        info = tarfile.TarInfo("pkg-1.2.0/pkg/core.py")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    assert [rel for rel, _ in sources._archive_files(sdist, "sdist")] == ["pkg/core.py"]


def test_a_file_unchanged_between_releases_is_stored_once(tmp_path):
    objects = tmp_path / "objects"
    for version in ("1.0", "1.1"):
        sources._write_file(tmp_path / version, "pkg/core.py", RAISE.encode(), objects)
    sources._write_file(tmp_path / "1.2", "pkg/core.py", b"# changed\n", objects)
    a, b, c = (tmp_path / v / "pkg" / "core.py" for v in ("1.0", "1.1", "1.2"))
    assert a.read_text() == b.read_text() == RAISE and c.read_text() == "# changed\n"
    assert a.stat().st_ino == b.stat().st_ino != c.stat().st_ino
    assert len([p for p in objects.rglob("*") if p.is_file()]) == 2


def _save(path: Path, buffer: io.BytesIO) -> Path:
    path.write_bytes(buffer.getvalue())
    return path


def test_files_a_build_copies_into_the_archive_are_not_read(mirror):
    # DeepSpeed's setup.py copies op_builder/ into deepspeed/ops/op_builder/, a symlink in its tags
    project = GitProject("pkg", "o/pkg", ("src/pkg",), r"v(\d+\.\d+\.\d+)", pypi=(PypiRelease("1.2.0", "2026-01-01", "sdist"),),
                         package="pkg", pypi_exclude=r"^src/pkg/copied/")
    for rel in ("src/pkg/core.py", "src/pkg/copied/builder.py"):
        sources._write_file(sources.CACHE / "pkg" / "1.2.0", rel, RAISE.encode())
    assert [path for path, _ in project.files(project.releases()[-1])] == ["src/pkg/core.py"]


def test_a_git_projects_c_sources_are_read_where_it_names_them(mirror):
    # DeepSpeed's ops: Python under deepspeed/, TORCH_CHECKs in csrc/ (read as c10's); other C++ (tests) is not read
    pytest.importorskip("tree_sitter_cpp", reason="the catalogue extra (tree-sitter) is not installed")
    from mltriage.catalogue.generate.build import sites_of_files

    work = mirror / "work"
    (work / "csrc").mkdir()
    (work / "tests").mkdir()
    check = 'void f(int n) {\n  TORCH_CHECK(n > 0, "the op needs a positive size, got ", n);\n}\n'
    (work / "csrc" / "op.cpp").write_text(check)
    (work / "tests" / "bench.cpp").write_text(check.replace("positive size", "size of its own"))
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_COMMITTER_DATE": "2025-06-01T00:00:00"}
    for args in (("add", "-A"), ("commit", "-qm", "ops"), ("tag", "v1.2.0")):
        procs.run(["git", *args], cwd=work, check=True, capture_output=True, env=env)
    procs.run(["git", f"--git-dir={sources.MIRRORS / 'o+pkg' / 'repo'}", "fetch", "-q", "origin", "+refs/*:refs/*"],
              check=True, capture_output=True)
    project = GitProject("pkg", "o/pkg", ("src/pkg",), r"v(\d+\.\d+\.\d+)", pypi=(PypiRelease("1.3.0", "2026-01-01", "sdist"),),
                         package="pkg", c_roots=("csrc/",), c_project="pytorch")
    for rel in ("csrc/op.cpp", "tests/bench.cpp", "src/pkg/core.py"):  # what an sdist's fetch may have kept before
        sources._write_file(sources.CACHE / "pkg" / "1.3.0", rel, ((work / rel).read_text()).encode())
    assert project.source == "git tags of github.com/o/pkg (and the C/C++/CUDA of `csrc/`)"
    tagged, pypi = project.releases()[-2:]
    for release in (tagged, pypi):
        assert [path for path, _ in project.files(release)] == ["csrc/op.cpp", "src/pkg/core.py"]
        sites = list(sites_of_files(project.files, project.c_project)(release))
        assert [(s.path, s.line, s.kind, s.format.text) for s in sites if s.path.startswith("csrc/")] == [
            ("csrc/op.cpp", 2, "RuntimeError", "the op needs a positive size, got {n}")]
