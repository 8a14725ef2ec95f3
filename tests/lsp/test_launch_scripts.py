"""Where exports go in a launch script, and how values are written."""

from __future__ import annotations

import os
import time
from pathlib import Path

from mltriage.library import load_library
from mltriage.lsp.launch_scripts import export_lines, find_launch_scripts, insertion_line, missing_exports


def test_insertion_after_shebang_sbatch_and_comments():
    lines = ["#!/bin/bash", "#SBATCH -N 2", "# header", "", "set -e", "srun python train.py"]
    assert insertion_line(lines) == 3
    assert insertion_line(["torchrun train.py"]) == 0
    assert insertion_line(["#!/bin/sh"]) == 1
    assert insertion_line([]) == 0


def test_values_are_quoted_but_computed_values_stay_computed():
    assert export_lines({"NCCL_P2P_DISABLE": "1"}) == ["export NCCL_P2P_DISABLE=1"]
    assert export_lines({"NCCL_DEBUG_SUBSYS": "INIT,NET GRAPH"}) == ["export NCCL_DEBUG_SUBSYS='INIT,NET GRAPH'"]
    # a value the library computes stays a command substitution; any other `$(` is text (issue 22)
    computed = load_library().get("nccl-no-socket-interface").fix_env["NCCL_SOCKET_IFNAME"]
    assert export_lines({"NCCL_SOCKET_IFNAME": computed}) == [f'export NCCL_SOCKET_IFNAME="{computed}"']
    assert export_lines({"NCCL_SOCKET_IFNAME": "$(hostname)"}) == ["export NCCL_SOCKET_IFNAME='$(hostname)'"]


def test_missing_exports_ignores_those_already_set():
    script = "#!/bin/bash\nexport NCCL_P2P_DISABLE=1\nexport NCCL_DEBUG='INFO'  # noisy\n"
    assert missing_exports(script, {"NCCL_P2P_DISABLE": "1", "NCCL_DEBUG": "INFO", "NCCL_IB_DISABLE": "1"}) == {"NCCL_IB_DISABLE": "1"}
    assert missing_exports(script, {"NCCL_P2P_DISABLE": "0"}) == {"NCCL_P2P_DISABLE": "0"}


def test_find_launch_scripts(tmp_path: Path):
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "x.sh").write_text("torchrun a.py\n")
    (tmp_path / "run.sh").write_text("#!/bin/bash\n# torchrun mentioned only in a comment\necho hi\n")
    (tmp_path / "job.sbatch").write_text("#!/bin/bash\n#SBATCH -N1\nsrun python train.py\n")
    (tmp_path / "eval.sh").write_text("python3 eval.py\n")
    found = [c.path.name for c in find_launch_scripts([tmp_path])]
    assert found == ["job.sbatch", "eval.sh"]


def test_read_script_reads_only_bounded_regular_files(tmp_path: Path):
    from mltriage.lsp.launch_scripts import MAX_SCRIPT_BYTES, read_script

    real = tmp_path / "real.sh"
    real.write_text("torchrun train.py\n")
    (tmp_path / "link.sh").symlink_to(real)  # a symlink to a script is a script
    (tmp_path / "zero.sh").symlink_to("/dev/zero")  # endless
    os.mkfifo(tmp_path / "fifo.sh")  # blocks on open and on read
    (tmp_path / "big.sh").write_bytes(b"#" * (MAX_SCRIPT_BYTES + 1))
    (tmp_path / "dir.sh").mkdir()
    assert read_script(real) == read_script(tmp_path / "link.sh") == "torchrun train.py\n"
    started = time.monotonic()
    for name in ("zero.sh", "fifo.sh", "big.sh", "dir.sh", "missing.sh"):
        assert read_script(tmp_path / name) is None, name
    assert time.monotonic() - started < 1.0
    assert sorted(c.path.name for c in find_launch_scripts([tmp_path])) == ["link.sh", "real.sh"]
