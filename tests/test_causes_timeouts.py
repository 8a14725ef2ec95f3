"""Collective timeouts named by their cause: what the ranks were doing before a collective timed out
(a rank preparing data alone, rank-0-only evaluation or saving, uneven batches, a data-dependent
ZeRO-3 forward) and, with none of that in the log, the differential an expert gives.

The recorded logs are real runs (corpus/cpu/timeout_*.log, torch 2.13.0 + gloo on CPU with a 3 s
process-group timeout; the .cmd beside each says how). The other lines are built from the format
string of the upstream release named beside them."""

from pathlib import Path

import pytest

from cli_runner import run_cli
from mltriage.engine import diagnose_path, diagnose_text
from mltriage.symptoms import Symptom
from observing import assert_two_sources, assert_typed_facts, observe as _observe

CPU = Path(__file__).resolve().parent.parent / "corpus" / "cpu"

TIMEOUT_CAUSES = {"collective-timeout-at-start", "collective-timeout-rank0-work", "collective-timeout-uneven-inputs",
                  "collective-timeout-after-finish", "collective-timeout-unexplained", "deepspeed-zero3-data-dependent-forward"}

# pytorch/pytorch v2.2.0 torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp: the watchdog's line under torchrun's prefix
WATCHDOG = ("[rank1]:[E1211 10:30:00.000000000 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn={numel}, NumelOut={numel}, Timeout(ms)=1800000) ran for 1800057 "
            "milliseconds before timing out.\n")
# huggingface/transformers 4.36.0 trainer.py evaluation_loop, under transformers' "[%(levelname)s|%(filename)s:%(lineno)s] ..." format
RUNNING_EVAL = "[INFO|trainer.py:3158] 2023-12-11 10:00:00,000 >> ***** Running Evaluation *****\n"
# huggingface/transformers 4.36.0 trainer.py Trainer._save
SAVING = "[INFO|trainer.py:2845] 2023-12-11 10:00:00,000 >> Saving model checkpoint to out/checkpoint-500\n"
# huggingface/datasets 2.14.0 arrow_dataset.py map: desc "Map (num_proc=N)" in tqdm 4.x's l_bar/r_bar
MAP_BAR = "Map (num_proc=8):  35%|███▌      | 350000/1000000 [04:01<07:28, 1450.12 examples/s]\n"
# deepspeedai/DeepSpeed 0.12.6 deepspeed/runtime/zero/partitioned_param_coordinator.py trace_prologue
TRACE = "Invalidate trace cache @ step 414: expected module 2612, but got module 2248\n"


def _signatures(d) -> list[str]:
    return [f.signature for f in d.findings]




# -- the symptoms: each wording with its typed facts, from two sources each -------------------------

