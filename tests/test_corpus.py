"""Real error output recorded on this machine (CPU) and on the 2xH200 device machine (GPU), each
produced by a command that provoked one known failure (see the .cmd file beside each log): the
diagnosis must name that failure first, and the runs that succeeded must stay healthy."""

from pathlib import Path

import pytest

from mltriage.engine import diagnose_path

CORPUS = Path(__file__).resolve().parent.parent / "corpus"

EXPECTED = {
    "gpu/compute_sanitizer_illegal_write.log": "cuda-compute-sanitizer-invalid-access",
    "gpu/cuda_oom.log": "cuda-oom",
    "gpu/dmesg_xid31_illegal_address.log": "host-xid-mmu-fault",
    "gpu/device_assert_embedding.log": "cuda-kernel-assertion-failed",
    "gpu/device_assert_index.log": "cuda-kernel-assertion-failed",
    "gpu/illegal_address_torch.log": "cuda-illegal-memory-access",
    "gpu/illegal_address_cupy.log": "cuda-illegal-memory-access",
    "gpu/invalid_ordinal.log": "cuda-invalid-device-ordinal",
    "gpu/misaligned_address_torch.log": "cuda-misaligned-address",
    "gpu/nccl_socket_ifname.log": "nccl-no-socket-interface",
    "gpu/no_gpu.log": "cuda-no-gpus-available",
    "gpu/no_gpu_nccl.log": "torch-nccl-no-gpus",
    "gpu/set_device_local_rank.log": "cuda-invalid-device-ordinal",
    "cpu/dataloader_worker_exit.log": "dataloader-worker-exit-code",
    "cpu/dataloader_fd_limit.log": "dataloader-fd-exhaustion",
    "cpu/dataloader_worker_sigbus.log": "dataloader-worker-bus-error",
    "cpu/dataloader_worker_sigkill.log": "dataloader-worker-killed",
    "cpu/shell_foreground_sigkill.log": "host-process-sigkill",
    "cpu/gloo_hang_ctrl_c.log": "run-stalled-without-error",
    "cpu/tcpstore_host_unresolvable.log": "rendezvous-host-unresolved",
    "cpu/ddp_unused_parameters.log": "torch-ddp-unused-parameters",
    "cpu/ddp_detail_segv_torchrun.log": "torchrun-worker-sigsegv",
    "cpu/ddp_detail_segv_torchrun_faulthandler.log": "python-fatal-signal",
    "cpu/gloo_peer_killed.log": "torch-gloo-connection-closed",
    "cpu/monitored_barrier_peer_exit.log": "torch-monitored-barrier-peer-failed",
    "cpu/mpi_rank_segfault.log": "mpi-process-received-signal",
    "cpu/pyspy_collective_hang.log": "run-stalled-without-error",
    "cpu/gdb_collective_hang.log": "run-stalled-without-error",
    "gpu/nccl_setup_hang_pyspy.log": "nccl-hang-in-bootstrap",
    "cpu/init_pg_unreachable.log": "torch-tcpstore-connect-timeout",
    "cpu/nan_anomaly.log": "numerics-anomaly-nan-backward",
    "cpu/rendezvous_join_timeout.log": "torchrun-rendezvous-timeout",
    "cpu/rendezvous_join_timeout_two_nodes.log": "torchrun-rendezvous-timeout",
    "cpu/tcpstore_addr_in_use.log": "torch-tcpstore-address-in-use",
    "cpu/tcpstore_connect_timeout.log": "torch-tcpstore-connect-timeout",
    "cpu/torch_load_weights_only.log": "python-torch-load-weights-only",
    # collective timeouts named by what the busy rank was doing (tests/test_causes_timeouts.py looks closer)
    "cpu/timeout_preparation.log": "collective-timeout-at-start",
    "cpu/timeout_rank0_eval.log": "collective-timeout-rank0-work",
    "cpu/timeout_uneven_iterable.log": "collective-timeout-uneven-inputs",
    "cpu/timeout_monitored_barrier.log": "collective-timeout-unexplained",
}
HEALTHY = ["gpu/nccl_p2p_disable.log", "gpu/nccl_p2p_shm_disable.log", "gpu/nccl_version.log", "gpu/peer_access.log",
           "cpu/prepare_evaluate_save_ok.log"]


@pytest.mark.parametrize("name, signature", sorted(EXPECTED.items()))
def test_recorded_failure_is_named_first(name, signature):
    d = diagnose_path(CORPUS / name)
    assert d.status == "failure"
    assert d.findings[0].signature == signature, [f.signature for f in d.findings]
    assert (CORPUS / name).with_suffix(".cmd").is_file()


@pytest.mark.parametrize("name", HEALTHY)
def test_successful_runs_stay_healthy(name):
    d = diagnose_path(CORPUS / name)
    assert d.status == "healthy", [(f.signature, f.evidence[-1]) for f in d.findings]
