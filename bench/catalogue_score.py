#!/usr/bin/env python3
"""Score `mltriage catalogue search` on real error messages from public threads, split into a rules half and a check half.

Each case (bench/catalogue_messages/cases.jsonl, one JSON object a line) is one message line as a user posted it
and the truth established by hand from upstream sources: the project, the source file (repository-relative, as
in the release) and the first and last release whose source holds the message's format. The bar of issue 21:
the FIRST result's project, file and release range are right for >= 95%. A case's half is decided by a hash of
its source URL (sha256, first byte even = rules half), as in bench/split_score.py, so it never moves when cases
are added. The set is for measurement only: no rule, sample or test is to be taken from it (see its README).

  python bench/catalogue_score.py                      # figures per half
  python bench/catalogue_score.py --list-misses        # each miss, the first result beside the truth
  python bench/catalogue_score.py --half rules --list-misses
  python bench/catalogue_score.py --json rows.json

Judged on the first result only:
  project  its `project` equals the truth's;
  file     the path of its `site` (the site it shows first; where nothing narrowed it and it has none, the site
           of the newest release it names) is the truth's path, or one of the truth's `paths` (the files the same
           message lived in over its releases), a leading src/ ignored;
  range    the first and last release over all its `sites` equal the truth's first and last, both mapped to the
           releases the catalogue covers for the truth's project (read from catalogue/data/<project>/releases.json
           through mltriage.catalogue.store, as catalogue/coverage.py does): a truth release older than the
           coverage maps to the first covered release, a newer one to the last, one between covered releases
           (libtorch covers 1.13.1 and 2.6.0 only) to the covered releases inside the truth's range;
  all      the three together.
A message with no result, a crash or a timeout is a miss on all three. Exit status 0; the figures are printed.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = os.path.join(ROOT, "bench", "catalogue_messages", "cases.jsonl")
SERVER = os.path.join(ROOT, "server")


def half_of(source: str) -> str:
    """'rules' or 'check', from the source URL alone (the rule of bench/split_score.py)."""
    return "rules" if hashlib.sha256(source.strip().encode()).digest()[0] % 2 == 0 else "check"


def python_exe() -> str:
    local = os.path.join(ROOT, ".venv", "bin", "python")
    return local if os.path.exists(local) else sys.executable


def covered_releases() -> dict[str, list[str]]:
    """Per project, the names of the releases the catalogue covers, in its order (by date)."""
    sys.path.insert(0, SERVER)
    try:
        from mltriage.catalogue.store import Catalogue

        return {name: [r.name for r in doc["releases"]] for name, doc in Catalogue().projects.items()}
    except ImportError:  # run without the project's venv: the same lists, from the files the store reads
        data = os.path.join(SERVER, "mltriage", "catalogue", "data")
        out = {}
        for name in sorted(os.listdir(data)):
            path = os.path.join(data, name, "releases.json")
            if os.path.exists(path):
                with open(path, encoding="utf-8") as f:
                    out[name] = [r[0] if isinstance(r, list) else r["name"] for r in json.load(f)["releases"]]
        return out


def _vkey(name: str):
    """A sortable key for a release name (numbers compared as numbers), for placing a release the catalogue
    does not list between the ones it does."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"[.\-+]", name.lstrip("v")))


def map_range(first: str, last: str, releases: list[str]) -> tuple[str | None, str | None]:
    """The truth's range in the releases the catalogue covers: (first covered release in it, last covered)."""
    if not releases:
        return None, None

    def pos(name, side):
        if name in releases:
            return releases.index(name)
        try:  # not listed: place it by number among the listed ones
            k = _vkey(name)
            keys = [_vkey(r) for r in releases]
            if side == "first":
                return next((i for i, rk in enumerate(keys) if rk >= k), len(releases))
            return max((i for i, rk in enumerate(keys) if rk <= k), default=-1)
        except TypeError:
            return None

    i, j = pos(first, "first"), pos(last, "last")
    if i is None or j is None or i > j or j < 0 or i >= len(releases):
        return None, None
    return releases[max(i, 0)], releases[min(j, len(releases) - 1)]


def norm_path(p: str | None) -> str:
    p = (p or "").strip().lstrip("./")
    return p[4:] if p.startswith("src/") else p


def run_case(case, timeout=60):
    t0 = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": SERVER + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else "")}
    try:  # the message goes in on stdin ('-'): a line may start with '-' or hold shell characters
        p = subprocess.run([python_exe(), "-m", "mltriage", "catalogue", "search", "--json", "-"],
                           input=case["message"].encode(), capture_output=True, timeout=timeout, env=env, cwd=ROOT)
        out = json.loads(p.stdout.decode() or "null")
        err = None if isinstance(out, list) else f"rc={p.returncode} no JSON list: {p.stderr.decode()[-200:]}"
    except Exception as e:  # a crash or a hang is a miss
        out, err = None, f"{type(e).__name__}: {e}"
    return out, err, time.perf_counter() - t0


