"""Reasoning about whole runs, on real recordings: stalls, survived tracebacks, headerless pastes."""

import re
from pathlib import Path

import pytest

from mltriage.engine import diagnose_path, diagnose_text
from mltriage.library import load_library
from mltriage.model import Finding
from mltriage.templates import fill_sentence, fill_slots, fill_title

import procs

ROOT = Path(__file__).resolve().parent.parent
P2P_DISABLE = ROOT / "corpus" / "gpu" / "nccl_p2p_disable.log"  # NCCL_DEBUG=INFO, 2 ranks over SHM, exit 0
H200_HEALTHY = ROOT / "corpus" / "healthy" / "nccl-info-h200x2" / "console.log"


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines(keepends=True)


def test_log_cut_after_nccl_channel_setup_over_shm_is_a_p2p_hang():
    lines = _lines(P2P_DISABLE)
    cut = max(i for i, line in enumerate(lines[:60]) if "via SHM/direct/direct" in line) + 1
    d = diagnose_text("".join(lines[:cut]))
    top = d.findings[0]
    assert top.signature == "nccl-hang-broken-p2p"
    # the log only ends there (this is a healthy run's log, cut): the P2P suspicion is said first, as a warning
    assert top.severity == "warning" and top.kind == "hang"
    assert top.fix.env == {"NCCL_P2P_DISABLE": "1"}
    assert any("via SHM/direct/direct" in e for e in top.evidence)
    assert top.line == cut
    # what each rank printed last is said, with its line
    assert any(n.startswith("rank 0 last printed line") for n in top.notes)
    assert d.status == "healthy"
    # the same cut with the user's Ctrl-C: a hang, an error
    stopped = diagnose_text("".join(lines[:cut]) + "^C\n")
    assert stopped.findings[0].signature == "nccl-hang-broken-p2p" and stopped.findings[0].severity == "error"
    assert stopped.status == "failure"


def test_the_same_run_to_its_end_is_healthy():
    d = diagnose_text(P2P_DISABLE.read_text())
    assert d.status == "healthy"
    assert not [f for f in d.findings if f.kind == "hang"]


def test_log_cut_inside_nccl_setup_without_transport_lines_says_nothing():
    # a paste that stops during NCCL init with no GPU-to-GPU evidence is what a healthy paste looks like too
    lines = _lines(H200_HEALTHY)
    cut = next(i for i, line in enumerate(lines) if "Init COMPLETE" in line) + 1
    d = diagnose_text("".join(lines[:cut]))
    assert d.findings == [] or all(f.severity not in ("critical", "error") for f in d.findings)


def test_progress_bar_stuck_at_zero_is_a_stall_warning():
    d = diagnose_text((ROOT / "corpus" / "cpu" / "gloo_stall_progress.log").read_text())
    top = d.findings[0]
    assert top.signature == "run-stalled-without-error"
    assert top.severity == "warning" and top.kind == "hang"
    assert "0/16" in top.evidence[-1]
    assert "progress bar still at zero" in top.root_cause


def test_traceback_the_run_survived_is_a_warning():
    d = diagnose_text((ROOT / "corpus" / "cpu" / "handled_exception.log").read_text())
    assert d.status == "healthy"
    (f,) = [f for f in d.findings if f.signature == "python-unhandled-exception"]
    assert f.severity == "warning" and f.role == "context"
    assert "handled" in f.title and "KeyError" in f.title
    assert any("carried on" in n for n in f.notes)


def test_exception_ignored_in_del_is_context_not_the_failure():
    text = (ROOT / "tests" / "data" / "chained_exception.log").read_text()
    # Python's own marker line for an exception it could not raise (format: "Exception ignored in: %R")
    d = diagnose_text("Exception ignored in: <function Loader.__del__ at 0x7f30c6ca0830>\n" + text)
    (f,) = [f for f in d.findings if f.signature == "python-unhandled-exception"]
    assert f.severity == "warning" and f.role == "context"


def test_traceback_pasted_without_its_header_is_still_an_error_report():
    text = (ROOT / "tests" / "data" / "chained_exception.log").read_text()
    first_frame = text.index('  File "')
    d = diagnose_text(text[first_frame:])
    top = d.findings[0]
    assert top.signature == "python-unhandled-exception" and top.severity == "error"
    assert top.facts["exception_type"] == "RuntimeError"
    assert top.facts["user_frame"].startswith("/tmp/tb/chained.py:")
    assert top.facts["user_frame"] in top.root_cause


def test_frames_alone_without_an_exception_line_are_not_an_error():
    d = diagnose_text('  File "/tmp/tb/chained.py", line 10, in <module>\n    main()\n')
    assert d.status == "healthy"


PLACEHOLDER = re.compile(r"\{\w+\}")


@pytest.mark.parametrize("rule", sorted(load_library().rules.values(), key=lambda r: r.id), ids=lambda r: r.id)
def test_no_signature_shows_a_format_field_when_no_fact_is_known(rule):
    texts = [fill_title(rule.title, {}), fill_sentence(rule.summary, {}, rule.mechanism_gist),
             fill_slots(rule.fix_summary, {}), fill_slots(rule.verify, {})]
    texts += [fill_slots(s, {}) for s in rule.fix_steps] + [fill_slots(c, {}) for c in rule.fix_commands]
    texts += [fill_slots(v, {}) for v in rule.fix_env.values()]
    leaked = [t for t in texts if PLACEHOLDER.search(t)]
    assert leaked == []
    assert fill_title(rule.title, {}).strip() and len(fill_title(rule.title, {})) >= 8