WORDS = [
    (Symptom.DATA_PREPARATION, MAP_BAR, "datasets 2.14.0 map desc", {"what": "Map", "kind": "dataset-map"}),
    (Symptom.DATA_PREPARATION, "Running tokenizer on dataset:  42%|████▏     | 25/60 [00:02<00:03,  9.96it/s]\n",
     "recorded corpus/cpu/timeout_preparation.log (transformers run_clm.py's desc)", {"kind": "dataset-map"}),
    (Symptom.DATA_PREPARATION, '  File "/usr/lib/python3/site-packages/transformers/training_args.py", line 2119, in main_process_first\n',
     "transformers 4.36.0 training_args.py frame", {"what": "main_process_first", "kind": "barrier"}),
    (Symptom.DATA_PREPARATION, '  File "/usr/lib/python3/site-packages/accelerate/state.py", line 413, in _goes_first\n',
     "accelerate 0.25.0 state.py frame", {"what": "_goes_first", "kind": "barrier"}),
    (Symptom.PROGRESS_BAR, " 35%|████      | 73811/208140 [30:01<57:14, 39.11it/s]\n", "tqdm 4.x format_meter", {"percent": 35, "elapsed_s": 1801}),
    (Symptom.PROGRESS_BAR, "train:   0%|          | 0/16 [1:02:03<?, ?it/s]\n", "tqdm format_interval H:MM:SS", {"percent": 0, "elapsed_s": 3723}),
    (Symptom.EVALUATION_STARTED, RUNNING_EVAL, "transformers 4.36.0 trainer.py", {"what": "Evaluation"}),
    (Symptom.EVALUATION_STARTED, "[default0]:Evaluating...\n", "recorded corpus/cpu/timeout_rank0_eval.log", {}),
    (Symptom.EVALUATION_STARTED, "Validation DataLoader 0:  50%|█████     | 25/50 [00:01<00:01, 20.1it/s]\n",
     "Lightning 2.1.0 tqdm_progress.py", {"what": "Validation"}),
    (Symptom.CHECKPOINT_SAVING, SAVING, "transformers 4.36.0 trainer.py _save", {"path": "out/checkpoint-500"}),
    (Symptom.CHECKPOINT_SAVING, "Epoch 3, global step 1200: 'val_loss' reached 0.31522 (best 0.31522), saving model to "
     "'/ckpt/epoch=3-step=1200.ckpt' as top 1\n", "Lightning 2.1.0 model_checkpoint.py", {"path": "'/ckpt/epoch=3-step=1200.ckpt'"}),
    (Symptom.CHECKPOINT_SAVING, "[default0]:Saving checkpoint to /tmp/tmplm4o22l_/checkpoint.pt\n", "recorded corpus/cpu/prepare_evaluate_save_ok.log",
     {"path": "/tmp/tmplm4o22l_/checkpoint.pt"}),
    (Symptom.CHECKPOINT_SAVING, "[2023-12-11 10:00:00,000] [INFO] [torch_checkpoint_engine.py:21:save] [Torch] Checkpoint global_step500 is about to be saved!\n",
     "DeepSpeed 0.12.6 torch_checkpoint_engine.py", {"path": "global_step500"}),
    (Symptom.TRACE_CACHE_INVALIDATED, TRACE, "DeepSpeed 0.12.6", {"step": 414}),
    (Symptom.TRACE_CACHE_INVALIDATED, "Invalidate trace cache @ step 0 and module 12: cache has only 10 modules\n", "DeepSpeed 0.16.4", {"step": 0}),
    (Symptom.UNEVEN_INPUTS, "UserWarning: Length of IterableDataset <__main__.Shard object at 0x7f9279279710> was reported to be 2(when "
     "accessing len(dataloader)), but 3 samples have been fetched. \n", "torch 2.13.0 dataloader.py (recorded)", {"kind": "iterable-dataset-length"}),
    (Symptom.UNEVEN_INPUTS, "RuntimeError: Rank 1 exhausted all inputs.\n", "torch 2.13.0 distributed/algorithms/join.py", {"kind": "join", "rank": 1}),
    (Symptom.STEP_LOGGED, "[default0]:rank 0: step 2 loss 0.1136\n", "recorded corpus/cpu/timeout_uneven_iterable.log", {"rank": 0, "step": 2}),
    (Symptom.STEP_LOGGED, "[rank 1] epoch 4 batch 41 - single_step entered\n", "users' per-rank prints", {"epoch": 4, "step": 41}),
    (Symptom.COLLECTIVE_TIMEOUT, "RuntimeError: Timed out initializing process group in store based barrier on rank: 0, for key: "
     "store_based_barrier_key:1 (world_size=8, worker_count=1, timeout=0:30:00)\n", "torch 1.8-1.13 distributed_c10d.py",
     {"op_type": "BARRIER", "nranks": 8, "joined": 1}),
    (Symptom.COLLECTIVE_TIMEOUT, "[Rank 0]: Rank 1 failed to pass monitoredBarrier in 2000 ms\n", "recorded corpus/cpu/timeout_monitored_barrier.log",
     {"timeout_ms": 2000, "op_type": "BARRIER"}),
    (Symptom.COLLECTIVE_TIMEOUT, "  WorkNCCL(SeqNum=48213, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000)\n",
     "torch 2.2+ WorkNCCL repr wrapped", {"seq": 48213, "numel_in": 1, "timeout_ms": 1800000}),
    (Symptom.COLLECTIVE_TIMEOUT, "RuntimeError: [Rank 3] Caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, "
     "TensorShape=[1024], Timeout(ms)=60000) ran for 60013 milliseconds before timing out.\n", "torch 1.11-2.1 blocking wait",
     {"seq": 7, "op_type": "ALLREDUCE", "timeout_ms": 60000}),
]