def result_range(res, releases: list[str]) -> tuple[str | None, str | None]:
    """First and last release over the result's sites, in the catalogue's order for its project."""
    idx = []
    for s in res.get("sites") or []:
        for r in s.get("releases") or []:
            if r in releases:
                idx.append(releases.index(r))
    if not idx:
        return None, None
    return releases[min(idx)], releases[max(idx)]


def score(case, out, err, seconds, covered):
    truth = case["truth"]
    results = out if isinstance(out, list) else []
    first = results[0] if results else None
    t_rel = covered.get(truth["project"], [])
    t_first, t_last = map_range(truth["first_release"], truth["last_release"], t_rel)
    row = {"id": case["id"], "half": half_of(case["source"]), "source": case["source"], "seconds": round(seconds, 3),
           "error": err, "results": len(results),
           "truth": {"project": truth["project"], "path": truth["path"], "range": [t_first, t_last],
                     "range_as_written": [truth["first_release"], truth["last_release"]]}}
    if first is None:
        row.update(top=None, project=False, file=False, range=False, all=False, why="no result")
        return row
    r_rel = covered.get(first.get("project"), [])
    r_first, r_last = result_range(first, r_rel)
    site_path = (first.get("site") or {}).get("path")
    if site_path is None and first.get("sites"):  # nothing narrowed it: the site of the newest release it names
        site_path = max(first["sites"], key=lambda s: max((r_rel.index(x) for x in s.get("releases") or []
                                                            if x in r_rel), default=-1)).get("path")
    paths = {norm_path(p) for p in [truth["path"], *truth.get("paths", [])]}
    row["top"] = {"id": first.get("id"), "project": first.get("project"), "path": site_path,
                  "range": [r_first, r_last], "present_in": first.get("present_in"),
                  "narrowed_to": first.get("narrowed_to"), "format": (first.get("format") or "")[:160]}
    row["project"] = first.get("project") == truth["project"]
    row["file"] = row["project"] and norm_path(site_path) in paths
    row["range"] = row["project"] and t_first is not None and (r_first, r_last) == (t_first, t_last)
    row["all"] = row["project"] and row["file"] and row["range"]
    if not row["project"]:
        row["why"] = "wrong project"
    elif not row["file"]:
        row["why"] = "wrong file"
    elif not row["range"]:
        ti, tj = t_rel.index(t_first), t_rel.index(t_last)
        ri, rj = r_rel.index(r_first), r_rel.index(r_last)
        if ri <= ti and rj >= tj:
            row["why"] = "range too wide"
        elif ri >= ti and rj <= tj:
            row["why"] = "range too narrow"
        else:
            row["why"] = "range shifted"
    else:
        row["why"] = None
    return row


def figures(rows):
    pct = lambda key: (100.0 * sum(1 for r in rows if r[key]) / len(rows)) if rows else float("nan")
    return {"cases": len(rows), "project_pct": pct("project"), "file_pct": pct("file"), "range_pct": pct("range"),
            "all_pct": pct("all"), "no_result": sum(1 for r in rows if not r["results"]),
            "errors": sum(1 for r in rows if r["error"])}


def line(name, fig):
    return (f"{name:<22} cases {fig['cases']:>3}: project {fig['project_pct']:5.1f}%  file {fig['file_pct']:5.1f}%  "
            f"range {fig['range_pct']:5.1f}%  all three {fig['all_pct']:5.1f}%  (no result {fig['no_result']}, "
            f"errors {fig['errors']})")


def load(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(ln) for ln in f if ln.strip()]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default=CASES, help="the cases file (JSON lines)")
    ap.add_argument("--half", choices=("rules", "check"), help="score only this half")
    ap.add_argument("--list-misses", action="store_true", help="print each miss: the first result beside the truth")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", help="write the figures and one row per case to this file")
    a = ap.parse_args()
    covered = covered_releases()
    cases = [c for c in load(a.cases) if a.half is None or half_of(c["source"]) == a.half]
    with concurrent.futures.ThreadPoolExecutor(max(1, a.workers)) as pool:
        rows = list(pool.map(lambda c: score(c, *run_case(c), covered), cases))
    if a.list_misses:
        for r in rows:
            if r["all"]:
                continue
            t, top = r["truth"], r.get("top") or {}
            print(f"miss [{r['half']}] {r['id']} ({r['why']}){' err=' + r['error'] if r['error'] else ''}")
            print(f"     truth: {t['project']} {t['path']} {t['range'][0]}..{t['range'][1]}"
                  + (f" (as written {t['range_as_written'][0]}..{t['range_as_written'][1]})"
                     if t['range_as_written'] != t['range'] else ""))
            if top:
                print(f"     first: {top['project']} {top['path']} {top['range'][0]}..{top['range'][1]}"
                      f"  [{top['id']}] {top['format']!r}")
    by_half = {}
    for half in ("rules", "check"):
        part = [r for r in rows if r["half"] == half]
        if part:
            by_half[half] = figures(part)
            print(line(f"{half} half", by_half[half]))
    if len(by_half) == 2:
        print(line("both halves", figures(rows)))
        print(f"gap (rules - check) all three: {by_half['rules']['all_pct'] - by_half['check']['all_pct']:+.1f} points")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({"figures": by_half, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
