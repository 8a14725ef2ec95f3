#!/usr/bin/env python3
"""Does a right answer survive the ways the same failure's log differs from one run to the next?

For every case of the rules half that mltriage gets right first, the log is rewritten in ways that keep
its cause and change only its form, as logs of the same failure differ between launchers, terminals and
threads: each line behind a per-rank or per-worker prefix (torchrun's ``[rank0]:``, Ray's
``(RayWorkerWrapper pid=N)``, docker compose's ``svc-1  | ``), indented as a pasted code block, with
Windows line ends, with ANSI colours on its level words, or only its last 40 lines. A rewrite that
loses the answer is a rule that fits a sample's form, not its cause: that is what the check half pays
for. Only the rules half is rewritten (rules are tuned on it; the check half stays unseen).

  python bench/perturb_score.py                 # the figure per rewrite, and the cases each one broke
  python bench/perturb_score.py --json out.json

Exit status 0; the figures are printed.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import glob
import json
import os
import re
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from split_score import DEFAULT_CORPORA, half_of, words_of  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_LEVEL = re.compile(r"\b(ERROR|WARNING|WARN|CRITICAL|FATAL|Error)\b")


def _each_line(log: str, prefix) -> str:
    return "\n".join(prefix(i) + line if line.strip() else line for i, line in enumerate(log.splitlines())) + "\n"


REWRITES = {
    "rank-prefix": lambda log: _each_line(log, lambda i: "[rank0]: "),
    "ray-prefix": lambda log: _each_line(log, lambda i: "(RayWorkerWrapper pid=48213) "),
    "compose-prefix": lambda log: _each_line(log, lambda i: "trainer-1  | "),
    "indented": lambda log: _each_line(log, lambda i: "    "),
    "crlf": lambda log: log.replace("\n", "\r\n"),
    "ansi": lambda log: _LEVEL.sub(lambda m: f"\x1b[31m{m.group(1)}\x1b[0m", log),
    "tail-40": lambda log: "\n".join(log.splitlines()[-40:]) + "\n",
    "kubectl-timestamps": lambda log: _each_line(log, lambda i: "2024-05-01T12:00:%02d.123456789Z " % (i % 60)),
    "journald": lambda log: _each_line(log, lambda i: "May 01 12:00:%02d node01 python3[48213]: " % (i % 60)),
    "quoted": lambda log: _each_line(log, lambda i: "> "),
    "wrapped-120": lambda log: "\n".join(line[k:k + 120] for line in log.splitlines() for k in range(0, max(len(line), 1), 120)) + "\n",
}


def diagnose(cmd: list[str], log: str) -> dict | None:
    try:
        p = subprocess.run(cmd, input=log.encode("utf-8", "surrogateescape"), capture_output=True, timeout=120)
        out = json.loads(p.stdout.decode() or "null")
        return out if isinstance(out, dict) else None
    except (subprocess.TimeoutExpired, ValueError):
        return None


def right_first(doc: dict | None, case: dict) -> bool:
    findings = (doc or {}).get("findings") or []
    phrases = [m.lower() for m in case["truth"]["must_mention_any"]]
    return bool(findings) and any(ph in words_of(findings[0]) for ph in phrases)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cmd", default=f"{os.path.join(ROOT, '.venv', 'bin', 'mltriage')} diagnose --json -")
    ap.add_argument("--cases", action="append")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rewrite", action="append", choices=sorted(REWRITES), help="only these rewrites (repeatable)")
    ap.add_argument("--json")
    a = ap.parse_args()
    rewrites = {name: REWRITES[name] for name in (a.rewrite or REWRITES)}
    cmd = shlex.split(a.cmd)
    cases, seen = [], set()
    for folder in a.cases or DEFAULT_CORPORA:
        for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
            case = json.load(open(path, encoding="utf-8"))
            if case["kind"] == "failure" and half_of(case["source"]) == "rules" and case["source"] not in seen:
                seen.add(case["source"])
                cases.append(case)
    with concurrent.futures.ThreadPoolExecutor(a.workers) as pool:
        hits = [c for c, ok in zip(cases, pool.map(lambda c: right_first(diagnose(cmd, c["log"]), c), cases)) if ok]
        jobs = [(c, name) for c in hits for name in rewrites]
        kept = list(pool.map(lambda job: right_first(diagnose(cmd, rewrites[job[1]](job[0]["log"])), job[0]), jobs))
    rows = [{"id": c["id"], "rewrite": name, "kept": ok} for (c, name), ok in zip(jobs, kept)]
    print(f"rules half: {len(hits)} of {len(cases)} failures right first; each rewritten {len(rewrites)} ways")
    for name in rewrites:
        mine = [r for r in rows if r["rewrite"] == name]
        lost = [r["id"] for r in mine if not r["kept"]]
        print(f"  {name:<15} kept {len(mine) - len(lost):>3}/{len(mine)} ({100.0 * (len(mine) - len(lost)) / max(1, len(mine)):.1f}%)"
              + (f"  lost: {', '.join(lost[:8])}" + (" ..." if len(lost) > 8 else "") if lost else ""))
    total = sum(r["kept"] for r in rows)
    print(f"all rewrites: kept {total}/{len(rows)} ({100.0 * total / max(1, len(rows)):.1f}%)")
    if a.json:
        json.dump({"hits": len(hits), "cases": len(cases), "rows": rows}, open(a.json, "w"), indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
