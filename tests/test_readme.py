"""The README's set-up commands are the ones CI runs, and the bundled example exists."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _commands():
    return re.findall(r"```sh\n(python3 -m venv[^\n]*)\n```", (ROOT / "README.md").read_text())


def test_readme_has_exactly_two_setup_commands_and_ci_runs_the_second():
    commands = _commands()
    assert len(commands) == 2
    ci = (ROOT / ".ci" / "run").read_text()
    assert commands[1] in ci.splitlines()


def test_readme_example_log_is_bundled():
    example = re.search(r"mltriage diagnose (\S+)", _commands()[0]).group(1)
    assert (ROOT / example).is_file()
