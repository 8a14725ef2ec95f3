"""Ground truth for every CPU zoo scenario.

The truth comes from each scenario's design (which rank we made fail and how),
never from mltriage's output. `expect` lists evidence a re-run must show for the
scenario to count as reproduced: (where, substring), where `where` is
"console" or a rank number (that rank's stdout.log + stderr.log in the torchrun log dir).
"""
from dataclasses import dataclass, field

NPROC = 4


@dataclass(frozen=True)
class Scenario:
    name: str
    kind: str  # "crash" | "hang" | "healthy"
    domain: str  # "compute" | "communication"
    what: str
    initiating_rank: int | None
    collateral_ranks: list[int]
    healthy_ranks: list[int]
    expect: list[tuple[object, str]]
    env: dict[str, str] = field(default_factory=dict)
    # "standalone": torchrun --standalone; "held-port": static rendezvous on a port the runner holds
    launch: str = "standalone"
    exit_zero: bool = False


def _others(rank: int) -> list[int]:
    return [r for r in range(NPROC) if r != rank]


SCENARIOS = [
    Scenario(
        name="healthy",
        kind="healthy", domain="compute",
        what="Four ranks train five DDP steps over gloo and exit 0.",
        initiating_rank=None, collateral_ranks=[], healthy_ranks=list(range(NPROC)),
        expect=[("console", "rank 0: training finished")],
        exit_zero=True,
    ),
    Scenario(
        name="python_exception",
        kind="crash", domain="compute",
        what="Rank 2 raises IndexError at step 3; ranks 0,1,3 waiting in the DDP gradient "
             "all_reduce see the gloo connection close and are then SIGTERMed by torchrun.",
        initiating_rank=2, collateral_ranks=_others(2), healthy_ranks=[],
        expect=[(2, "IndexError: list index out of range"), ("console", "rank      : 2 (local_rank: 2)")],
    ),
    Scenario(
        name="sigkill",
        kind="crash", domain="compute",
        what="Rank 1 is killed by SIGKILL at step 2 (no traceback); torchrun reports exitcode -9 "
             "and the other ranks lose their gloo peer.",
        initiating_rank=1, collateral_ranks=_others(1), healthy_ranks=[],
        expect=[(1, "about to be SIGKILLed"), ("console", "exitcode  : -9")],
    ),
    Scenario(
        name="skipped_collective",
        kind="hang", domain="communication",
        what="Rank 3 skips the metric all_reduce and waits in barrier while ranks 0-2 wait in "
             "all_reduce; every rank hits the 10 s gloo timeout.",
        initiating_rank=3, collateral_ranks=[0, 1, 2], healthy_ranks=[],
        expect=[(3, "skipping metric all_reduce"), ("console", "Timed out waiting 10000ms")],
    ),
    Scenario(
        name="mismatched_collective",
        kind="crash", domain="communication",
        what="Rank 1 all_reduces a 5-element tensor while ranks 0,2,3 all_reduce 4 elements; "
             "TORCH_DISTRIBUTED_DEBUG=DETAIL reports the collective mismatch.",
        initiating_rank=1, collateral_ranks=[0, 2, 3], healthy_ranks=[],
        expect=[("console", "Detected mismatch between collectives on ranks")],
        env={"TORCH_DISTRIBUTED_DEBUG": "DETAIL"},
    ),
    Scenario(
        name="address_in_use",
        kind="crash", domain="communication",
        what="torchrun is started with --master-port 29517 while another process listens on it; "
             "its TCPStore server cannot bind (EADDRINUSE) and no worker starts.",
        initiating_rank=None, collateral_ranks=[], healthy_ranks=[],
        expect=[("console", "EADDRINUSE")],
        launch="held-port",
    ),
    Scenario(
        name="rank_hang",
        kind="hang", domain="compute",
        what="Rank 2 sleeps forever in compute at step 2; ranks 0,1,3 time out after 10 s in the "
             "gradient all_reduce and torchrun then SIGTERMs rank 2.",
        initiating_rank=2, collateral_ranks=_others(2), healthy_ranks=[],
        expect=[(2, "stuck in data preprocessing"), ("console", "Timed out waiting 10000ms")],
    ),
    Scenario(
        name="sys_exit",
        kind="crash", domain="compute",
        what="Rank 1 calls sys.exit(3) at step 2 without a traceback; torchrun reports exitcode 3.",
        initiating_rank=1, collateral_ranks=_others(1), healthy_ranks=[],
        expect=[(1, "giving up"), ("console", "exitcode  : 3")],
    ),
    Scenario(
        name="uneven_inputs",
        kind="crash", domain="communication",
        what="Rank 1 has 2 batches, the others 6: rank 1 finishes and exits 0 while ranks 0,2,3 wait in "
             "the gradient all_reduce of step 2 and lose their gloo peer.",
        initiating_rank=1, collateral_ranks=[0, 2, 3], healthy_ranks=[],
        expect=[(1, "training finished after 2 steps")],
    ),
    Scenario(
        name="dataloader_worker_error",
        kind="crash", domain="compute",
        what="Rank 2's DataLoader worker raises ValueError on a corrupt sample; the DataLoader "
             "re-raises it in rank 2 and the other ranks lose their gloo peer.",
        initiating_rank=2, collateral_ranks=_others(2), healthy_ranks=[],
        expect=[(2, "Caught ValueError in DataLoader worker process 0")],
    ),
]

BY_NAME = {s.name: s for s in SCENARIOS}
HELD_PORT = 29517
