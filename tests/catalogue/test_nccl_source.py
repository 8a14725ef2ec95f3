"""NCCL's releases and files read from a real git repository built here (tags, dates, blobs)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the catalogue extra (tree-sitter) is not installed")

from mltriage.catalogue.generate.nccl_source import iter_nccl_sites, nccl_files, nccl_releases  # noqa: E402
import procs

WARN_V1 = 'ncclResult_t f(int n) {\n  WARN("Ring %d has no peers left to reach", n);\n  return ncclInternalError;\n}\n'
WARN_V2 = '// moved down a line\n' + WARN_V1


def _git(repo: Path, *args: str, date: str | None = None) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    if date:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = date
    return procs.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def _commit(repo: Path, files: dict[str, str], date: str) -> str:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "release", date=date)
    return _git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "nccl"
    repo.mkdir()
    _git(repo, "init", "-q")
    first = _commit(repo, {"src/ring.cc": WARN_V1, "src/notes.txt": 'WARN("not source %d", 1)',
                           "ext-net/plugin.cc": 'void g() { WARN("outside src/ is not read %d", 2); }'},
                    "2019-06-25T10:00:00+00:00")
    _git(repo, "tag", "v2.4.8-1", first)
    _git(repo, "tag", "v1.3.4-1", first)  # NCCL 1: not a 2.x release
    _git(repo, "tag", "nccl4py-v0.1.1", first)
    second = _commit(repo, {"src/ring.cc": WARN_V2, "src/include/extra.h": '#define X 1\n'},
                     "2021-07-08T10:00:00+00:00")
    _git(repo, "tag", "-a", "-m", "annotated", "v2.10.3-1", second, date="2021-07-09T10:00:00+00:00")
    _git(repo, "tag", "inc_nsteps_v2.16", second)
    return repo / ".git"


def test_releases_are_the_v2_tags_in_date_order(repo):
    releases = nccl_releases(str(repo))
    assert [tag for tag, _, _ in releases] == ["v2.4.8-1", "v2.10.3-1"]  # by date: names sort 2.10 first
    commits = [c for _, c, _ in releases]
    assert all(len(c) == 40 for c in commits) and commits[0] != commits[1]
    # the annotated tag names its commit, dated by the commit
    assert releases[1][2].startswith("2021-07-08")


def test_files_are_the_c_sources_under_src(repo):
    (_, first, _), (_, second, _) = nccl_releases(str(repo))
    assert dict(nccl_files(str(repo), first)) == {"src/ring.cc": WARN_V1}
    assert sorted(path for path, _ in nccl_files(str(repo), second)) == ["src/include/extra.h", "src/ring.cc"]


def test_sites_per_release_follow_the_file(repo):
    got = [(tag, [(s.path, s.line, s.function, s.kind, s.format.text, s.cause) for s in sites])
           for tag, _, _, sites in iter_nccl_sites(str(repo))]
    assert got == [
        ("v2.4.8-1", [("src/ring.cc", 2, "f", "warn", "Ring {n} has no peers left to reach", "ncclInternalError")]),
        ("v2.10.3-1", [("src/ring.cc", 3, "f", "warn", "Ring {n} has no peers left to reach", "ncclInternalError")]),
    ]
