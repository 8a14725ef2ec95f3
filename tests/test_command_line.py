"""A fix's flag on a launch command line (mltriage.command_line), and the signatures' flags are real
options of the tools they name."""

from __future__ import annotations

import shlex

import pytest

from mltriage.command_line import apply_edits, flag_edits, invocations, with_flags
from mltriage.library import load_library
from mltriage.model import LaunchFlag

ALLREDUCE = LaunchFlag("vllm serve", "--disable-custom-all-reduce", None, "NCCL does the all-reduce")
NPROC = LaunchFlag("torchrun", "--nproc_per_node", "gpu", "one worker per visible GPU")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # vLLM reads options anywhere: the flag ends the command, before redirections, pipes, `&`
        ("vllm serve m --tensor-parallel-size 2", "vllm serve m --tensor-parallel-size 2 --disable-custom-all-reduce"),
        ("vllm serve m --port 8000 2>&1 | tee log", "vllm serve m --port 8000 --disable-custom-all-reduce 2>&1 | tee log"),
        ("NCCL_P2P_DISABLE=1 /opt/venv/bin/vllm serve m > out.log &", "NCCL_P2P_DISABLE=1 /opt/venv/bin/vllm serve m --disable-custom-all-reduce > out.log &"),
        ("python3 -u -m vllm.entrypoints.openai.api_server --model m; echo done",
         "python3 -u -m vllm.entrypoints.openai.api_server --model m --disable-custom-all-reduce; echo done"),
        ('vllm serve m --chat-template "a | b; c" # serve', 'vllm serve m --chat-template "a | b; c" --disable-custom-all-reduce # serve'),
        # already there, in either spelling
        ("vllm serve m --disable-custom-all-reduce", None),
        ("vllm serve m --disable_custom_all_reduce", None),
        # not a vllm serve invocation
        ("# vllm serve m", None),
        ('echo "vllm serve m"', None),
        ("vllm bench serve", None),
        ("torchrun train.py", None),
    ],
)
def test_switch_on_vllm_serve(line: str, expected: str | None):
    assert with_flags(line, [ALLREDUCE]) == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # torchrun gives every word after the script to the script: its flag goes right after `torchrun`
        ("torchrun --standalone train.py --lr 1e-4", "torchrun --nproc_per_node gpu --standalone train.py --lr 1e-4"),
        # a value is replaced where it stands, in the user's spelling and form
        ("srun torchrun --nnodes 2 --nproc-per-node 8 train.py", "srun torchrun --nnodes 2 --nproc-per-node gpu train.py"),
        ("torchrun --nproc_per_node=4 train.py", "torchrun --nproc_per_node=gpu train.py"),
        ("torchrun --nproc-per-node $(nvidia-smi -L | wc -l) x.py", "torchrun --nproc-per-node gpu x.py"),
        ("python -m torch.distributed.run --nproc_per_node 2 t.py", "python -m torch.distributed.run --nproc_per_node gpu t.py"),
        ("torchrun --nproc-per-node gpu x.py", None),
        ("torchrun --nproc-per-node 'gpu' x.py", None),
    ],
)
def test_valued_flag_on_torchrun(line: str, expected: str | None):
    assert with_flags(line, [NPROC]) == expected


def test_docker_flags_go_before_the_image():
    # every word after the image is the container's command (docker run [OPTIONS] IMAGE [COMMAND] [ARG...])
    network = LaunchFlag("docker run", "--network", "host", "share the host's network namespace")
    line = "docker run --gpus all -it nvcr.io/nvidia/pytorch:24.01-py3 torchrun --nnodes 2 train.py"
    assert with_flags(line, [network]) == "docker run --network host --gpus all -it nvcr.io/nvidia/pytorch:24.01-py3 torchrun --nnodes 2 train.py"
    assert with_flags("python train.py", [network]) is None


def test_sglang_flags_go_at_the_end_of_its_module_command():
    graphs = LaunchFlag("sglang.launch_server", "--disable-cuda-graph", None, "no CUDA graph capture")
    line = "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-R1 --tp 8"
    assert with_flags(line, [graphs]) == line + " --disable-cuda-graph"
    assert with_flags("vllm serve m", [graphs]) is None


