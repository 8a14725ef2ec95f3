"""Same answer before and after a refactor: `mltriage diagnose --json` of every file of corpus/ and
examples/ (and of each rank-log directory under corpus/ and zoo/, read as one job), run under two
source trees, compared document by document.

    python bench/same_json.py OTHER_TREE [--tree THIS_TREE] [--out DIR] [--extra DIR ...]

``--extra``: more inputs (each file or directory directly inside DIR), e.g. the worst-case inputs of
bench/lsp/bench_worst_case.py written out, which reach the engine's limits that corpus logs do not.

Each tree runs in its own interpreter (PYTHONPATH=TREE/server) that calls the CLI's `main` once per
input, so the documents are exactly what the command prints (and its exit code is compared too).
Exit status 1 and the first differences printed when any input differs. An input on which both
trees spent the regex budget can differ when the other tree is older than issue 20 item 2 (its budget
was wall-clock time; it now counts characters searched): it is listed apart, not counted as a difference.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

RUNNER = r"""
import contextlib, io, json, os, sys
import mltriage
from mltriage.cli import main
# the tree asked for, never an installed copy that PYTHONPATH fell through to
assert os.path.realpath(mltriage.__file__).startswith(os.path.realpath(sys.argv[2])), (mltriage.__file__, sys.argv[2])
out = open(sys.argv[1], "w")
for path in sys.stdin.read().splitlines():
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        try:
            rc = main(["diagnose", "--json", path])
        except SystemExit as exc:
            rc = exc.code
    out.write(json.dumps({"input": path, "rc": rc, "stdout": buf.getvalue()}) + "\n")
out.close()
"""


def inputs(root: Path) -> list[str]:
    files = sorted(str(p) for d in ("corpus", "examples") for p in (root / d).rglob("*") if p.is_file())
    logdirs = sorted(str(p) for d in ("corpus", "zoo") for p in (root / d).rglob("logdir") if p.is_dir())
    return files + logdirs


def run_tree(tree: Path, paths: list[str], out: Path) -> dict[str, dict]:
    env = {**os.environ, "PYTHONPATH": str(tree / "server"), "PYTHONHASHSEED": "0"}
    if not (tree / "server" / "mltriage" / "__init__.py").is_file():
        raise SystemExit(f"{tree} holds no server/mltriage: not a source tree of mltriage")
    subprocess.run([sys.executable, "-c", RUNNER, str(out), str(tree / "server")], input="\n".join(paths), text=True, env=env, check=True)
    return {doc["input"]: doc for doc in map(json.loads, out.read_text().splitlines())}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("other", type=Path, help="the tree to compare with (e.g. a worktree of main)")
    ap.add_argument("--tree", type=Path, default=ROOT)
    ap.add_argument("--out", type=Path, default=None, help="keep each tree's documents here")
    ap.add_argument("--extra", type=Path, nargs="*", default=[], help="directories of more inputs")
    args = ap.parse_args()
    paths = inputs(args.tree) + [str(p) for d in args.extra for p in sorted(d.iterdir())]
    out = args.out or Path(tempfile.mkdtemp(prefix="mltriage-same-json-"))
    out.mkdir(parents=True, exist_ok=True)
    mine = run_tree(args.tree.resolve(), paths, out / "this.jsonl")
    theirs = run_tree(args.other.resolve(), paths, out / "other.jsonl")
    timed = "the regex time budget was spent"  # (only a tree older than issue 20 item 2 says "time")
    changed = [p for p in paths if mine[p] != theirs[p]]
    timing = [p for p in changed if "regex" in mine[p]["stdout"] and timed in theirs[p]["stdout"]]
    differ = [p for p in changed if p not in timing]
    for p in differ[:5]:
        a, b = theirs[p], mine[p]
        print(f"--- {p}: exit {b['rc']} here, {a['rc']} there")
        diff = difflib.unified_diff(a["stdout"].splitlines(), b["stdout"].splitlines(), "other", "this", lineterm="", n=1)
        print("\n".join(list(diff)[:60]))
    for p in timing:
        print(f"(timing-dependent: {p} spent the regex time budget in both trees, at different lines)")
    print(f"{len(paths)} inputs ({sum(1 for p in paths if Path(p).is_dir())} directories): "
          f"{len(paths) - len(changed)} the same, {len(differ)} differ, {len(timing)} timing-dependent")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
