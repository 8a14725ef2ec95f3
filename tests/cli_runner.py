"""Run the real `mltriage` entry point as a subprocess (shared by the CLI tests)."""

import os
import subprocess
import sys
from pathlib import Path

import procs

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args, input=None, env=None, cwd=None, timeout=120):
    """Run the real `mltriage` entry point as a subprocess."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = str(ROOT / "server")
    full_env.pop("FORCE_COLOR", None)
    if env:
        full_env.update(env)
    return procs.run(
        [sys.executable, "-m", "mltriage", *args],
        input=input,
        capture_output=True,
        env=full_env,
        cwd=cwd,
        timeout=timeout,
    )
