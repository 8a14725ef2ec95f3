"""The README's commands work as written.

The set-up commands are the ones CI runs. Every command of the "Use" block is run for real (the
README's placeholder file names stand for bundled logs); a line added to the block that this file
cannot run fails the test, so the README cannot drift from the CLI unnoticed.
"""

import json
import re
import shlex
from pathlib import Path

import pytest

from cli_runner import run_cli

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
EXAMPLE = "examples/torchrun-rank2-indexerror.log"

# The README's placeholder names, and the bundled logs that stand for them.
PLACEHOLDERS = {
    "train.log": EXAMPLE,
    "logs/": "zoo/cpu/python_exception/logdir",  # a recorded directory of per-rank logs
    "vllm.log": "corpus/gpu/illegal_address_torch.log",  # a log with a P2P-related finding
}
STDIN_PRODUCERS = {"some-command 2>&1": EXAMPLE}  # what is piped into `mltriage diagnose -`


def _commands():
    return re.findall(r"```sh\n(python3 -m venv[^\n]*)\n```", README)


def _use_block() -> list[str]:
    block = re.search(r"## Use\n\n```sh\n(.*?)\n```", README, re.S)
    assert block, "README.md has no ```sh block under '## Use'"
    return [line for line in block.group(1).splitlines() if line.strip()]


def _expand(line: str) -> list[tuple[list[str], str | None]]:
    """One README line -> the (mltriage arguments, stdin file) runs it stands for.

    ``a | b | c`` after a ``mltriage`` command lists alternatives for its last word
    (``signatures list | lint | schema``); a non-mltriage command before ``|`` feeds stdin;
    ``[--opt]`` is optional: the command runs without options and with all of them."""
    command = re.sub(r"\s+#.*$", "", line).strip()
    parts = [p.strip() for p in command.split(" | ")]
    stdin = None
    if not parts[0].startswith("mltriage "):
        assert parts[0] in STDIN_PRODUCERS, f"README pipes {parts[0]!r} into mltriage: add it to STDIN_PRODUCERS"
        stdin = STDIN_PRODUCERS[parts[0]]
        parts = parts[1:]
    head = shlex.split(parts[0])
    variants = [head] + [head[:-1] + shlex.split(alt) for alt in parts[1:]]
    runs = []
    for words in variants:
        assert words[0] == "mltriage", line
        optional = [w[1:-1] for w in words if w.startswith("[") and w.endswith("]")]
        plain = [PLACEHOLDERS.get(w, w) for w in words[1:] if not (w.startswith("[") and w.endswith("]"))]
        runs.append((plain, stdin))
        if optional:
            runs.append((plain + optional, stdin))
    return runs


RUNS = [(line, args, stdin) for line in _use_block() for args, stdin in _expand(line)]


def _check_diagnose(args, r):
    out = r.stdout.decode()
    assert r.returncode == 1, (args, r.stderr)  # every bundled log here is a failed run
    if "--json" in args:
        doc = json.loads(out)
        assert doc["schema"] == "mltriage.diagnosis/v1" and doc["status"] == "failure"
        assert len(doc["ranks"]) >= 2 and doc["findings"]
    elif "--sarif" in args:
        doc = json.loads(out)
        assert doc["version"] == "2.1.0"
        assert doc["runs"][0]["results"], doc
        assert "python-unhandled-exception" in out
    else:
        assert "ROOT CAUSE" in out, out
        if "--probe" in args:
            assert "local probe" in out, out  # attached to the P2P-related finding (NO_GPU here)
        else:
            assert "initiated by rank 2" in out, out


def _check(args, r):
    out, err = r.stdout.decode(), r.stderr.decode()
    assert "Traceback" not in err, err
    cmd = args[0]
    if cmd == "diagnose":
        _check_diagnose(args, r)
    elif cmd == "explain":
        assert r.returncode == 0, err
        assert out.startswith("## ") and f"`{args[1]}`" in out, out[:300]
    elif args[:2] == ["signatures", "list"]:
        assert r.returncode == 0, err
        assert re.search(r"^(\d+) signatures$", err, re.M) and "torch-nccl-watchdog-timeout" in out
    elif args[:2] == ["signatures", "lint"]:
        assert r.returncode == 0, out + err
        assert re.search(r"lint: \d+ signatures, \d+ samples checked .*: ok", err), err
    elif args[:2] == ["signatures", "schema"]:
        assert r.returncode == 0, err
        assert "properties" in json.loads(out)
    elif args[:2] == ["catalogue", "search"]:
        assert r.returncode == 0, err
        assert "ncclCudaGetCapturingGraph" in out and "Present in: NCCL" in out, out[:500]
    elif args[:2] == ["catalogue", "show"]:
        assert r.returncode == 0, err
        assert out.startswith(f"{args[2]} · NCCL") and "Source sites, per release range:" in out, out[:300]
    elif args[:2] == ["catalogue", "list"]:
        assert r.returncode == 0, err
        assert re.search(r"^\d+ entries$", out, re.M) and "Error happened when batch testing" in out, out[-300:]
    elif cmd == "probe":
        assert r.returncode in (0, 1, 3), (r.returncode, err)  # 3: no GPU on this machine
        if "--json" in args:
            assert json.loads(out)["schema"] == "mltriage.probe/v1"
    else:
        pytest.fail(f"README's Use block runs `mltriage {' '.join(args)}`: teach test_readme.py to check it")


def test_use_block_covers_every_command():
    assert {args[0] for _, args, _ in RUNS} >= {"diagnose", "explain", "catalogue", "signatures", "probe"}
    assert any(stdin for _, _, stdin in RUNS), "the README shows no stdin example"


@pytest.mark.parametrize("line, args, stdin", RUNS, ids=[" ".join(a) for _, a, _ in RUNS])
def test_use_block_command_runs(line, args, stdin):
    data = (ROOT / stdin).read_bytes() if stdin else None
    r = run_cli(*args, input=data, cwd=ROOT)
    _check(args, r)


def test_readme_has_exactly_two_setup_commands_and_ci_runs_the_second():
    commands = _commands()
    assert len(commands) == 2
    ci = (ROOT / ".ci" / "run").read_text()
    assert commands[1] in ci.splitlines()


def test_readme_example_log_is_bundled_and_its_exit_status_1_is_explained():
    example = re.search(r"mltriage diagnose (\S+)", _commands()[0]).group(1)
    assert (ROOT / example).is_file()
    r = run_cli("diagnose", example, cwd=ROOT)
    out = r.stdout.decode()
    assert r.returncode == 1 and "ROOT CAUSE" in out
    assert "<command>" not in out, out  # the log shows no launch command: no slot printed for one
    timeline = out.split("Timeline:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert "rank 2" in timeline[0] and "python-unhandled-exception" in timeline[0], timeline  # the initiator's error first
    assert any("torchrun-worker-sigterm" in t for t in timeline[1:]), timeline
    after = README.split(_commands()[0], 1)[1].split("```", 2)[1]
    assert "exit status 1" in after and "failure was found" in after, after


def test_readme_documents_every_exit_code():
    from mltriage import cli

    codes = {cli.EXIT_HEALTHY, cli.EXIT_FAILURE, cli.EXIT_USAGE, 3, cli.EXIT_INTERNAL, 130}
    for code in codes:
        assert f"**{code}**" in README, code
        assert re.search(rf"^- {code}: ", cli.__doc__, re.M), code
