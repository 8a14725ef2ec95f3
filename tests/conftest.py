import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    # Each test session gets its own library/probe cache so tests never depend on ~/.cache.
    cache = tmp_path_factory.getbasetemp() / "mltriage-cache"
    monkeypatch.setenv("MLTRIAGE_CACHE_DIR", str(cache))
    yield


def run_cli(*args, input=None, env=None, cwd=None, timeout=120):
    """Run the real `mltriage` entry point as a subprocess."""
    import subprocess

    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = str(ROOT / "server")
    full_env.pop("FORCE_COLOR", None)
    if env:
        full_env.update(env)
    return subprocess.run(
        [sys.executable, "-m", "mltriage", *args],
        input=input,
        capture_output=True,
        env=full_env,
        cwd=cwd,
        timeout=timeout,
    )