@pytest.mark.parametrize("symptom,line,source,facts", WORDS, ids=[f"{w[0].value}-{i}" for i, w in enumerate(WORDS)])
def test_each_wording_is_observed_with_typed_facts(symptom, line, source, facts):
    assert_typed_facts(symptom, line, source, facts, once=True)


def test_each_new_symptom_is_tested_in_the_words_of_two_sources():
    assert_two_sources(WORDS)


@pytest.mark.parametrize("line", [
    "validation loss 0.3182 accuracy 0.91\n",  # a metric, not the start of an evaluation
    "Map size: 1024\n",  # not datasets' bar
    "Filter: none\n",
    "100 %| done\n",  # not tqdm's r_bar
    "we evaluated the model yesterday and it was fine, see the attached results table for details\n",
    "Model saving is disabled for this run\n",
])
def test_near_miss_lines_are_not_observed(line):
    obs = _observe(line)
    for symptom in (Symptom.EVALUATION_STARTED, Symptom.DATA_PREPARATION, Symptom.PROGRESS_BAR, Symptom.CHECKPOINT_SAVING):
        assert not obs.of(symptom), (symptom, line)


# -- the recorded runs: each cause on real output, the busy rank's work named ------------------------

@pytest.mark.parametrize("name, cause, words", [
    ("timeout_preparation", "collective-timeout-at-start", "Running tokenizer on dataset"),
    ("timeout_rank0_eval", "collective-timeout-rank0-work", "an evaluation"),
    ("timeout_uneven_iterable", "collective-timeout-uneven-inputs", "IterableDataset"),
])
def test_a_recorded_timeout_is_named_by_what_the_busy_rank_was_doing(name, cause, words):
    d = diagnose_path(CPU / f"{name}.log")
    assert d.status == "failure"
    top = d.findings[0]
    assert top.signature == cause, _signatures(d)
    assert any(words in n for n in top.notes), top.notes
    # the neighbours are not said as well, and the timeouts are consequences, not roots
    assert not (TIMEOUT_CAUSES - {cause}) & set(_signatures(d)), _signatures(d)
    assert all(f.role != "root-cause" for f in d.findings if f.signature == "torch-gloo-timeout")


def test_monitored_barrier_timeout_gets_the_differential_naming_the_missing_rank():
    d = diagnose_path(CPU / "timeout_monitored_barrier.log")
    top = d.findings[0]
    assert top.signature == "collective-timeout-unexplained", _signatures(d)
    assert top.facts.get("op_type") == "BARRIER" and top.facts.get("missing_ranks") == "1"
    assert any("names rank(s) 1" in n for n in top.notes), top.notes
    assert any("barrier, a broadcast or a one-element all-reduce" in n for n in top.notes), top.notes


def test_a_run_that_prepares_evaluates_and_saves_then_finishes_stays_healthy():
    d = diagnose_path(CPU / "prepare_evaluate_save_ok.log")
    assert d.status == "healthy", [(f.signature, f.severity) for f in d.findings]
    assert not any(f.signature in TIMEOUT_CAUSES for f in d.findings)


# -- built from format strings: each cause and its near neighbours ----------------------------------

