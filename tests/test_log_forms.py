"""The same failure logged through a container runtime or pasted as an indented block gives the same
answer: the forms come from the tools that add them, the logs are real recordings (corpus/)."""

import re
from pathlib import Path

import pytest

from mltriage.engine import diagnose_text

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
LOGS = ["gpu/nccl_warn_chain_ifname.log", "cpu/tcpstore_addr_in_use.log", "cpu/ddp_detail_segv_torchrun.log", "cpu/timeout_rank0_eval.log",
        "cpu/dataloader_worker_sigkill.log", "gpu/cuda_oom.log", "gpu/nccl_socket_ifname.log", "gpu/illegal_address_torch.log"]


def _each(log: str, prefix: str) -> str:
    return "".join(prefix + line if line.strip() else line for line in log.splitlines(keepends=True))


FORMS = {
    # docker/compose cmd/formatter/logs.go: fmt.Sprintf("%-"+strconv.Itoa(width)+"s | ", name), width = longest name + 1
    "docker compose": lambda log: _each(log, "%-*s | " % (len("trainer-1") + 1, "trainer-1")),
    # kubernetes staging/src/k8s.io/kubectl/pkg/cmd/logs/logs.go (--prefix): fmt.Sprintf("[pod/%s/%s] ", pod, container)
    "kubectl --prefix": lambda log: _each(log, "[pod/%s/%s] " % ("pytorchjob-worker-0", "pytorch")),
    "an indented block": lambda log: _each(log, "    "),  # a Markdown code block
    "a quoted reply": lambda log: _each(log, "> "),  # Markdown's and e-mail's quote
    # a logger's coloured level words (colorlog, loguru: ESC[31m ... ESC[0m) and NCCL's WARN in a coloured terminal
    "coloured level words": lambda log: re.sub(r"\b(ERROR|WARNING|WARN|CRITICAL|Error)\b", "\x1b[31m\\1\x1b[0m", log),
    # systemd src/shared/logs-show.c output_short: "%b %d %H:%M:%S" realtime, hostname, identifier, "[%pid]: "
    "journalctl": lambda log: _each(log, "Dec 03 12:00:01 node01 python3[48213]: "),
}


def _answer(d):
    root = d.root_cause
    return (root.signature if root else None, d.initiating_rank, d.status)


@pytest.mark.parametrize("name", LOGS)
@pytest.mark.parametrize("form", sorted(FORMS))
def test_the_same_answer_behind_a_container_prefix_or_a_margin(name, form):
    log = (CORPUS / name).read_text(encoding="utf-8", errors="replace")
    plain = diagnose_text(log, name)
    assert plain.root_cause is not None
    assert _answer(diagnose_text(FORMS[form](log), name)) == _answer(plain)


def test_an_indented_block_keeps_its_columns_and_its_traceback():
    log = (CORPUS / "cpu" / "tcpstore_addr_in_use.log").read_text(encoding="utf-8")
    plain, indented = diagnose_text(log, "a.log"), diagnose_text(FORMS["an indented block"](log), "a.log")
    a, b = plain.root_cause, indented.root_cause
    assert (b.line, b.lines) == (a.line, a.lines)  # the traceback's span: frames told from the exception line
    assert (b.column_start, b.column_end) == (a.column_start + 4, a.column_end + 4)  # columns of the line as written


def test_a_margin_is_what_every_first_line_shares():
    from mltriage.engine.reader import common_margin

    assert common_margin(b"    Traceback (most recent call last):\n      File \"a.py\", line 1\n    RuntimeError: x\n") == b"    "
    assert common_margin(b"Traceback (most recent call last):\n  File \"a.py\", line 1\nRuntimeError: x\n") == b""
    assert common_margin(b"\t  one\r\n\n\t  two\r\n") == b"\t  "  # blank lines and CRLF do not count
    assert common_margin(b"    wait (torch/utils/file_baton.py:42)\n") == b""  # one line's indentation is its own
    assert common_margin(b"> Traceback (most recent call last):\n>   File \"a.py\", line 1\n> RuntimeError: x\n") == b"> "
    assert common_margin(b">>> import torch\nTraceback (most recent call last):\n") == b""
    assert common_margin(b"> ValueError: Target modules not found in the base model\n") == b"> "  # a one-line quote
    assert common_margin(b">>> import torch\n") == b""  # a prompt, not a quote


