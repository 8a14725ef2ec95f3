"""Every module of the package imports first in a fresh interpreter: no hidden import cycle makes
one stage importable only after another has been loaded."""

import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import procs

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "server" / "mltriage"


def _modules() -> list[str]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        if "catalogue" in parts and "generate" in parts:
            continue  # the catalogue's build tooling needs its optional extraction dependencies
        if rel.name == "__main__":
            continue  # running it is the CLI itself
        out.append(".".join(parts))
    return out


def _import_alone(module: str) -> tuple[str, int, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "server"))
    p = procs.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True, env=env, timeout=120)
    return module, p.returncode, p.stderr[-600:]


def test_every_module_imports_first_in_a_fresh_interpreter():
    modules = _modules()
    assert "mltriage.symptoms.vocabulary" in modules and "mltriage.run_model.build" in modules
    with ThreadPoolExecutor(2) as pool:
        failed = [(m, err) for m, rc, err in pool.map(_import_alone, modules) if rc != 0]
    assert failed == [], failed[:3]
