"""The engine on real traceback output and on hostile input."""

import json
from pathlib import Path

import pytest

from mltriage.engine import diagnose_bytes, diagnose_path, diagnose_text
from mltriage.masking import mask_secrets
from mltriage.engine.prefixes import parse_prefixes
from mltriage.engine.reader import InputError, clean_line, iter_blocks

DATA = Path(__file__).parent / "data"
CHAINED = (DATA / "chained_exception.log").read_text()


def test_chained_traceback_is_one_block_with_the_final_exception():
    d = diagnose_text(CHAINED)
    assert d.status == "failure"
    top = d.findings[0]
    assert top.signature == "python-unhandled-exception"
    assert top.lines == (1, 16)
    assert top.facts["exception_type"] == "RuntimeError"
    assert top.facts["exception_message"] == "could not load the training config"
    assert len([f for f in d.findings if f.signature == "python-unhandled-exception"]) == 1


@pytest.mark.parametrize(
    "line, rank, message",
    [
        ("[rank3]: RuntimeError: x", 3, "RuntimeError: x"),
        ("[default5]:[rank5]:   File \"a.py\", line 1", 5, "  File \"a.py\", line 1"),
        ("[Rank 2] loss scale", 2, "loss scale"),
        ("7: Traceback (most recent call last):", 7, "Traceback (most recent call last):"),
        ("[1,6]<stderr>:NCCL WARN x", 6, "NCCL WARN x"),
        ("(VllmWorker rank=1 pid=4242) ERROR boom", 1, "ERROR boom"),
        ("(RayWorkerWrapper pid=4242, ip=10.0.0.2) x", None, "x"),
        ("(VllmWorker TP1 pid=4242) ERROR x", 1, "ERROR x"),
        ("(Worker_TP3 pid=4242) x", 3, "x"),
        ("(EngineCore_DP0 pid=4242) x", None, "x"),
        ("INFO 08-27 14:00:04 llm_engine.py:174] x", None, "x"),  # vLLM <= 0.5 logger format
    ],
)
def test_launcher_prefixes_are_peeled(line, rank, message):
    ctx = parse_prefixes(line)
    assert ctx.rank == rank
    assert ctx.message == message


def test_nccl_prefix_gives_host_pid_device_and_iso_time():
    ctx = parse_prefixes("2026-11-30 09:12:44,250 gpu-node-3:4242:4300 [1] NCCL INFO Bootstrap")
    assert (ctx.host, ctx.pid, ctx.device) == ("gpu-node-3", 4242, 1)
    assert ctx.clock == "wall" and ctx.timestamp is not None
    assert ctx.message == "NCCL INFO Bootstrap"


def test_clean_line_strips_ansi_cr_nul_and_bad_utf8():
    raw = b"\x1b[31mloss 1.0\r\x1b[1mTraceback\x00 \xff(x)\x1b[0m"
    assert clean_line(raw) == "Traceback \ufffd(x)"


def test_crlf_ansi_and_invalid_utf8_log_still_diagnosed():
    noisy = CHAINED.replace("\n", "\r\n").encode()
    noisy = noisy.replace(b"RuntimeError:", b"\x1b[31mRuntimeError\x1b[0m:") + b"\xff\xfe\x00garbage\r\n"
    d = diagnose_bytes(noisy)
    assert d.findings[0].signature == "python-unhandled-exception"
    assert d.findings[0].facts["exception_type"] == "RuntimeError"


def test_ten_megabyte_line_is_handled_and_later_lines_keep_numbers(tmp_path):
    log = tmp_path / "long.log"
    log.write_bytes(b"x" * (10 * 1024 * 1024) + b"\n" + CHAINED.encode())
    d = diagnose_path(log)
    assert d.findings[0].signature == "python-unhandled-exception"
    assert d.findings[0].lines == (2, 17)


def test_blocks_cut_at_line_ends_and_split_monster_lines():
    import io

    data = b"a" * 10 + b"\n" + b"b" * 50 + b"\n" + b"c" * 5
    blocks = list(iter_blocks(io.BytesIO(data), block_size=16))
    assert b"".join(blocks) == data
    assert all(b.endswith(b"\n") or len(b) >= 16 or b is blocks[-1] for b in blocks)


def test_binary_file_is_refused_with_a_reason(tmp_path):
    binary = tmp_path / "model.bin"
    binary.write_bytes(bytes(range(256)) * 400)
    with pytest.raises(InputError, match="binary"):
        diagnose_path(binary)


