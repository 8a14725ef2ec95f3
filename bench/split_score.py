#!/usr/bin/env python3
"""Score mltriage on corpora of real cases from public threads, split into a rules half and a check half.

Each case is one public thread: the log as its user posted it and the cause the thread confirmed
(the format of ../shared/field/cases/). A case's half is decided by a hash of its source URL, so it
never moves when cases are added: rules are written and tuned looking at the rules half only, and
the check half says whether they generalise. A gap of more than 10 points between the halves means
rules fit their cases' words, not their causes.

  python bench/split_score.py                                  # bench/threads/cases and ../shared/field/cases
  python bench/split_score.py --cases bench/threads/cases -v   # one corpus; misses of the rules half
  python bench/split_score.py --half rules --list-misses       # what to work on (never the check half's)
  python bench/split_score.py --json rows.json

A diagnosis is scored as ../shared/field/score.py scores it: right when its own words (never the
quoted evidence or captured facts) name the thread's cause. Exit status 0; the figures are printed.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import glob
import hashlib
import json
import os
import shlex
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CORPORA = [os.path.join(ROOT, "bench", "threads", "cases"), os.path.join(ROOT, "..", "shared", "field", "cases")]
NOT_OURS = ("evidence", "lines", "excerpt", "facts", "source", "columns")  # the log's own text


def half_of(source: str) -> str:
    """'rules' or 'check', from the source URL alone (stable as cases are added)."""
    return "rules" if hashlib.sha256(source.strip().encode()).digest()[0] % 2 == 0 else "check"


def words_of(finding) -> str:
    parts: list[str] = []

    def walk(x):
        if isinstance(x, str):
            parts.append(x)
        elif isinstance(x, dict):
            for k, v in x.items():
                if k in NOT_OURS:
                    continue
                if k == "env" and isinstance(v, dict):
                    parts.extend(f"{a}={b}" for a, b in v.items())
                else:
                    walk(v)
        elif isinstance(x, list):
            for y in x:
                walk(y)

    walk(finding)
    return " ".join(parts).lower()


def env_of(finding) -> set[str]:
    env = (finding.get("fix") or {}).get("env") or {}
    pairs = {f"{k}={v}" for k, v in env.items()} if isinstance(env, dict) else {str(e) for e in env}
    return pairs | {p.split("=", 1)[0] for p in pairs}


def run_case(case, cmd):
    t0 = time.perf_counter()
    try:
        p = subprocess.run(shlex.split(cmd), input=case["log"].encode(), capture_output=True, timeout=60)
        out = json.loads(p.stdout.decode() or "null")
        err = None if isinstance(out, dict) else f"rc={p.returncode} no JSON: {p.stderr.decode()[-200:]}"
    except Exception as e:  # a crash or a hang is a miss
        out, err = None, f"{type(e).__name__}: {e}"
    return out, err, time.perf_counter() - t0


def score(case, out, err, seconds):
    truth = case["truth"]
    findings = (out or {}).get("findings") or []
    serious = [f for f in findings if f.get("severity") in ("critical", "error")]
    row = {"id": case["id"], "kind": case["kind"], "class": case.get("class"), "half": half_of(case["source"]),
           "seconds": round(seconds, 3), "error": err, "top": findings[0].get("title") if findings else None}
    if case["kind"] == "healthy":
        row["ok"] = err is None and not serious
        row["top"] = serious[0].get("title") if serious else None
        return row
    phrases = [m.lower() for m in truth["must_mention_any"]]
    hit = lambda f: any(ph in words_of(f) for ph in phrases)
    row["top1"] = bool(findings) and hit(findings[0])
    row["top3"] = any(hit(f) for f in findings[:3])
    row["detected"] = bool(serious)
    if truth.get("fix_env_any"):
        envs = set().union(*(env_of(f) for f in findings[:3])) if findings else set()
        row["fix_env"] = any(e in envs for e in truth["fix_env_any"])
    if truth.get("initiating_rank") is not None:
        row["rank"] = (out or {}).get("initiating_rank") == truth["initiating_rank"]
    return row


def figures(rows):
    fails = [r for r in rows if r["kind"] == "failure"]
    heal = [r for r in rows if r["kind"] == "healthy"]
    pct = lambda xs: (100.0 * sum(xs) / len(xs)) if xs else float("nan")
    return {
        "cases": len(rows), "failures": len(fails), "healthy": len(heal),
        "errors": sum(1 for r in rows if r["error"]),
        "top1_pct": pct([r["top1"] for r in fails]),
        "top3_pct": pct([r["top3"] for r in fails]),
        "detected_pct": pct([r["detected"] for r in fails]),
        "fix_env_pct": pct([r["fix_env"] for r in fails if "fix_env" in r]),
        "rank_pct": pct([r["rank"] for r in fails if "rank" in r]),
        "healthy_silent_pct": pct([r["ok"] for r in heal]),
    }


def line(name, fig):
    return (f"{name:<34} cases {fig['cases']:>3} ({fig['failures']} failures, {fig['healthy']} healthy): "
            f"top1 {fig['top1_pct']:.1f}% top3 {fig['top3_pct']:.1f}% detected {fig['detected_pct']:.1f}% "
            f"env-fix {fig['fix_env_pct']:.1f}% healthy-silent {fig['healthy_silent_pct']:.1f}% errors {fig['errors']}")


def load(dirs):
    cases = []
    for d in dirs:
        for p in sorted(glob.glob(os.path.join(d, "*.json"))):
            with open(p, encoding="utf-8") as f:
                c = json.load(f)
            c["_corpus"] = os.path.basename(os.path.dirname(os.path.dirname(os.path.abspath(p))))
            cases.append(c)
    return cases


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", action="append", help="a folder of case files (repeatable)")
    ap.add_argument("--cmd", default=None)
    ap.add_argument("--half", choices=("rules", "check"), help="score only this half")
    ap.add_argument("--list-misses", action="store_true", help="print the misses (of --half, or of the rules half)")
    ap.add_argument("-v", "--verbose", action="store_true", help="with each miss, the thread's conclusion")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json")
    a = ap.parse_args()
    dirs = [d for d in (a.cases or DEFAULT_CORPORA) if os.path.isdir(d)]
    local = os.path.join(ROOT, ".venv", "bin", "mltriage")
    cmd = a.cmd or f"{local if os.path.exists(local) else 'mltriage'} diagnose --json -"
    cases = [c for c in load(dirs) if a.half is None or half_of(c["source"]) == a.half]
    with concurrent.futures.ThreadPoolExecutor(max(1, a.workers)) as pool:
        rows = list(pool.map(lambda c: score(c, *run_case(c, cmd)), cases))
    for c, r in zip(cases, rows):
        r["corpus"] = c["_corpus"]
    by_id = {c["id"]: c for c in cases}
    miss_half = a.half or "rules"
    if a.list_misses or a.verbose:
        for r in rows:
            if r["half"] != miss_half:
                continue
            if (r["kind"] == "healthy" and not r["ok"]) or (r["kind"] == "failure" and not r["top1"]):
                print(f"miss [{r['corpus']}/{r['class'] or '-'}] {r['id']}: ours={r.get('top')!r}"
                      + (f" err={r['error']}" if r["error"] else ""))
                if a.verbose:
                    print(f"     thread: {by_id[r['id']]['truth']['summary'][:400]}")
    for corpus in sorted({r["corpus"] for r in rows}):
        mine = [r for r in rows if r["corpus"] == corpus]
        for half in ("rules", "check"):
            part = [r for r in mine if r["half"] == half]
            if part:
                print(line(f"{corpus} / {half} half", figures(part)))
    # one thread in two corpora (field and threads share some sources) counts once in the totals
    seen, once = set(), []
    for c, r in zip(cases, rows):
        if c["source"].strip() not in seen:
            seen.add(c["source"].strip())
            once.append(r)
    for half in ("rules", "check"):
        part = [r for r in once if r["half"] == half]
        if part:
            print(line(f"all corpora / {half} half", figures(part)) + f" ({len(rows) - len(once)} shared threads counted once)"
                  if len(once) < len(rows) else line(f"all corpora / {half} half", figures(part)))
    fr, fc = figures([r for r in once if r["half"] == "rules"]), figures([r for r in once if r["half"] == "check"])
    if fr["failures"] and fc["failures"]:
        print(f"gap (rules - check) top1: {fr['top1_pct'] - fc['top1_pct']:+.1f} points")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({"figures": {"rules": fr, "check": fc}, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
