"""The test suite's own rules: nothing it starts outlives it, and it runs without the optional extras."""

from __future__ import annotations

import ast
import os
import shutil
import sys
from pathlib import Path

import pytest

import procs

TESTS = Path(__file__).resolve().parent
OPTIONAL = ("torch", "tree_sitter", "tree_sitter_cpp", "tqdm")  # the zoo and catalogue extras


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="orphans are adopted only on Linux (PR_SET_CHILD_SUBREAPER)")
def test_a_run_that_leaves_a_process_behind_fails_and_the_process_is_killed(tmp_path):
    """The conftest's session check, on a run of one test that starts a process in a session of its
    own and returns without stopping it (what the live zoo's hanging rank did)."""
    shutil.copy(TESTS / "conftest.py", tmp_path / "conftest.py")
    shutil.copy(TESTS / "procs.py", tmp_path / "procs.py")
    marker = f"mltriage-leak-probe-{os.getpid()}"
    (tmp_path / "test_leak.py").write_text(
        "import subprocess, sys\n"
        "def test_leaks():\n"
        f"    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', {marker!r}], start_new_session=True)\n"
    )
    # no third-party plugin is needed for this run (loading them all is most of its cost on a busy machine)
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    run = procs.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)], cwd=tmp_path,
                    env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "still alive at the end" in run.stdout and marker in run.stdout, run.stdout
    assert "1 passed" in run.stdout  # the test itself passed: the session check failed the run
    assert not [pid for pid in procs.descendants(os.getpid()) if marker in procs.command_of(pid)]


def _unguarded_imports(tree: ast.Module) -> list[tuple[int, str]]:
    """Imports of an optional extra not preceded by ``pytest.importorskip`` of it in the same function
    or at module level (which covers the whole file)."""
    found = []

    def visit(statements, skipped: set[str]) -> set[str]:
        skipped = set(skipped)
        for statement in statements:
            for node in ast.walk(statement):
                if (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "importorskip" and node.args
                        and isinstance(node.args[0], ast.Constant)):
                    skipped.add(str(node.args[0].value).split(".")[0])
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
                found.extend((node.lineno, n) for n in names if n.split(".")[0] in OPTIONAL and n.split(".")[0] not in skipped)
        return skipped

    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    at_module = visit([n for n in tree.body if not isinstance(n, (*functions, ast.ClassDef))], set())
    for node in ast.walk(tree):
        if isinstance(node, functions):
            visit(node.body, at_module)
    return sorted(set(found))


def _in_every_test_file(check, skip: tuple[str, ...] = ()) -> dict[str, list[tuple[int, str]]]:
    """What ``check`` finds in each file of tests/ (by its path there), files named in ``skip`` aside."""
    found = {}
    for path in sorted(TESTS.rglob("*.py")):
        if path.name not in skip and (hits := check(ast.parse(path.read_text(), str(path)))):
            found[str(path.relative_to(TESTS))] = hits
    return found


def test_no_test_imports_an_optional_extra_without_importorskip():
    """`pip install -e '.[test]'` alone runs the suite: a test that needs torch or tree-sitter skips."""
    unguarded = _in_every_test_file(_unguarded_imports)
    assert not unguarded, unguarded


def test_the_import_check_sees_an_unguarded_import():
    bad = ast.parse("def test_x():\n    from torch.distributed.run import get_args_parser\n")
    good = ast.parse("def test_x():\n    run = pytest.importorskip('torch.distributed.run')\n    from torch.distributed.run import x\n")
    assert _unguarded_imports(bad) == [(2, "torch.distributed.run")]
    assert _unguarded_imports(good) == []


# Every way a test can start a process, other than through tests/procs.py (which starts each in a
# session of its own and kills that whole group on every exit path: returned, timed out, failed)
_STARTERS = {("subprocess", n) for n in ("run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput")}
_STARTERS |= {("asyncio", "create_subprocess_exec"), ("asyncio", "create_subprocess_shell")}
_STARTERS |= {("os", n) for n in ("system", "popen", "fork", "forkpty", "posix_spawn", "posix_spawnp", "spawnv", "spawnl")}


def _direct_starts(tree: ast.Module) -> list[tuple[int, str]]:
    """Calls that start a process without procs (``subprocess.run(...)``, ``from subprocess import Popen``)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
            if (node.func.value.id, node.func.attr) in _STARTERS:
                found.append((node.lineno, f"{node.func.value.id}.{node.func.attr}"))
        if isinstance(node, ast.ImportFrom) and node.module in ("subprocess", "asyncio", "os"):
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names if (node.module, a.name) in _STARTERS]
    return sorted(found)


def test_every_process_a_test_starts_goes_through_procs():
    """Issue 22: a live zoo test left a hanging rank running for half an hour. procs.run/popen/start
    put each process in its own group and kill the group however the test ends; a direct
    subprocess call kills at most the one process it started (a torchrun's workers live on)."""
    direct = _in_every_test_file(_direct_starts, skip=("procs.py",))
    assert not direct, direct


def test_the_process_check_sees_a_direct_start():
    bad = ast.parse("import subprocess\nfrom os import system\ndef test_x():\n    subprocess.run(['true'], timeout=5)\n")
    good = ast.parse("import procs, subprocess\ndef test_x():\n    procs.run(['true'], stdout=subprocess.PIPE)\n"
                     "CHILD = 'subprocess.Popen([sys.executable])'  # a script a test hands to a child\n")
    assert _direct_starts(bad) == [(2, "os.system"), (4, "subprocess.run")]
    assert _direct_starts(good) == []
