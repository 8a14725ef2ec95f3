"""The export lines and flags we suggest are safe to paste into a shell (issue 22, item 8).

A value is literal unless the signature library itself computes it with `$(...)`: a `$(`, a
backtick or a quote that came from a log does nothing. A name that is not a variable's is refused.
Each line is run by a real bash.
"""

from __future__ import annotations

import shutil

import pytest

import procs
from mltriage.library import load_library
from mltriage.model import Fix, LaunchFlag, export_line

BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None, reason="no bash")

HOSTILE = [
    "^mlx5_0$(touch {canary})",
    "eth0`touch {canary}`",
    "a'; touch {canary}; echo '",
    'a"; touch {canary}; echo "',
    "$(touch {canary})",
    "x\\$(touch {canary})",
    "${{IFS}}$(touch {canary})",
    "a\ntouch {canary}",
]


def _bash(script: str, tmp_path) -> str:
    result = procs.run([BASH, "--noprofile", "--norc", "-c", script], capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("template", HOSTILE)
def test_a_hostile_value_is_exported_literally(tmp_path, template):
    canary = tmp_path / "pwned"
    value = template.format(canary=canary)
    line = export_line("NCCL_IB_HCA", value)
    out = _bash(f'{line}\nprintf %s "$NCCL_IB_HCA"', tmp_path)
    assert not canary.exists(), line
    assert out == value


@pytest.mark.parametrize("template", HOSTILE)
def test_a_hostile_flag_value_is_passed_literally(tmp_path, template):
    canary = tmp_path / "pwned"
    value = template.format(canary=canary)
    flag = LaunchFlag("vllm serve", "--served-model-name", value, "names the model")
    out = _bash(f"printf '%s\\n' {flag.argument}", tmp_path)
    assert not canary.exists(), flag.argument
    assert out == f"--served-model-name\n{value}\n"


@pytest.mark.parametrize("name", ["A;B", "PATH=/tmp:$PATH", "1ABC", "", "A B", "$(id)", "HF-TOKEN", "X\n"])
def test_a_name_that_is_no_variable_s_is_refused(name):
    with pytest.raises(ValueError, match="not an environment variable name"):
        export_line(name, "1")
    with pytest.raises(ValueError):
        Fix(env={name: "1"}).exports()


def test_the_library_s_computed_values_still_run(tmp_path):
    """What a signature computes (`NCCL_SOCKET_IFNAME=$(ip route ...)`) stays a command substitution:
    every such line parses in bash, and the free-port one (python3 only) runs and yields a port."""
    computed = load_library().computed_values
    assert len(computed) >= 3
    for value in computed:
        line = export_line("X", value)
        assert line == f'export X="{value}"'
        procs.run([BASH, "-n", "-c", line], check=True, timeout=30)
    if shutil.which("python3") is None:
        pytest.skip("no python3 to run the free-port substitution")
    free_port = next(v for v in computed if "getsockname" in v)
    out = _bash(f'{export_line("MASTER_PORT", free_port)}\nprintf %s "$MASTER_PORT"', tmp_path)
    assert out.isdigit() and 0 < int(out) < 65536, out


def test_a_fact_shaped_like_a_computed_value_is_still_literal(tmp_path):
    """Only the library's own values run: a log fact that merely starts with `$(` is text."""
    canary = tmp_path / "pwned"
    computed = sorted(load_library().computed_values)[0]
    value = computed + f"$(touch {canary})"
    _bash(export_line("X", value), tmp_path)
    assert not canary.exists()
