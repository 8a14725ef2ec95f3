"""Record real single-process (or tiny multi-process) CPU error outputs into corpus/cpu/.

    python zoo/record_corpus.py [--only NAME] [--out DIR]

For each entry: <out>/<name>.log is exactly what the command printed (stdout and
stderr interleaved) and <out>/<name>.cmd holds the command on its first line, then
the exit code, wall time and torch version. Commands run from the repo root.
"""
import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parent.parent
P = "python zoo/cpu_raw/"

# name -> (command, the substring that proves the intended error happened)
ENTRIES = {
    "dataloader_worker_sigkill": (P + "dataloader_worker_sigkill.py", "is killed by signal: Killed"),
    "dataloader_worker_sigbus": (P + "dataloader_worker_sigbus.py", "is killed by signal: Bus error"),
    "dataloader_worker_exit": (P + "dataloader_worker_exit.py", "exited unexpectedly"),
    "nan_anomaly": (P + "nan_anomaly.py", "returned nan values in its 0th output"),
    "torch_load_weights_only": (P + "torch_load_weights_only.py", "Weights only load failed"),
    "ddp_unused_parameters": (
        "torchrun --standalone --nproc-per-node 2 --tee 3 zoo/cpu_raw/ddp_unused_parameters.py",
        "Expected to have finished reduction in the prior iteration"),
    "tcpstore_connect_timeout": (P + "tcpstore_connect_timeout.py", "timed out"),
    "init_pg_unreachable": (P + "init_pg_unreachable.py", "Error"),
    "tcpstore_addr_in_use": (P + "tcpstore_addr_in_use.py", "EADDRINUSE"),
    "gloo_peer_killed": (P + "gloo_peer_killed.py", "by peer"),
    "gloo_stall_progress": (P + "gloo_stall_progress.py", "0/16"),
    "handled_exception": (P + "handled_exception.py", "training finished"),
    "launch_local_rank_argument": (
        "python -m torch.distributed.launch --nproc-per-node 2 zoo/cpu_raw/argparse_local_rank.py",
        "unrecognized arguments: --local-rank"),
    "rendezvous_join_timeout": (
        "torchrun --nnodes 2 --nproc-per-node 1 --rdzv-backend c10d --rdzv-endpoint 127.0.0.1:29533 "
        "--rdzv-conf join_timeout=10 zoo/scenarios/healthy.py",
        "RendezvousTimeoutError"),
    # the same, with torchrun's INFO log: its launch-config dump says the run spans two nodes (min_nodes / max_nodes)
    "rendezvous_join_timeout_two_nodes": (
        "LOGLEVEL=INFO torchrun --nnodes 2 --nproc-per-node 1 --rdzv-backend c10d --rdzv-endpoint 127.0.0.1:29534 "
        "--rdzv-conf join_timeout=8 zoo/scenarios/healthy.py",
        "min_nodes"),
    # collective timeouts with what the ranks were doing before them (gloo, short process-group timeouts)
    "timeout_preparation": ("torchrun --standalone --nproc-per-node 2 --tee 3 zoo/cpu_raw/timeout_preparation.py", "Timed out"),
    "timeout_rank0_eval": ("torchrun --standalone --nproc-per-node 2 --tee 3 zoo/cpu_raw/timeout_rank0_eval.py", "Timed out"),
    "timeout_uneven_iterable": ("torchrun --standalone --nproc-per-node 2 --tee 3 zoo/cpu_raw/timeout_uneven_iterable.py",
                                "Length of IterableDataset"),
    "timeout_monitored_barrier": ("torchrun --standalone --nproc-per-node 2 --tee 3 zoo/cpu_raw/timeout_monitored_barrier.py",
                                  "monitoredBarrier"),
    "prepare_evaluate_save_ok": ("torchrun --standalone --nproc-per-node 2 --tee 3 zoo/cpu_raw/prepare_evaluate_save_ok.py",
                                 "training finished"),
    "ddp_detail_segfault": (
        "TORCH_DISTRIBUTED_DEBUG=DETAIL torchrun --standalone --nproc-per-node 2 --tee 3 zoo/scenarios/healthy.py",
        "Segmentation fault"),
}
TIMEOUT_S = 90


def record(name: str, out: Path) -> tuple[int, float, bool]:
    command, proof = ENTRIES[name]
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("TORCH_DISTRIBUTED_DEBUG", None)
    started = time.monotonic()
    with open(out / f"{name}.log", "wb") as log:
        proc = subprocess.Popen(["bash", "-c", command], cwd=REPO, env=env, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            rc = proc.wait(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # our own process group only
            rc = proc.wait()
    wall = time.monotonic() - started
    (out / f"{name}.cmd").write_text(
        f"{command}\n# exit_code={rc} wall_s={wall:.1f} torch={torch.__version__} (cwd: repo root)\n")
    ok = proof in (out / f"{name}.log").read_text(errors="replace")
    return rc, wall, ok


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", choices=sorted(ENTRIES))
    ap.add_argument("--out", type=Path, default=REPO / "corpus" / "cpu")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    bad = 0
    for name in args.only or ENTRIES:
        rc, wall, ok = record(name, args.out)
        bad += not ok
        print(f"{name:28s} exit={rc:<4} {wall:5.1f}s  {'ok' if ok else 'EXPECTED TEXT MISSING'}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