def test_an_evaluation_or_a_save_right_before_the_timeout_is_rank0_only_work():
    for before in (RUNNING_EVAL, SAVING):
        d = diagnose_text(before + WATCHDOG.format(seq=4180, op="BROADCAST", numel=1))
        assert d.findings[0].signature == "collective-timeout-rank0-work", _signatures(d)
        assert "collective-timeout-unexplained" not in _signatures(d)  # explained by the precise cause
        text = d.findings[0].root_cause + " ".join(d.findings[0].fix.steps)
        assert "all ranks" in text and "rank 0 only" in text


def test_an_evaluation_long_before_the_timeout_is_not_what_rank0_was_doing():
    steps = "".join(f"{{'loss': 1.2{i % 10}, 'learning_rate': 2e-05, 'epoch': 1.{i:03d}}}\n" for i in range(150))
    d = diagnose_text(RUNNING_EVAL + steps + WATCHDOG.format(seq=9000, op="ALLREDUCE", numel=106496))
    assert "collective-timeout-rank0-work" not in _signatures(d)
    top = d.findings[0]
    assert top.signature == "collective-timeout-unexplained", _signatures(d)
    # a gradient-sized all-reduce deep in the run: the differential says which causes that favours
    assert any("different numbers of batches" in n for n in top.notes), top.notes


def test_a_bar_that_ran_as_long_as_the_timeout_is_a_long_one_rank_step():
    # tqdm 4.x format_meter; the bar had run 30:01 when a 30-minute timeout fired (no SeqNum: torch 1.8-1.10 repr)
    bar = "<class 'data.Lines'>: Init /data/train\n 35%|████      | 7381/20814 [30:01<57:14, 39.11it/s]\n"
    old = ("[E ProcessGroupNCCL.cpp:485] [Rank 6] Watchdog caught collective operation timeout: WorkNCCL(OpType=ALLREDUCE, "
           "Timeout(ms)=1800000) ran for 1802246 milliseconds before timing out.\n")  # torch 1.8-1.10 abortTimedOutCollectives
    d = diagnose_text(bar + old)
    top = d.findings[0]
    assert top.signature == "collective-timeout-at-start", _signatures(d)
    assert any("had run for 1801 s" in n for n in top.notes), top.notes
    assert "ddp_timeout" in top.fix.summary and "timedelta" in top.fix.summary
    # the same bar at a third of the timeout, or finished, says nothing about it
    for other in (" 35%|████      | 7381/20814 [10:01<57:14, 39.11it/s]\n", "100%|██████████| 20814/20814 [30:01<00:00, 11.5it/s]\n"):
        d = diagnose_text(other + old)
        assert "collective-timeout-at-start" not in _signatures(d), (other, _signatures(d))


def test_dataset_preparation_before_a_late_timeout_far_away_is_not_the_cause():
    steps = "".join(f"step {i} loss 0.5\n" for i in range(150))
    d = diagnose_text(MAP_BAR + steps + WATCHDOG.format(seq=20518, op="ALLREDUCE", numel=106496))
    assert "collective-timeout-at-start" not in _signatures(d), _signatures(d)


def test_ranks_failing_in_main_process_first_are_waiting_for_preprocessing():
    # a traceback through TrainingArguments.main_process_first (transformers 4.36.0 training_args.py, dist.barrier())
    tb = ("Traceback (most recent call last):\n"
          '  File "run_clm.py", line 414, in main\n'
          '    with training_args.main_process_first(desc="dataset map tokenization"):\n'
          '  File "/usr/lib/python3.8/contextlib.py", line 113, in __enter__\n'
          "    return next(self.gen)\n"
          '  File "/usr/lib/python3/site-packages/transformers/training_args.py", line 2119, in main_process_first\n'
          "    dist.barrier()\n")
    d = diagnose_text(tb)
    assert d.findings and d.findings[0].signature == "collective-timeout-at-start", _signatures(d)
    # the main process's own tokeniser raising is that error, not a timeout
    own = ('  File "run_clm.py", line 420, in tokenize_function\n'
           "    output = tokenizer(examples[text_column_name])\n"
           "KeyError: 'text'\n")
    d = diagnose_text(tb.replace("    dist.barrier()\n", "") + own)
    assert "collective-timeout-at-start" not in _signatures(d), _signatures(d)


