"""The Debian route: an orig tarball built here from a pinned fixture of upstream-like C++, fetched
through a file:// mirror, checked against its checksum, its kept folders extracted and read."""

from __future__ import annotations

import hashlib
import tarfile
from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the catalogue extra (tree-sitter) is not installed")

from mltriage.catalogue.generate import sources  # noqa: E402
from mltriage.catalogue.generate.build import ProjectInput, sites_of_files, write  # noqa: E402
from mltriage.catalogue.generate.sources import DebianProject, DebianTarball  # noqa: E402
from mltriage.catalogue.match import describe_releases, match_line  # noqa: E402
from mltriage.catalogue.store import Catalogue  # noqa: E402

FIXTURE = Path(__file__).parent / "fixtures" / "debian"
TOP = "pytorch-v9.9.0"  # the tarball's top folder, as upstream release tarballs name it
POOL = "pool/main/p/pytorch/pytorch_9.9.0+dfsg.orig.tar.xz"
ROOTS = ("c10/cuda/", "torch/csrc/distributed/")


def _project(sha256: str) -> DebianProject:
    return DebianProject("libtorch", "pytorch/pytorch", "pytorch", ROOTS,
                         (DebianTarball("9.9.0", POOL, sha256, "sid"),), c_project="pytorch")


@pytest.fixture
def mirror(tmp_path: Path, monkeypatch) -> str:
    """A Debian mirror on disk holding the fixture's tarball; returns the tarball's sha256."""
    tarball = tmp_path / "mirror" / POOL
    tarball.parent.mkdir(parents=True)
    with tarfile.open(tarball, "w:xz") as tar:
        tar.add(FIXTURE / TOP, arcname=TOP)
    monkeypatch.setattr(sources, "DEBIAN", (tmp_path / "mirror").as_uri() + "/")
    monkeypatch.setattr(sources, "CACHE", tmp_path / "cache")
    return hashlib.sha256(tarball.read_bytes()).hexdigest()


def test_fetch_keeps_the_c_sources_of_the_kept_folders(mirror):
    project = _project(mirror)
    assert project.missing() == ["9.9.0"] and project.releases() == []
    assert project.fetch("9.9.0") is None
    assert project.missing() == []
    (release,) = project.releases()
    assert (release.name, release.ref) == ("9.9.0", "v9.9.0")
    # the top folder is left off (paths are the repository's); Python and other folders are not kept
    assert [path for path, _ in project.files(release)] == [
        "c10/cuda/DeviceChecks.cpp", "torch/csrc/distributed/c10d/Watchdog.cpp"]
    assert sorted(p.name for p in (sources.CACHE / "libtorch").iterdir()) == ["9.9.0"]  # no tarball, no .partial
    assert project.fetch("9.9.0") is None  # cached: nothing to do


def test_a_tarball_that_is_not_the_one_debian_lists_is_refused(mirror):
    project = _project("0" * 64)
    error = project.fetch("9.9.0")
    assert error is not None and "sha256" in error and "sid's Sources" in error
    assert not (sources.CACHE / "libtorch").exists() or not any((sources.CACHE / "libtorch").iterdir())


def test_an_unreachable_tarball_is_a_clear_error(mirror, monkeypatch):
    monkeypatch.setattr(sources, "DEBIAN", Path("/nonexistent-mirror").as_uri() + "/")
    error = _project(mirror).fetch("9.9.0")
    assert error is not None and POOL in error
    assert _project(mirror).releases() == []


def test_sites_of_the_extracted_release(mirror):
    project = _project(mirror)
    project.fetch("9.9.0")
    (release,) = project.releases()
    got = sorted((s.path.rsplit("/", 1)[-1], s.function, s.kind, s.format.text)
                 for s in sites_of_files(project.files, project.c_project)(release))
    assert got == sorted([
        # a message appended piece by piece (an append on one path only is a placeholder)
        ("DeviceChecks.cpp", "device_check_failed", "RuntimeError",
         "Device call failed: {deviceErrorName_code} (check the driver log){report}"),
        # a piece set on one path only: the message with it and without it; a number that += adds to,
        # and a string filled with push_back, are values, not their initial text
        ("DeviceChecks.cpp", "PoolAllocator::reserve", "OutOfMemoryError",
         "Pool ran dry. Wanted {format_size_want} with {format_size_free_bytes} free; {format_size_cap} cap set; "
         "{used} bytes used in pool {where}"),
        ("DeviceChecks.cpp", "PoolAllocator::reserve", "OutOfMemoryError",
         "Pool ran dry. Wanted {format_size_want} with {format_size_free_bytes} free; {used} bytes used in pool {where}"),
        # LOG(ERROR) << logPrefix() << a c10::str built before, then appended to on one path
        ("Watchdog.cpp", "Watchdog::checkWork", "error",
         "{logPrefix}Watchdog noticed that work {work} is {work_lateness} ms overdue.{reason}"),
        # one variable assigned in two handlers: each log line prints the value assigned just before it
        ("Watchdog.cpp", "Watchdog::waitFor", "error", "{logPrefix}Future {fut_name} failed: {e_what}"),
        ("Watchdog.cpp", "Watchdog::waitFor", "error", "{logPrefix}Future {fut_name} failed for an unknown reason"),
        # a local lambda that raises with its argument: each call of it is the whole message
        ("Watchdog.cpp", "Watchdog::collect", "RuntimeError", "Watchdog::collect: {msg}"),
        ("Watchdog.cpp", "Watchdog::collect", "RuntimeError", "Watchdog::collect: needs at least one tensor to watch"),
        # a stream filled by the call it is passed to is a value
        ("Watchdog.cpp", "Watchdog::collect", "RuntimeError", "Watchdog::collect got mismatched tensors: {why}"),
    ])


def test_built_catalogue_finds_the_message_and_its_release(mirror, tmp_path):
    project = _project(mirror)
    project.fetch("9.9.0")
    out = tmp_path / "data"
    write([ProjectInput("libtorch", project.repo, project.source, project.releases(),
                        sites_of_files(project.files, project.c_project), sampled=project.sampled)], out, log=lambda s: None)
    catalogue = Catalogue(out)
    line = "[E Watchdog.cpp:13] [PG 0 Rank 2] Watchdog noticed that work WorkNCCL(SeqNum=7) is 912 ms overdue."
    (match,) = match_line(line, catalogue)
    assert match.entry.project == "libtorch" and match.facts["work_lateness"] == "912"
    (site,) = match.entry.sites
    assert (site.path, site.line) == ("torch/csrc/distributed/c10d/Watchdog.cpp", 13)
    # Debian ships some of upstream's releases: the description says which were read
    assert describe_releases(catalogue, "libtorch", match.releases) == \
        "PyTorch C++ 9.9.0 (of PyTorch C++, only 9.9.0 is catalogued)"
    assert catalogue.link(match.entry, site) == \
        "https://github.com/pytorch/pytorch/blob/v9.9.0/torch/csrc/distributed/c10d/Watchdog.cpp#L13"
