#!/bin/bash
# The job-level search against one process, side by side in one run:
# alternates `prove LINE` (one search) and `prove --jobs N --executor E LINE`
# (a master and N jobs), each on a fresh store, ROUNDS times, and prints
# each run's wall and CPU seconds and nodes, then the ratio of the median
# wall times (jobs / one process). Targets are ratios, never absolute times.
#
#   scripts/bench-jobs.sh [--rounds R] [--jobs N] [--executor search|threads|local]
#                         [--memory M] [--many-args "ARGS"] [LINE...]   (default line: e3 f5)
#
# --many-args: more options of the job-level run alone, split on spaces
# (e.g. "--job-widen 2 --job-nodes 1G").
set -euo pipefail
rounds=3 jobs=2 executor=search memory=1G many_args=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --executor) executor=$2; shift 2 ;;
    --memory) memory=$2; shift 2 ;;
    --many-args) many_args=$2; shift 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || set -- e3 f5
bin=$("$(dirname "$0")/release-bin.sh")
cd "$(dirname "$0")/.."
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
one=() many=()
for r in $(seq "$rounds"); do
  for mode in one many; do
    rm -rf "$scratch"/*
    args=(prove --db "$scratch/s.redb" --memory "$memory" --json)
    if [ "$mode" = many ]; then
      args+=(--jobs "$jobs" --executor "$executor")
      # shellcheck disable=SC2206 # split on spaces, as documented
      if [ -n "$many_args" ]; then args+=($many_args); fi
    fi
    t0=$(date +%s.%N)
    /usr/bin/time -f "%U %S" -o "$scratch/time" "$bin" "${args[@]}" "$@" > "$scratch/out.json" || true
    t1=$(date +%s.%N)
    wall=$(echo "$t1 - $t0" | bc)
    cpu=$(awk '{print $1 + $2}' "$scratch/time")
    read -r result nodes < <(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
r = d.get("report")
nodes = sum(j["nodes"] for j in r["each"]) if isinstance(r, dict) and "each" in r else d.get("nodes", 0)
print(d["result"], nodes)' "$scratch/out.json")
    printf '%-4s round %d: %-8s %7.2f s wall %7.2f s CPU %12d nodes\n' "$mode" "$r" "$result" "$wall" "$cpu" "$nodes"
    if [ "$mode" = one ]; then one+=("$wall"); else many+=("$wall"); fi
  done
done
python3 - "${one[*]}" "${many[*]}" "$jobs" "$executor${many_args:+ $many_args}" "$*" <<'PY'
import statistics, sys
one = [float(x) for x in sys.argv[1].split()]
many = [float(x) for x in sys.argv[2].split()]
m1, mn = statistics.median(one), statistics.median(many)
print(f"line {sys.argv[5]}: median wall one process {m1:.2f} s, --jobs {sys.argv[3]} --executor {sys.argv[4]} {mn:.2f} s: ratio {mn / m1:.2f}")
PY
