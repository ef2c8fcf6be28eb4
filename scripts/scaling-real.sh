#!/bin/bash
# The simulated cluster checked against real workers: for each P, a real
# `prove --executor local --jobs P --no-shared-table` (worker processes,
# each with a table of its own, as the simulation's jobs have) beside
# `prove --executor sim --jobs P` at this machine's measured rate and a
# worker start of LATENCY seconds (0.3: what a local job costs beyond its
# search, measured on rungs 8-10, docs/prove.md), each on a fresh store, ROUNDS times;
# prints each run and the ratio real wall / simulated virtual time (the
# target: 0.5 to 2). Made for a 16-core machine (the default P list,
# 2 and 16, and rung 10 take a few minutes there: under 8 in all); on
# fewer cores give --p 2.
#
#   scripts/scaling-real.sh [--rounds R] [--p "2 16"] [--latency 0.3]
#                           [--memory 1G] [PROVE-OPTIONS] [LINE...]
#                                                  (default line: e3 f5)
#
# PROVE-OPTIONS go to both runs (then give the line too), e.g. the widened
# jobs measured best on the simulation:
#   scripts/scaling-real.sh --p 16 --job-nodes 4.5M --job-widen 8 e3 f5
set -euo pipefail
rounds=2 plist="2 16" latency=0.3 memory=1G
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --p) plist=$2; shift 2 ;;
    --latency) latency=$2; shift 2 ;;
    --memory) memory=$2; shift 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || set -- e3 f5
bin=$("$(dirname "$0")/release-bin.sh")
cores=$(nproc)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
echo "line $*; $cores cores; latency $latency s; memory $memory"
for p in $plist; do
  [ "$p" -le "$cores" ] || echo "note: P=$p on $cores cores: the real run shares cores, the simulation does not"
  for r in $(seq "$rounds"); do
    rm -rf "$scratch"/*
    t0=$(date +%s.%N)
    "$bin" prove --db "$scratch/real.redb" --memory "$memory" --json --executor local \
      --jobs "$p" --no-shared-table "$@" > "$scratch/real.json" || true
    t1=$(date +%s.%N)
    "$bin" prove --db "$scratch/sim.redb" --memory "$memory" --json --executor sim \
      --jobs "$p" --sim-latency "$latency" "$@" > "$scratch/sim.json" 2> "$scratch/sim.err" || true
    python3 - "$scratch/real.json" "$scratch/sim.json" "$(echo "$t1 - $t0" | bc)" "$p" "$r" <<'PY'
import json, sys
real, sim = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
wall, p, r = float(sys.argv[3]), sys.argv[4], sys.argv[5]
rn = sum(j["nodes"] for j in real["report"]["each"])
s = sim["sim"]
print(f"P={p} round {r}: real {real['result']} {wall:.2f} s wall, {real['report']['jobs_done']} jobs, "
      f"{rn} nodes; sim {sim['result']} {s['virtual_s']:.2f} virtual s at {s['rate_nodes_per_s']:.0f} "
      f"nodes/s, {s['jobs']} jobs, {s['job_nodes']} nodes: real / sim {wall / s['virtual_s']:.2f}")
PY
  done
done
