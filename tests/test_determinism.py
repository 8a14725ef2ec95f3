"""Output is a function of the input: the same tree lints the same, and the same log gives the same
JSON, on a machine whose every core is busy as on an idle one (no wall-clock budget decides)."""

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from cli_runner import run_cli
from mltriage.library import signatures_dir
from mltriage.lint import lint

ROOT = Path(__file__).resolve().parent.parent
LOGS = [ROOT / "examples" / "torchrun-rank2-indexerror.log", ROOT / "corpus" / "gpu" / "nccl_p2p_disable.log",
        ROOT / "tests" / "lsp" / "data" / "logs"]


@contextlib.contextmanager
def every_core_busy():
    """One spinning process per core (two at least), each in its own process group, all killed on exit."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
             for _ in range(max(2, os.cpu_count() or 2))]
    try:
        yield
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=30)


def _diagnoses() -> list[dict]:
    out = []
    for log in LOGS:
        p = run_cli("diagnose", "--json", str(log))
        assert p.returncode in (0, 1), p.stderr
        doc = json.loads(p.stdout)
        doc["inputs"].pop("sources", None)
        out.append(doc)
    return out


def test_the_same_logs_give_the_same_json_under_load():
    idle = _diagnoses()
    with every_core_busy():
        busy = _diagnoses()
    assert busy == idle


def test_lint_reports_nothing_under_load():
    with every_core_busy():
        report = lint(signatures_dir())
    assert report.errors == []
