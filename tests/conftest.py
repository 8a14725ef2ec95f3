import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import procs  # noqa: E402  (tests/procs.py, after the path above)


def pytest_collection_modifyitems(config, items):
    """Modules with a test marked slow run first (each module's tests stay together, so a module
    fixture is set up once): under pytest-xdist they start at once beside the quick ones instead of
    holding the run up at its end."""
    slow = {item.nodeid.split("::")[0] for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.nodeid.split("::")[0] not in slow)


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    # Each test session gets its own library/probe cache so tests never depend on ~/.cache.
    cache = tmp_path_factory.getbasetemp() / "mltriage-cache"
    monkeypatch.setenv("MLTRIAGE_CACHE_DIR", str(cache))
    yield


@pytest.fixture(autouse=True)
def _kill_what_the_test_started():
    # set up before the test's own fixtures, so torn down after them: whatever they left goes
    yield
    procs.kill_tracked()


@pytest.fixture(scope="session", autouse=True)
def _no_process_left_behind():
    """The run fails if any process the tests started is alive at its end (an orphaned torchrun
    worker, a server's engine process): as a child subreaper this process adopts every orphan."""
    adopting = procs.become_subreaper()
    yield
    if not adopting:
        return
    left = procs.left_alive()
    if left:
        pytest.fail("processes the tests started were still alive at the end (now killed):\n"
                    + "\n".join(f"  pid {pid}: {command}" for pid, command in left), pytrace=False)
