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


# -- no cycle among the scan's modules, counting every import (module level, TYPE_CHECKING, in a function)

SCAN_MODULES = ("scanner", "prefilter_budget", "matcher", "hit_store", "hits", "rank_groups", "torchrun_reader",
                "findings", "triage")


def _imports(path: Path, modules: set[str]) -> set[str]:
    """Every mltriage module ``path`` names in an import statement, wherever the statement is
    (``from mltriage.engine import hits`` names the module ``hits``, not the package)."""
    import ast

    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{a.name}" for a in node.names]
            found.update(n for n in names if n in modules)
            if any(n not in modules for n in names):
                found.add(node.module)
    return found & modules


def _graph() -> dict[str, set[str]]:
    paths = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        paths[".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)] = path
    return {name: _imports(path, set(paths)) - {name} for name, path in paths.items()}


def _cycles_through(graph: dict[str, set[str]], start: str) -> list[list[str]]:
    """Each shortest import path from ``start`` back to itself (one per first step)."""
    from collections import deque

    cycles = []
    for first in sorted(graph[start]):
        seen, queue = {first: [start, first]}, deque([first])
        while queue:
            at = queue.popleft()
            if at == start:
                cycles.append(seen[at])
                break
            for nxt in sorted(graph[at]):
                if nxt not in seen:
                    seen[nxt] = seen[at] + [nxt]
                    queue.append(nxt)
    return cycles


def test_the_scans_modules_import_each_other_in_one_direction_only():
    """The line loop, the pre-filter budget, the matcher, the hit store, the rank groups and the
    torchrun reader each read alone: no import of one of them (not even for type checking, nor inside
    a function) leads back to it."""
    graph = _graph()
    scan = [f"mltriage.engine.{m}" for m in SCAN_MODULES]
    assert all(m in graph for m in scan), [m for m in scan if m not in graph]
    assert "mltriage.engine.hits" in graph["mltriage.engine.rank_groups"]  # (the graph sees real imports)
    cycles = {m: c for m in scan if (c := _cycles_through(graph, m))}
    assert cycles == {}, {m: " -> ".join(c[0]) for m, c in cycles.items()}