def test_an_uneven_note_outranks_the_evaluation_it_went_on_to():
    # a user's note on the ranks' batches, then validation, then a watchdog timeout
    log = ("[rank 0] batch 41 - step entered\nrank 1 does not have any batches left for the last step\nStart of validation\n"
           + WATCHDOG.format(seq=812, op="ALLREDUCE", numel=25557032))
    d = diagnose_text(log)
    assert d.findings[0].signature == "collective-timeout-uneven-inputs", _signatures(d)
    assert "collective-timeout-rank0-work" not in _signatures(d)
    assert "drop_last" in d.findings[0].fix.summary and "Join" in d.findings[0].fix.summary


def test_an_iterable_dataset_length_warning_on_a_run_that_went_on_is_silent():
    warn = ("UserWarning: Length of IterableDataset <__main__.Shard object at 0x7f9279279710> was reported to be 2(when accessing "
            "len(dataloader)), but 3 samples have been fetched. \nepoch 1 done\n")
    d = diagnose_text(warn)
    assert not any(f.is_error for f in d.findings), _signatures(d)


def test_zero3_trace_invalidation_is_the_cause_of_a_timeout_and_a_warning_alone():
    d = diagnose_text(TRACE + WATCHDOG.format(seq=88211, op="_ALLGATHER_BASE", numel=4096))
    top = d.findings[0]
    assert top.signature == "deepspeed-zero3-data-dependent-forward" and top.severity == "error", _signatures(d)
    assert "collective-timeout-unexplained" not in _signatures(d)
    assert "data-dependent control flow" in top.root_cause
    alone = diagnose_text(TRACE + "{'loss': 3.623, 'learning_rate': 1.03e-06, 'epoch': 0.0}\n")
    assert [f.signature for f in alone.findings] == ["deepspeed-zero3-data-dependent-forward"]
    assert alone.findings[0].severity == "warning" and alone.status != "failure"


def test_a_bare_watchdog_line_gets_the_ranked_differential_not_a_guess():
    d = diagnose_text(WATCHDOG.format(seq=4178, op="ALLREDUCE", numel=1))
    top = d.findings[0]
    assert top.signature == "collective-timeout-unexplained", _signatures(d)
    assert "does not show why" in top.title
    # every usual cause is in the differential, with the confirm steps that tell them apart
    for cause in ("rank 0 only", "preprocessing", "different number of batches", "data-dependent control flow"):
        assert cause in top.root_cause, cause
    steps = " ".join(top.fix.steps)
    assert "Flight Recorder" in steps and "len(dataloader)" in steps
    # a one-element all-reduce favours code around the step over uneven data
    assert any("one-element all-reduce" in n for n in top.notes), top.notes
    assert all(f.role != "root-cause" for f in d.findings if f.signature == "torch-nccl-watchdog-timeout")


def test_the_cli_names_the_recorded_preparation_timeout():
    r = run_cli("diagnose", str(CPU / "timeout_preparation.log"))
    out = r.stdout.decode() if isinstance(r.stdout, bytes) else r.stdout
    assert r.returncode != 0
    assert "preparing data" in out and "ddp_timeout" in out