def test_trigger_only_match_still_names_the_failure_without_facts():
    # today's allocator message cut after its first sentence (older releases printed only this much)
    d = diagnose_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n")
    top = d.findings[0]
    assert top.signature == "cuda-oom"
    assert "{" not in top.title + top.root_cause


def _run(script: str) -> str:
    import sys

    out = procs.run(["bash", "-xc", script.replace("PY", sys.executable)], capture_output=True, text=True, timeout=60)
    return out.stderr + out.stdout


def test_the_command_that_launched_the_run_is_named_in_verify():
    # bash -x echoes the command it runs ("+ python ..."), as CI logs and launch scripts do
    log = _run("PY -c 'import json; json.loads(\"{bad\")'")
    d = diagnose_text(log)
    top = d.findings[0]
    assert top.signature == "python-unhandled-exception"
    assert top.facts["command"].endswith("-c 'import json; json.loads(\"{bad\")'")
    assert top.verify.startswith(top.facts["command"])
    assert "<command>" not in top.verify


def test_an_env_assignment_after_the_program_is_called_out():
    log = _run("PY -c 'raise SystemExit(\"x\")' NCCL_P2P_DISABLE=1; PY -c 'raise KeyError(1)' NCCL_P2P_DISABLE=1")
    d = diagnose_text(log)
    top = d.findings[0]
    assert any("`NCCL_P2P_DISABLE=1` comes after the program name" in n for n in top.notes)


def test_nan_logits_with_custom_allreduce_off_cites_the_topology_line():
    lib = load_library()
    nan_logits = lib.entry("vllm-nan-logits-p2p-corruption").samples.positive[0].text
    no_p2p = next(s.text for s in lib.entry("vllm-custom-allreduce-disabled-no-p2p").samples.positive)
    d = diagnose_text(no_p2p + "\n" + nan_logits + "\n")
    top = d.findings[0]
    assert top.signature == "vllm-nan-logits-p2p-corruption"
    assert any("topology supports it" in n and "custom all-reduce off" in n for n in top.notes)


def test_a_later_line_of_the_same_failure_adds_its_facts():
    # PyTorch prints the Missing-keys line before the Unexpected-keys line of one load_state_dict error
    lib = load_library()
    samples = lib.entry("torch-state-dict-load-mismatch").samples.positive
    missing = samples[0].text  # model without the DDP prefix
    unexpected = samples[1].text  # checkpoint keys with "module."
    d = diagnose_text("RuntimeError: Error(s) in loading state_dict for Net:\n" + missing + "\n" + unexpected + "\n")
    (f,) = [f for f in d.findings if f.signature == "torch-state-dict-load-mismatch"]
    assert f.facts["missing_key"] == "fc.weight" and f.facts["checkpoint_prefix"] == "module."
    assert f.count == 2


def test_a_failure_phrase_logged_at_warning_level_yields_to_the_error_that_ended_the_run():
    lib = load_library()
    missing_lib = lib.entry("python-shared-library-not-found").samples.positive[0].text.strip().splitlines()[-1]
    bf16 = lib.entry("vllm-bf16-unsupported-gpu").samples.positive[0].text.strip().splitlines()[-1]
    # vLLM's logger format (vllm/logger.py): "%(levelname)s %(asctime)s [%(filename)s:%(lineno)d] %(message)s"
    d = diagnose_text(f"WARNING 07-10 11:12:13 [_custom_ops.py:15] {missing_lib}\n{bf16}\n")
    assert d.findings[0].signature == "vllm-bf16-unsupported-gpu"
    (warned,) = [f for f in d.findings if f.signature == "python-shared-library-not-found"]
    assert warned.severity == "warning" and warned.facts["log_level"] == "warning"
    # the same line alone stays the error it is
    alone = diagnose_text(f"WARNING 07-10 11:12:13 [_custom_ops.py:15] {missing_lib}\n")
    assert alone.findings[0].is_error


def test_a_verify_that_is_only_the_unknown_launch_command_is_said_in_words():
    """The README's first command: the example log shows no launch command, so the verify would be
    the bare slot `<command>`; it says the check in words instead, with its condition."""
    d = diagnose_path(ROOT / "examples" / "torchrun-rank2-indexerror.log")
    top = d.findings[d.root_cause_index]
    assert top.signature == "python-unhandled-exception"
    assert "<command>" not in " ".join([top.verify, *top.fix.steps, *top.fix.commands])
    assert top.verify.startswith("rerun the command that launched the run (this log does not show it)")
    assert "the IndexError at " in top.verify and top.verify.endswith("must be gone")


def test_a_verify_that_prefixes_the_unknown_command_stays_a_recipe():
    from mltriage.engine.run_reasoning import _verify_without_command
    from mltriage.model import Fix

    f = Finding(signature="s", title="t", category="c", severity="error", proposed_role="root-cause", rank=None, host=None,
                source="x", lines=(1, 1), line=1, column_start=0, column_end=1, evidence=["x"], facts={}, root_cause="",
                fix=Fix(), verify="NCCL_P2P_DISABLE=1 <command>  # finishes", confidence=0.5)
    _verify_without_command(f)
    assert f.verify == "NCCL_P2P_DISABLE=1 <command>  # finishes" and f.fix.steps == []
