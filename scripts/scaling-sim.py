#!/usr/bin/env python3
"""Speedup curves of the job-level search on a simulated cluster.

For each line: one process's nodes (a plain `prove --json`, fresh store),
then `prove --executor sim --jobs P` for P = 1, 2, 4, ... up to --max-p,
each on a fresh store at one fixed --sim-rate (so every figure is an exact
count or a sum of them: the same on any machine, whatever its load), and
one TSV row a run: speedup (one process's time at the rate over the
virtual time), efficiency (speedup / P), work inflation (job nodes / one
process's nodes) and busy fraction. Rows already in the TSV are kept and
not run again, so an interrupted measurement resumes.

  scripts/scaling-sim.py [--rate 1.5M] [--latency 3] [--max-p 1024]
      [--min-p 1] [--memory 1G] [--job-nodes 1M] [--out docs/scaling-sim.tsv]
      [--limit TIME] [--sim-args "--job-speculation 2 ..."]
      [--baseline-nodes N] "e3 f5" "e3 a5" ...

--sim-args adds options to every simulated run (recorded in the TSV's
sim_args column, part of what makes a row the same run); in them {P}
stands for the run's workers and {P/N} for P // N, at least 1 (options
that grow with the cluster: --sim-args "--job-widen {P/2}"); --baseline-nodes
gives one process's nodes instead of proving the line once more (one line
only: 1.e3 a5 is 164,797,342 nodes at the default settings).

Then scripts/plot-scaling.py draws the TSV (docs/scaling-sim.svg).
"""

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

COLUMNS = [
    "line", "workers", "result", "baseline_nodes", "rate_nodes_per_s", "latency_s",
    "job_nodes_budget", "virtual_s", "speedup", "efficiency", "work_inflation",
    "busy_fraction", "jobs", "job_nodes", "real_nodes", "wall_s", "sim_args",
]


def binary():
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([os.path.join(here, "release-bin.sh")], stdout=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(2)
    return r.stdout.strip()


def prove(bin_, scratch, args, line):
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    cmd = [bin_, "prove", "--db", os.path.join(scratch, "s.redb"), "--json"] + args + line.split()
    t0 = time.time()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.time() - t0
    try:
        out = json.loads(r.stdout)
    except json.JSONDecodeError:
        sys.exit(f"scaling-sim: {' '.join(cmd)} failed (exit {r.returncode}): {r.stderr.strip()}")
    return out, wall


def for_p(args, p):
    """--sim-args for P workers: {P} is P, {P/N} is P // N (at least 1)."""
    def one(m):
        return str(max(1, p // int(m.group(1))) if m.group(1) else p)
    return [re.sub(r"\{P(?:/([1-9][0-9]*))?\}", one, w) for w in args]


def number(s):
    """1.5M, 500k, 3 -> float."""
    mult = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}.get(s[-1:], None)
    return float(s[:-1]) * mult if mult else float(s)


def main():
    # First, so a missing binary stops it at once (tests/scripts.rs).
    bin_ = binary()
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rate", default="1.5M", help="--sim-rate (nodes a second of one worker)")
    ap.add_argument("--latency", default="3", help="--sim-latency (seconds)")
    ap.add_argument("--min-p", type=int, default=1)
    ap.add_argument("--max-p", type=int, default=1024)
    ap.add_argument("--memory", default="1G")
    ap.add_argument("--job-nodes", default="1M")
    ap.add_argument("--limit", help="--limit of each simulated run (virtual time)")
    ap.add_argument("--out", default="docs/scaling-sim.tsv")
    ap.add_argument("--sim-args", default="",
                    help="options added to every simulated run, as one string")
    ap.add_argument("--baseline-nodes", type=int,
                    help="one process's nodes (one line only), instead of proving it")
    ap.add_argument("lines", nargs="+", help='lines, each one argument: "e3 f5"')
    a = ap.parse_args()
    if a.baseline_nodes is not None and (len(a.lines) != 1 or a.baseline_nodes < 1):
        sys.exit("scaling-sim: --baseline-nodes takes a count of 1 or more, with one line")
    sim_args = shlex.split(a.sim_args)
    done = {}
    if os.path.exists(a.out):
        with open(a.out) as f:
            head = f.readline().rstrip("\n").split("\t")
            for row in f:
                d = dict(zip(head, row.rstrip("\n").split("\t")))
                done[(d["line"], int(d["workers"]), float(d["rate_nodes_per_s"]),
                      float(d["latency_s"]), d["job_nodes_budget"], d.get("sim_args", ""))] = d
        if sim_args and "sim_args" not in head:
            sys.exit(f"scaling-sim: {a.out} has no sim_args column: give --sim-args a new --out")
    else:
        head = COLUMNS
        with open(a.out, "w") as f:
            f.write("\t".join(COLUMNS) + "\n")
    scratch = tempfile.mkdtemp(prefix="scaling-sim-")
    try:
        for line in a.lines:
            base = a.baseline_nodes
            if base is None:
                for d in done.values():
                    if d["line"] == line:
                        base = int(d["baseline_nodes"])
            if base is None:
                one, wall = prove(bin_, scratch, ["--memory", a.memory], line)
                if one["result"] != "proven":
                    sys.exit(f"scaling-sim: one process did not prove {line}: {one['result']}")
                base = one["nodes"]
                print(f"{line}: one process {base} nodes, {wall:.1f} s", flush=True)
            p = a.min_p
            while p <= a.max_p:
                key = (line, p, number(a.rate), number(a.latency), a.job_nodes,
                       " ".join(for_p(sim_args, p)))
                if key in done:
                    p *= 2
                    continue
                args = ["--executor", "sim", "--jobs", str(p), "--sim-rate", str(number(a.rate)),
                        "--sim-latency", str(number(a.latency)), "--sim-baseline", str(base),
                        "--memory", a.memory, "--job-nodes", a.job_nodes]
                if a.limit:
                    args += ["--limit", a.limit]
                run_args = for_p(sim_args, p)
                args += run_args
                out, wall = prove(bin_, scratch, args, line)
                s = out["sim"]
                row = [line, p, out["result"], base, s["rate_nodes_per_s"], s["latency_s"],
                       a.job_nodes, f"{s['virtual_s']:.3f}", f"{s['speedup']:.3f}",
                       f"{s['efficiency']:.4f}", f"{s['work_inflation']:.3f}",
                       f"{s['busy_fraction']:.4f}", s["jobs"], s["job_nodes"],
                       s["real_nodes"], f"{wall:.1f}", " ".join(run_args)]
                # In the file's own columns (an older TSV has no sim_args).
                cells = dict(zip(COLUMNS, row))
                with open(a.out, "a") as f:
                    f.write("\t".join(str(cells[c]) for c in head) + "\n")
                print(f"{line}: P={p} {out['result']} virtual {s['virtual_s']:.1f} s "
                      f"speedup {s['speedup']:.2f} inflation {s['work_inflation']:.2f} "
                      f"busy {s['busy_fraction']:.2f} ({s['jobs']} jobs, {wall:.0f} s wall)",
                      flush=True)
                p *= 2
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