def test_the_differential_reads_where_each_rank_was_when_the_collective_timed_out():
    # users' per-rank prints ("rank N: epoch E step S loss L", as corpus/cpu/timeout_uneven_iterable.log's), a tqdm 4.x bar
    # at the epoch's last step, and a gradient-sized ALLREDUCE (pytorch v2.2.0 ProcessGroupNCCL.cpp's watchdog line)
    steps = "".join(f"rank {r}: epoch 3 step {s} loss 0.5\n" for s in range(40) for r in (0, 1) if not (r == 1 and s == 39))
    bar = "Epoch 3:  99%|█████████▉| 999/1000 [12:01<00:00, 1.38it/s]\n"
    d = diagnose_text(steps + bar + WATCHDOG.format(seq=5012, op="ALLREDUCE", numel=25557032))
    top = d.findings[0]
    assert top.signature == "collective-timeout-unexplained", _signatures(d)
    assert any("rank 0 step 39 of epoch 3, rank 1 step 38 of epoch 3" in n and "rank(s) 1" in n for n in top.notes), top.notes
    assert any("999/1000" in n and "last step of the epoch" in n for n in top.notes), top.notes
    # ranks at the same step, and a bar mid-epoch, say neither
    even = "".join(f"rank {r}: epoch 3 step {s} loss 0.5\n" for s in range(40) for r in (0, 1))
    d = diagnose_text(even + "Epoch 3:  50%|█████     | 500/1000 [06:01<06:00, 1.38it/s]\n"
                      + WATCHDOG.format(seq=5012, op="ALLREDUCE", numel=25557032))
    assert not any("differs" in n or "last step of the epoch" in n for n in d.findings[0].notes), d.findings[0].notes
    # steps printed long before the timeout are not where the ranks were
    far = steps + "".join(f"unrelated line {i}\n" for i in range(1200))
    d = diagnose_text(far + WATCHDOG.format(seq=5012, op="ALLREDUCE", numel=25557032))
    assert not any("differs" in n for n in d.findings[0].notes)


def test_preprocessing_before_init_outlasting_the_store_based_barrier_is_the_preparation_cause():
    # rank 0 tokenised before init_process_group (transformers run_clm.py's desc in datasets 2.x's bar); the others'
    # store-based barrier timed out (torch 2.0+ distributed_c10d.py _store_based_barrier)
    log = ("Running tokenizer on dataset:  61%|██████    | 610000/1000000 [29:58<18:51, 339.2 examples/s]\n"
           "[rank1]: torch.distributed.DistStoreError: Timed out initializing process group in store based barrier on rank 1, for key: "
           "store_based_barrier_key:1 (world_size=2, num_workers_joined=1, timeout=0:30:00 error=wait timeout after 1800000ms, keys: "
           "/store_based_barrier_key:1:last_worker)\n")
    d = diagnose_text(log)
    assert d.findings[0].signature == "collective-timeout-at-start", _signatures(d)
    assert all(f.role != "root-cause" for f in d.findings if f.signature == "torch-store-based-barrier-timeout")
    # the same barrier timeout alone stays the store-based-barrier finding (it names the ranks that joined)
    alone = diagnose_text(log.split("\n", 1)[1])
    assert alone.findings[0].signature == "torch-store-based-barrier-timeout", _signatures(alone)


# huggingface/transformers examples' run_clm.py map desc "Running tokenizer on dataset" in tqdm 4.x's bar, the bar left
# without its newline, and CPython's traceback of another rank right behind it (the form recorded with tqdm 4.70.1 in
# signatures/python/python-unhandled-exception.toml); the paste ends inside the traceback
def _tokenizer_bar_then_cut_traceback(elapsed: str) -> str:
    return ("[2023-09-18 08:36:08,272] [INFO] [logging.py:96:log_dist] [Rank 0] DeepSpeed info: version=0.10.1, git-hash=unknown\n"
            f"Running tokenizer on dataset:  47%|████▋     | 1695000/3634744 [{elapsed}<33:25, 967.30 examples/s]Traceback (most recent call last):\n"
            '  File "/work/src/train_bash.py", line 14, in <module>\n'
            "    main()\n")


def test_a_failure_as_a_preparation_bar_reaches_the_default_timeout_is_that_timeout():
    d = diagnose_text(_tokenizer_bar_then_cut_traceback("30:09"))
    top = d.findings[0]
    assert top.signature == "collective-timeout-at-start"
    assert any("30 minutes is the process-group timeout" in w for w in top.evidence + top.notes + [top.root_cause]), top


def test_the_same_failure_long_before_any_default_timeout_is_not_called_one():
    d = diagnose_text(_tokenizer_bar_then_cut_traceback("12:40"))
    assert "collective-timeout-at-start" not in _signatures(d)