def test_directory_skips_binaries_and_reads_logs(tmp_path):
    (tmp_path / "rank_0.log").write_text("step 1 loss 2.0\n")
    (tmp_path / "rank_1.log").write_text(CHAINED)
    (tmp_path / "ckpt.pt").write_bytes(b"PK\x03\x04" + bytes(range(256)) * 100)
    d = diagnose_path(tmp_path)
    assert d.findings[0].rank == 1
    assert d.initiating_rank == 1
    assert [s["name"] for s in d.skipped] == ["ckpt.pt"]


def test_secrets_are_masked_in_evidence_and_facts():
    token = "hf_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tV9wX1yZ3"
    text = CHAINED.replace("could not load the training config", f"bad token {token}")
    d = diagnose_text(text)
    dumped = str(d.to_json())
    assert token not in dumped
    assert "****" in d.findings[0].facts["exception_message"]


@pytest.mark.parametrize(
    "secret",
    ["AKIAZ3MX7QH2LJ5WTY4R", "WANDB_API_KEY=0123456789abcdef0123", "https://user:s3cr3tpass@host/x", "Bearer abcdefghijklmnop1234"],
)
def test_mask_secrets_patterns(secret):
    masked = mask_secrets(f"env {secret} end")
    assert "****" in masked
    assert "s3cr3tpass" not in masked and "0123456789abcdef0123" not in masked


def test_healthy_text_has_no_findings():
    d = diagnose_text("step 1 loss=2.3\nstep 2 loss=2.1\nTraining completed.\n")
    assert d.status == "healthy"
    assert d.findings == []


def test_dataloader_original_traceback_joins_the_report_and_the_specific_cause_wins():
    # real output: a DataLoader worker hit a full /dev/shm (zoo/repro/sigwork/out_shm.txt)
    log = Path(__file__).resolve().parent.parent / "zoo" / "repro" / "sigwork" / "out_shm.txt"
    d = diagnose_path(log)
    assert d.findings[0].signature == "dataloader-shm-no-space"
    wrapper = next(f for f in d.findings if f.signature == "dataloader-worker-exception")
    assert wrapper.lines == d.findings[0].lines  # one error report, one block


def test_requires_can_be_met_by_a_traceback_frame(tmp_path):
    from mltriage.library import Library, Rule
    from mltriage.schema import Signature
    import tomllib

    base = tomllib.loads((Path(__file__).resolve().parent.parent / "signatures" / "python" / "python-unhandled-exception.toml").read_text())
    base.update(id="python-config-load-failure", fallback=False)
    base["match"] = {
        "triggers": ["RuntimeError: could not load", "chained.py"],
        "patterns": ["^RuntimeError: could not load the training config"],
        "requires": ['File "[^"]*chained\\.py", line 2, in load'],
        "within": 20,
    }
    sig = Signature.model_validate(base)
    lib = Library(rules={sig.id: Rule.from_signature(sig, tmp_path / "x.toml")}, root=tmp_path)
    d = diagnose_text(CHAINED, library=lib)
    assert [f.signature for f in d.findings] == ["python-config-load-failure"]
    base["match"]["requires"] = ['File "[^"]*chained\\.py", line 99, in load']
    sig = Signature.model_validate(base)
    lib = Library(rules={sig.id: Rule.from_signature(sig, tmp_path / "x.toml")}, root=tmp_path)
    assert diagnose_text(CHAINED, library=lib).findings == []


def test_oom_interpretation_follows_the_numbers():
    root = Path(__file__).resolve().parent.parent
    # a single 200 GiB request on a 139.8 GiB H200 (recorded on the device machine)
    d = diagnose_path(root / "zoo" / "gpu" / "nccl_oom" / "console.log")
    oom = d.findings[0]
    assert oom.signature == "cuda-oom"
    assert "PYTORCH_CUDA_ALLOC_CONF" not in oom.fix.env
    assert any("larger than the whole GPU" in n for n in oom.notes)
    # a fragmentation case keeps expandable segments (sample built from the allocator's format string)
    import tomllib

    sig = tomllib.loads((root / "signatures" / "cuda" / "cuda-oom.toml").read_text())
    fragmented = next(s for s in sig["samples"]["positive"] if s.get("facts", {}).get("reserved_unallocated") == "30.93 GiB")
    d = diagnose_text(fragmented["text"])
    assert d.findings[0].fix.env["PYTORCH_CUDA_ALLOC_CONF"] == "expandable_segments:True"
    assert any("fragmentation" in n for n in d.findings[0].notes)


@pytest.mark.parametrize(
    "relative, rank, host",
    [
        ("run/attempt_0/3/stderr.log", 3, None),  # torchrun --log-dir
        ("slurm-81234-5.out", 5, None),  # srun --output=slurm-%j-%t.out
        ("logs/node-gpu017/rank_12.log", 12, "gpu017"),  # %N folder, rank file
        ("train.rank7.log", 7, None),
        ("worker-2.log", 2, None),
        ("train.log", None, None),
    ],
)
def test_rank_and_host_from_file_names(tmp_path, relative, rank, host):
    from mltriage.engine.reader import source_for_path

    src = source_for_path(tmp_path / relative, relative)
    assert (src.rank, src.host) == (rank, host)


