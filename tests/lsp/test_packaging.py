"""The extension's Python bundle really runs: built the way `npm run package` builds it, started the
way the extension starts it (`python -I extension/tool/start.py`), on every CPython this machine has
from 3.11 on, each without site-packages of ours. Older Pythons are refused in words."""

from __future__ import annotations

import glob
import os
import shutil
from pathlib import Path

import pytest

from helpers import RawServer
import procs

REPO = Path(__file__).resolve().parents[2]
LOGS = Path(__file__).resolve().parent / "data" / "logs"


def _pyenv_versions() -> Path:
    """Where pyenv keeps its interpreters: $PYENV_ROOT, else what `pyenv root` says, else ~/.pyenv."""
    root = os.environ.get("PYENV_ROOT")
    pyenv = shutil.which("pyenv")
    if not root and pyenv:
        out = procs.run([pyenv, "root"], capture_output=True, text=True)
        root = out.stdout.strip() if out.returncode == 0 else None
    return Path(root or Path.home() / ".pyenv") / "versions"


PYENV_VERSIONS = _pyenv_versions()


def pythons(low: tuple[int, int], high: tuple[int, int]) -> list[str]:
    """One interpreter per version in [low, high) among those installed side by side (pyenv, or
    python3.X on PATH)."""
    found = {}
    on_path = [shutil.which(f"python3.{minor}") or "" for minor in range(0, 30)]
    for candidate in sorted(glob.glob(str(PYENV_VERSIONS / "3.*" / "bin" / "python3"))) + on_path:
        if not candidate or not os.access(candidate, os.X_OK):
            continue
        out = procs.run([candidate, "-I", "-c", "import sys; print(sys.version_info[0], sys.version_info[1])"],
                             capture_output=True, text=True)
        if out.returncode == 0:
            version = tuple(map(int, out.stdout.split()))
            if low <= version < high:
                found.setdefault(version, candidate)
    return [found[v] for v in sorted(found)]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("ext")
    (root / "tool").mkdir()
    shutil.copy(REPO / "extension" / "tool" / "start.py", root / "tool" / "start.py")
    env = dict(os.environ, MLTRIAGE_BUNDLE_OUT=str(root / "bundled"))
    procs.run(["bash", str(REPO / "extension" / "scripts" / "bundle-python.sh")], check=True, env=env, capture_output=True)
    return root


def clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "MLTRIAGE"))}
    env["PATH"] = "/usr/bin:/bin"
    return env


SUPPORTED = pythons((3, 11), (4, 0))


@pytest.mark.parametrize("python", SUPPORTED, ids=[Path(p).parts[-3] if Path(p).is_relative_to(PYENV_VERSIONS) else p for p in SUPPORTED])
async def test_bundle_serves_on(python: str, bundle: Path, tmp_path: Path):
    env = clean_env() | {"MLTRIAGE_CACHE_DIR": str(tmp_path / "cache")}
    server = await RawServer.start(python, "-I", str(bundle / "tool" / "start.py"), env=env)
    try:
        answer = await server.initialize()
        assert answer["result"]["serverInfo"]["name"] == "mltriage"
        log = tmp_path / "run.log"
        shutil.copy(LOGS / "torchrun_python_exception.log", log)
        diagnostics = await server.diagnostics_for(log)
        assert any(d["severity"] == 1 for d in diagnostics)
        hover = await server.request("textDocument/hover", {"textDocument": {"uri": log.as_uri()}, "position": diagnostics[0]["range"]["start"]})
        assert diagnostics[0]["code"] in hover["result"]["contents"]["value"]
        # the compiled modules came from the bundle, not from anything installed for this Python
        probe = procs.run(
            [python, "-I", "-c", f"import sys; sys.path[:0] = [{str(bundle / 'bundled' / 'native')!r} + "
             f"f'/cp{{sys.version_info[0]}}{{sys.version_info[1]}}-linux-x86_64', {str(bundle / 'bundled' / 'libs')!r}]; "
             "import regex, pydantic_core, hyperscan; print(regex.__file__, pydantic_core.__file__)"],
            capture_output=True, text=True, env=env)
        assert probe.returncode == 0 and str(bundle) in probe.stdout, probe.stderr
        assert await server.stop() == 0
    finally:
        if server.process.returncode is None:
            server.process.kill()


def test_at_least_two_supported_pythons_were_tried():
    assert len(SUPPORTED) >= 2, SUPPORTED


@pytest.mark.parametrize("python", pythons((3, 0), (3, 11))[-1:] or ["missing"])
def test_old_python_is_refused_in_words(python: str, bundle: Path):
    if python == "missing":
        pytest.skip("no Python older than 3.11 on this machine")
    result = procs.run([python, "-I", str(bundle / "tool" / "start.py")], capture_output=True, text=True, env=clean_env(), timeout=60)
    assert result.returncode == 3
    assert "Python 3.11 or newer is needed" in result.stderr
    assert "Traceback" not in result.stderr
