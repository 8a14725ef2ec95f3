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