def test_time_of_day_stamps_are_not_compared_with_full_dates():
    from mltriage.engine.findings import comparable_times

    glog = diagnose_text("E1130 09:24:25.272000 9828 torch/distributed/run.py:874] RuntimeError: CUDA error: out of memory\n")
    iso = diagnose_text("2026-11-30 09:24:26,000 RuntimeError: CUDA error: out of memory\n")
    vllm = diagnose_text("ERROR 11-30 09:24:27 [core.py:12] RuntimeError: CUDA error: out of memory\n")
    untimed = diagnose_text("RuntimeError: CUDA error: out of memory\n")
    g, i, v, u = (d.findings[0] for d in (glog, iso, vllm, untimed))
    assert (g.clock, i.clock, v.clock) == ("time", "wall", "time")
    assert comparable_times(g, v) and comparable_times(i, i)
    assert not comparable_times(g, i) and not comparable_times(u, i)


def test_a_tracebacks_frames_name_the_users_last_frame_and_the_library_it_raised_in():
    """Frames are parsed only when a finding reads them; the answer is the same as parsing each:
    the user's last frame (a path merely containing "/lib/python" is still the user's), the
    innermost frame, and the package of the innermost frame. (Frame lines as CPython 3.11 prints them.)"""
    from mltriage.engine.tracebacks import TracebackBlock

    block = TracebackBlock(stream=("x", None), start=1, end=1, header_text="Traceback (most recent call last):")
    for line in (
        '  File "/home/me/lib/python_tools/train.py", line 12, in <module>',
        "    main()",
        '  File "/usr/lib/python3.11/runpy.py", line 198, in _run_module_as_main',
        '  File "/home/me/lib/python_tools/train.py", line 8, in main',
        '  File "/opt/venv/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1501, in _call_impl',
        '    print(\'File "x", line 3\')',  # a source line that quotes a frame is no frame
    ):
        block.note_frame(line)
    assert block.frames == 4
    assert block.user_frame == ("/home/me/lib/python_tools/train.py", "8", "main")
    assert block.innermost == ("/opt/venv/lib/python3.11/site-packages/torch/nn/modules/module.py", "1501", "_call_impl")
    assert block.library == "torch"
    block.note_frame('  File "/home/me/model.py", line 3, in forward')
    assert block.library is None and block.user_frame == block.innermost == ("/home/me/model.py", "3", "forward")


def test_a_full_gpu_offers_no_allocator_setting_anywhere_in_its_fix():
    """The recorded OOM (100 GiB held, 60 GiB more asked, 0 bytes cached): the note says there is no
    fragmentation, so neither the exports nor the steps, commands or summary may offer
    expandable_segments (the view shows all of them)."""
    root = Path(__file__).resolve().parent.parent
    d = diagnose_path(root / "corpus" / "gpu" / "cuda_oom.log")
    oom = next(f for f in d.findings if f.signature == "cuda-oom")
    assert any(n.startswith("no fragmentation to reclaim") for n in oom.notes), oom.notes
    fix = json.dumps(oom.fix.to_json())
    assert "expandable_segments" not in fix and "ALLOC_CONF" not in fix, fix
    assert any("micro-batch" in s for s in oom.fix.steps)  # what does apply stays
    assert "does not fit" in oom.fix.summary


@pytest.mark.parametrize("facts, memory", [
    ({"requested": "20.00 GiB", "total": "139.72 GiB", "reserved_unallocated": "30.93 GiB"}, "fragmented"),
    ({"requested": "60.00 GiB", "total": "139.80 GiB", "reserved_unallocated": "0 bytes"}, "full"),
    ({"requested": "2.00 GiB", "total": "79.15 GiB", "allocated": "74.31 GiB", "reserved": "76.89 GiB"}, "fragmented"),
    ({"requested": "512.00 MiB", "total": "15.78 GiB", "allocated": "14.02 GiB", "reserved": "14.36 GiB"}, "full"),
    ({"requested": "1.53 GiB", "total": "10.92 GiB", "cached": "95.83 MiB"}, "full"),
    ({"requested": "200.00 GiB", "total": "139.80 GiB"}, "too-big"),
    ({"requested": "20.00 GiB"}, "unknown"),
])
def test_oom_memory_is_decided_from_reserved_but_unallocated_against_total(facts, memory):
    from mltriage.engine.interpret import oom_memory

    assert oom_memory(facts).value == memory
