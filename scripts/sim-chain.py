#!/usr/bin/env python3
"""The chain of jobs behind a simulated run's virtual time.

Reads the `--json` report of `prove --executor sim` (its jobs carry
`sent_s` and `ended_s`, virtual seconds) and walks back from the job
that ended last: each job's link before it is the latest job ended by
the time it was sent whose line is a prefix of its own (the job whose
result expanded, stopped or re-numbered the node it went to). Prints
the chain, one job a row, and what its time is made of: the links'
search (their busiest thread's nodes / rate: a job of T threads,
`threads`, has searched T times that in all), their latency, and the time a link waited after
the one before it ended (the master sent it later: the workers were
all out, or the selection went elsewhere first).

  scripts/sim-chain.py RUN.json
"""

import json
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    try:
        with open(sys.argv[1]) as f:
            run = json.load(f)
    except (OSError, ValueError) as e:
        print(f"sim-chain.py: {sys.argv[1]}: {e}", file=sys.stderr)
        sys.exit(2)
    sim = run.get("sim") if isinstance(run, dict) else None
    each = (run.get("report") or {}).get("each") or [] if isinstance(run, dict) else []
    jobs = [j for j in each if j.get("ended_s") is not None]
    if not sim or not jobs:
        print(
            f"sim-chain.py: {sys.argv[1]}: not a simulated run's report "
            "(no sim, or no job's virtual times)",
            file=sys.stderr,
        )
        sys.exit(2)
    rate, latency = sim["rate_nodes_per_s"], sim["latency_s"]
    last = max(jobs, key=lambda j: (j["ended_s"], j["id"]))
    chain = [last]
    while True:
        j = chain[-1]
        words = j["line"].split()
        before = [
            k for k in jobs
            if k["ended_s"] <= j["sent_s"] + 1e-9
            and words[: len(k["line"].split())] == k["line"].split()
        ]
        if not before:
            break
        chain.append(max(before, key=lambda k: (k["ended_s"], k["id"])))
    chain.reverse()
    print(f"{'sent':>8} {'ended':>8} {'wait':>6} {'search':>7} {'threads':>7} {'nodes':>12} {'budget':>12}  outcome      line")
    search = wait = 0.0
    prev_end = 0.0
    for j in chain:
        s = j.get("span_nodes", j["nodes"]) / rate
        w = j["sent_s"] - prev_end
        search += s
        wait += w
        prev_end = j["ended_s"]
        outcome = j["outcome"] + (f"/{j['stopped_by']}" if j.get("stopped_by") else "")
        print(
            f"{j['sent_s']:8.2f} {j['ended_s']:8.2f} {w:6.2f} {s:7.2f} {j.get('threads', 1):7} {j['nodes']:12,} "
            f"{j['budget_nodes']:12,}  {outcome:12} {j['line']}"
        )
    print(
        f"chain: {len(chain)} jobs, {search:.2f} s of search, {len(chain) * latency:.2f} s of latency, "
        f"{wait:.2f} s of waiting; virtual_s {sim['virtual_s']:.2f}"
    )


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        # The reader went away (`| head`): nothing more to say.
        sys.stderr.close()
        sys.exit(0)
