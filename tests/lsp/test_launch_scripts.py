"""Where exports go in a launch script, and how values are written."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import time
from pathlib import Path

from conftest import server_env
from helpers import RawServer

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


# ---- the scan: bounded by a count of entries, incremental, off the event loop ------------------
def _age(root: Path) -> None:
    """Date the tree an hour back, as a workspace that was not just written is."""
    old = time.time() - 3600
    for directory, subdirs, files in os.walk(root):
        for name in files + subdirs:
            os.utime(os.path.join(directory, name), (old, old), follow_symlinks=False)
    os.utime(root, (old, old))


def test_the_scan_stops_at_its_entry_count_breadth_first(tmp_path: Path):
    from mltriage.lsp.launch_scripts import ScriptIndex

    (tmp_path / "train.sh").write_text("torchrun train.py\n")
    for i in range(50):  # a deep tree that comes first in name order
        (tmp_path / "aaa-data" / f"d{i:02}" / "x").mkdir(parents=True)
    (tmp_path / "zz").mkdir()
    (tmp_path / "zz" / "eval.sh").write_text("python eval.py\n")
    deep = tmp_path / "aaa-data" / "d49" / "x" / "late.sh"
    deep.write_text("srun python train.py\n")
    scan = ScriptIndex(max_entries=60).scan([tmp_path])
    # the root (3 entries), aaa-data (50) and zz (1), then 6 of the d* directories (1 each): 60
    assert not scan.complete and scan.entries == 60
    assert sorted(c.path.name for c in scan.candidates) == ["eval.sh", "train.sh"]
    again = ScriptIndex(max_entries=60).scan([tmp_path])  # the same tree, the same answer
    assert (again.entries, [c.path for c in again.candidates]) == (scan.entries, [c.path for c in scan.candidates])
    everything = ScriptIndex(max_entries=1000).scan([tmp_path])
    assert everything.complete and deep in [c.path for c in everything.candidates]


def test_a_rescan_reads_only_what_changed(tmp_path: Path):
    from mltriage.lsp.launch_scripts import ScriptIndex

    for i in range(20):
        (tmp_path / f"exp{i}").mkdir()
        (tmp_path / f"exp{i}" / "run.sh").write_text("torchrun train.py\n")
    _age(tmp_path)
    index = ScriptIndex()
    first = index.scan([tmp_path])
    assert (first.listed, first.read, len(first.candidates)) == (21, 20, 20)
    second = index.scan([tmp_path])
    assert (second.listed, second.read, second.entries) == (0, 0, first.entries)
    assert [c.path for c in second.candidates] == [c.path for c in first.candidates]
    (tmp_path / "exp3" / "new.sbatch").write_text("#SBATCH -N2\nsrun python train.py\n")  # exp3 changes
    (tmp_path / "exp7" / "run.sh").write_text("echo no launcher any more\n")  # same name, new content
    third = index.scan([tmp_path])
    assert (third.listed, third.read) == (1, 2)
    names = {str(c.path.relative_to(tmp_path)) for c in third.candidates}
    assert "exp3/new.sbatch" in names and "exp7/run.sh" not in names and len(names) == 20
    shutil.rmtree(tmp_path / "exp5")
    assert "exp5/run.sh" not in {str(c.path.relative_to(tmp_path)) for c in index.scan([tmp_path]).candidates}


async def test_a_hover_is_answered_while_the_workspace_is_scanned(tmp_path: Path):
    """A workspace of 30,000 directories: the scan took the event loop for as long as it walked (2.6 s
    for 101,003 directories), and a hover sent after a code action was answered after it."""
    root = tmp_path / "ws"
    (root / "scripts").mkdir(parents=True)
    (root / "scripts" / "train.sh").write_text("torchrun train.py\n")
    for i in range(300):
        for j in range(100):
            os.makedirs(root / "data" / f"shard{i:03}" / f"part{j:02}")
    server = await RawServer.start(sys.executable, "-m", "mltriage.server", env=server_env())
    try:
        await server.initialize(root)  # `initialized` starts the scan
        log = root / "a.log"
        server.send({"jsonrpc": "2.0", "id": "actions", "method": "textDocument/codeAction", "params": {
            "textDocument": {"uri": log.as_uri()},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
            "context": {"diagnostics": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
                                         "message": "m", "source": "mltriage",
                                         "data": {"signature": "nccl-p2p-hang", "title": "t", "env": {"NCCL_P2P_DISABLE": "1"}}}]}}})
        server.send({"jsonrpc": "2.0", "id": "hover", "method": "textDocument/hover", "params": {
            "textDocument": {"uri": log.as_uri()}, "position": {"line": 0, "character": 0}}})
        answered = []
        while len(answered) < 2:
            message = await asyncio.wait_for(server.receive(lambda m: m.get("id") in ("actions", "hover")), 120)
            answered.append(message["id"])
        assert answered == ["hover", "actions"]
        scripts = await server.request("workspace/executeCommand", {"command": "mltriage.launchScripts", "arguments": []})
        assert [s["path"] for s in scripts["result"]] == [str(root / "scripts" / "train.sh")]
    finally:
        assert await server.stop() == 0
