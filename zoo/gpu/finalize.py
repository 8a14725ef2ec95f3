"""Write zoo/gpu/<name>/scenario.json from each recorded console.cmd and the designed ground truth.

    python zoo/gpu/finalize.py

run_all.sh records the command, exit code and wall time on the device machine
(console.cmd); the truth below comes from each scenario's design, not from a tool.
"""
import json
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent

# name -> (initiating_rank, collateral_ranks, healthy_ranks, kind, domain, what)
TRUTH = {
    "nccl_oom": (1, [0], [], "crash", "compute",
                 "Rank 1 raises torch.OutOfMemoryError asking for 200 GiB on a 141 GB H200; rank 0, waiting "
                 "in all_reduce, is SIGTERMed by torchrun about a second later (before its 20 s watchdog)."),
    "nccl_stuck": (1, [0], [], "hang", "compute",
                   "Rank 1 sleeps before an all_reduce; rank 0's NCCL watchdog times out after 20 s and aborts "
                   "(SIGABRT), so torchrun's Root Cause names rank 0 although rank 1 is the culprit."),
    "nccl_stuck_fr": (1, [0], [], "hang", "compute",
                      "As nccl_stuck, with Flight Recorder dumps (fr/nccl_trace_rank_0, _1) and the "
                      "fr_trace analysis naming rank 1 as the missing rank."),
    "nccl_mismatch": (1, [], [0], "silent", "communication",
                      "Rank 0 all_reduces 1M floats, rank 1 2M floats; NCCL does not check sizes, the job exits 0 "
                      "and rank 1's second half is silently left unreduced (x[-1]=1.0)."),
    "nccl_mismatch_fr": (1, [], [0], "silent", "communication",
                         "As nccl_mismatch with Flight Recorder on: still no error, no timeout, no dump; exits 0."),
    "nccl_mismatch_protocol": (1, [0], [], "hang", "communication",
                               "Rank 0 all_reduces 1024 floats, rank 1 268M floats; the sizes are far enough apart "
                               "that the collective never completes and both watchdogs fire after 20 s."),
    "nccl_mismatch_protocol_fr": (1, [0], [], "hang", "communication",
                                  "As nccl_mismatch_protocol with Flight Recorder; fr_trace reports 'Culprit rank 1; "
                                  "SIZE_OR_SYNTAX_MISMATCH'. torchrun itself then crashed with JSONDecodeError "
                                  "reading rank 1's empty error.json."),
    "nccl_mismatch_detail": (1, [0], [], "crash", "communication",
                             "Rank 0 all_reduces 1M floats, rank 1 2M floats under TORCH_DISTRIBUTED_DEBUG=DETAIL: "
                             "both ranks raise 'Detected mismatch between collectives on ranks'."),
}

# With two ranks a size mismatch is symmetric: the logs show each rank's size but not which one
# is wrong. Rank 1 is the one the design changed; fr_trace blames rank 1 only because it takes
# rank 0's entry as the reference.
SYMMETRIC = {"nccl_mismatch", "nccl_mismatch_fr", "nccl_mismatch_protocol",
             "nccl_mismatch_protocol_fr", "nccl_mismatch_detail"}
SYMMETRIC_NOTE = ("2-rank size mismatch: the logs cannot tell which rank is wrong; rank 1 is the one "
                  "the design changed (1M vs 2M, or 1024 vs 268M floats)")


def main():
    for name, (init, coll, healthy, kind, domain, what) in TRUTH.items():
        d = HERE / name
        cmd_file = d / "console.cmd"
        if not cmd_file.exists():
            print(f"{name}: not recorded yet")
            continue
        command, meta = cmd_file.read_text().splitlines()[:2]
        fields = dict(re.findall(r"(\w+)=(\S+)", meta))
        truth = {
            "command": command,
            "torch": fields.get("torch", "").split("+")[0],
            "torch_build": fields.get("torch"),
            "initiating_rank": init,
            "collateral_ranks": coll,
            "healthy_ranks": healthy,
            "kind": kind,
            "domain": domain,
            "what": what,
            "nproc": 2,
            "backend": "nccl",
            "host": fields.get("host"),
            # run_all.sh exports these for every command on the device machine
            "preset_env": {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
                           "NVSHMEM_DISABLE_NVLS": "1", "PYTHONUNBUFFERED": "1"},
            "exit_code": int(fields["exit_code"]),
            "wall_s": float(fields["wall_s"]),
        }
        if name in SYMMETRIC:
            truth["culprit_identifiable_from_logs"] = False
            truth["note"] = SYMMETRIC_NOTE
        (d / "scenario.json").write_text(json.dumps(truth, indent=2) + "\n")
        print(f"{name}: exit={truth['exit_code']} wall={truth['wall_s']}s")


if __name__ == "__main__":
    main()