def test_script_with_continuation_lines_and_two_invocations():
    script = (
        "#!/bin/bash\n"
        "# vllm serve in a comment is left alone\n"
        "vllm serve a \\\n"
        "  --tensor-parallel-size 2 \\\n"
        "  --port 8000 &\n"
        "vllm serve b --port 8001 --disable-custom-all-reduce &\n"
        "vllm serve c\r\n"
        "wait\n"
    )
    assert len(invocations(script, "vllm serve")) == 3
    edits = flag_edits(script, ALLREDUCE)
    assert len(edits) == 2  # b has it already
    after = apply_edits(script, edits)
    assert "  --port 8000 --disable-custom-all-reduce &\n" in after
    assert "vllm serve c --disable-custom-all-reduce\r\n" in after
    assert after.replace(" --disable-custom-all-reduce", "") == script.replace(" --disable-custom-all-reduce", "")


def test_value_is_quoted_for_the_shell():
    # a `$(` the signature library does not compute itself is text, never run (issue 22)
    flag = LaunchFlag("torchrun", "--rdzv-endpoint", "$(hostname):29500", "x" * 5)
    assert with_flags("torchrun t.py", [flag]) == "torchrun --rdzv-endpoint '$(hostname):29500' t.py"
    spaced = LaunchFlag("vllm serve", "--served-model-name", "my model", "x" * 5)
    new = with_flags("vllm serve m", [spaced])
    assert shlex.split(new) == ["vllm", "serve", "m", "--served-model-name", "my model"]


def test_unterminated_quotes_and_hostile_text_end_gracefully():
    for text in ['vllm serve "m', "vllm serve $(m", "vllm serve \\", "vllm serve m " + "'" * 10_001, "torchrun" * 5000]:
        with_flags(text, [ALLREDUCE, NPROC])  # an answer, not an exception or a hang


@pytest.mark.parametrize("unit", ["vllm serve ", "vllm serve a; ", "vllm serve a\n", "a", "/torchrun", '"vllm serve ', "vllm serve $(", "torchrun --nproc_per_node "])
def test_a_script_of_the_largest_size_read_is_edited_in_linear_time(unit: str):
    # 256 KiB (launch_scripts.MAX_SCRIPT_BYTES) of one repeated piece: a program name among an earlier
    # invocation's words is no new invocation, and no position is rescanned (it was quadratic: minutes, GBs)
    import time

    text = (unit * (256 * 1024 // len(unit) + 1))[: 256 * 1024]
    started = time.perf_counter()
    for flag in (ALLREDUCE, NPROC):
        flag_edits(text, flag)
    assert time.perf_counter() - started < 5  # ~0.1 s here


def test_signature_torchrun_flags_parse_with_torchrun_s_own_parser():
    # the local torch's argparse (torch/distributed/run.py) is the authority on torchrun's options
    run = pytest.importorskip("torch.distributed.run", reason="torchrun's own parser needs torch (pip install -e '.[zoo]')")

    parser = run.get_args_parser()
    flags = [LaunchFlag(**f) for rule in load_library().rules.values() for f in rule.fix_flags if f["command"] == "torchrun"]
    assert flags, "no signature carries a torchrun flag"
    for flag in flags:
        args = parser.parse_args([*shlex.split(flag.argument), "train.py"])
        assert args.training_script == "train.py"
        dest = next(a.dest for a in parser._actions if flag.flag in a.option_strings)
        assert getattr(args, dest) == (flag.value if flag.value is not None else True)


def test_signature_flags_are_where_the_entry_recommends_them():
    # a flag is typed data for a step the entry's own text already gives (never a new recommendation)
    library = load_library()
    with_flags_ = [rule for rule in library.rules.values() if rule.fix_flags]
    assert len(with_flags_) >= 9
    for rule in with_flags_:
        prose = " ".join([rule.fix_summary, *rule.fix_steps, *rule.fix_commands, rule.verify])
        for f in rule.fix_flags:
            spelled = {f["flag"], f["flag"].replace("_", "-")}
            assert any(s in prose for s in spelled), (rule.id, f["flag"])
            assert f["command"] in ("vllm serve", "torchrun", "docker run", "sglang.launch_server"), rule.id