# nvidia-smi topo -m's matrix (driver 535: "%s\t" cells after a "GPU%d" row label, legend omitted) pasted below an
# nccl-tests v2.13.9 result that failed its check ("# Out of bounds values : %d %s", src/common.cu)
TOPO_AFTER_A_FAILED_CHECK = ("# Out of bounds values : 2 FAILED\n"
                             "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\n"
                             "GPU0\t X \tNV4\t0-63\t0\n"
                             "GPU1\tNV4\t X \t0-63\t0\n")


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_pasted_topology_is_read_behind_the_same_prefixes_and_margins(form):
    d = diagnose_text(FORMS[form](TOPO_AFTER_A_FAILED_CHECK))
    assert d.topology is not None and d.run["gpus"]["interconnect"] == "nvlink", form


# -- lines a terminal, a pager or a web page hard-wrapped at its width ------------------------------------------

def _hard_wrapped(log: str, width: int) -> str:
    """What tmux's or a Windows console's copy, or a fixed-width web view, gives: each line cut into pieces of
    ``width`` characters, each piece on a line of its own."""
    return "".join(line[k:k + width] + "\n" for line in log.splitlines() for k in range(0, max(len(line), 1), width))


WRAPPED_LOGS = [*LOGS, "gpu/device_assert_index.log", "cpu/timeout_preparation.log", "cpu/timeout_uneven_iterable.log"]


@pytest.mark.parametrize("name", WRAPPED_LOGS)
@pytest.mark.parametrize("width", [80, 100, 120])
def test_the_same_answer_when_the_log_was_hard_wrapped(name, width):
    log = (CORPUS / name).read_text()
    if max(map(len, log.splitlines())) <= width:
        pytest.skip("no line of this recording is that wide")
    wrapped = _hard_wrapped(log, width)
    got, want = diagnose_text(wrapped), diagnose_text(log)
    assert _answer(got) == _answer(want)
    # the finding cites the wrapped file's own line: the first piece of the line it was found on
    if got.root_cause is not None:
        found_on = log.splitlines()[want.root_cause.line - 1]
        assert wrapped.splitlines()[got.root_cause.line - 1] == found_on[:width]


def test_one_long_line_cut_inside_a_word_is_read_whole():
    # the watchdog's message as ProcessGroupNCCL.cpp (1.8-1.12) logs it, cut by a 140-column terminal inside "operations"
    line = ("[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out. Due to the asynchronous nature of "
            "CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.")
    cut = line[:140] + "\n" + line[140:] + "\n"
    assert cut.splitlines()[0][-1].isalpha() and cut.splitlines()[1][0].islower()
    assert _answer(diagnose_text(cut))[0] == _answer(diagnose_text(line + "\n"))[0] is not None


def test_rows_of_one_width_are_no_wrapped_lines():
    from mltriage.engine.rewrap import wrap_width
    # nvidia-smi's table (recorded on the 2xH200 host) and nccl-tests' rows all share one width: none is a cut
    assert wrap_width((CORPUS / "healthy/nvidia-smi-h200x2/nvidia-smi.log").read_bytes()) is None
    for log in sorted((CORPUS / "healthy").rglob("*.log")):
        assert wrap_width(log.read_bytes()) is None, log
    for name in LOGS:  # nor are the recordings as they were written
        assert wrap_width((CORPUS / name).read_bytes()) is None, name


def test_a_record_and_its_next_field_are_no_cut():
    from mltriage.engine.rewrap import wrap_width
    # pydantic-core 2.x ValidationError display: "{count} validation error for {title}", then the field's name on its own line
    text = (b"pydantic_core._pydantic_core.ValidationError: 1 validation error for DeepSpeedZeroConfig\nstage3_max_live_parameterz\n"
            b"  Extra inputs are not permitted [type=extra_forbidden, input_value=1000000000, input_type=int]\n")
    assert wrap_width(text) is None
