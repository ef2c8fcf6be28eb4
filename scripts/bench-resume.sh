#!/usr/bin/env bash
# What a lost machine costs a job-level run with --state (issue 30):
#   A: the line proven uninterrupted, on a fresh store;
#   B: the same command with --state, killed with SIGKILL after half of A's
#      wall time, its store, work directory and table deleted (a fresh
#      machine), then the same command again until it is proven.
# Prints the nodes in jobs of A and of B (the killed run's as its last
# status.json counted them, at most 10 s old, plus the resumed run's) and
# their ratio. Run from the crate root:
#   scripts/bench-resume.sh [--jobs N] [--memory M] [--bin PATH] e3 h6
set -euo pipefail
jobs=2 memory=2G
bin=${ANTIPROOF_BIN:-}
while [ $# -gt 0 ]; do
  case "$1" in
    --jobs) jobs=$2; shift 2 ;;
    --memory) memory=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "bench-resume.sh: give a line, e.g. e3 h6" >&2; exit 2; }
if [ -z "$bin" ]; then
  target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
  bin=$target/release/antiproof
fi
[ -x "$bin" ] || { echo "bench-resume.sh: no binary at $bin (cargo build --release)" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
common=(prove --jobs "$jobs" --executor threads --memory "$memory" --json)
nodes() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(e["nodes"] for e in d["report"]["each"]))' "$1"; }

t0=$(date +%s.%N)
"$bin" "${common[@]}" --db "$dir/a.redb" "$@" > "$dir/a.json" 2> "$dir/a.err"
ta=$(python3 -c "import time; print(time.time() - $t0)")
na=$(nodes "$dir/a.json")
echo "A uninterrupted: $(python3 -c "print(round($ta))") s, $na nodes in jobs"

half=$(python3 -c "print(max(5, $ta / 2))")
"$bin" "${common[@]}" --db "$dir/b.redb" --state "$dir/b.state.zst" --state-every 20s "$@" \
  > "$dir/b1.json" 2> "$dir/b1.err" &
pid=$!
sleep "$half"
# Kill just after a status file was written, so its count is fresh.
st="$dir/b.redb.jobs/status.json"
before=$(stat -c %Y "$st" 2>/dev/null || echo 0)
for _ in $(seq 1 120); do
  now=$(stat -c %Y "$st" 2>/dev/null || echo 0)
  [ "$now" != "$before" ] && break
  sleep 0.1
done
kill -9 "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
nb1=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["job_nodes"])' "$st")
state_bytes=$(stat -c %s "$dir/b.state.zst" 2>/dev/null || echo 0)
rm -rf "$dir/b.redb" "$dir/b.redb.jobs"
"$bin" "${common[@]}" --db "$dir/b.redb" --state "$dir/b.state.zst" --state-every 20s "$@" \
  > "$dir/b2.json" 2> "$dir/b2.err"
nb2=$(nodes "$dir/b2.json")
grep -h "restored" "$dir/b2.err" || true
echo "B killed after $(python3 -c "print(round($half))") s ($nb1 nodes in jobs, state file $state_bytes bytes), resumed on a fresh store: $nb2 more nodes in jobs, $(python3 -c "import json; print(json.load(open('$dir/b2.json'))['result'])")"
python3 -c "print(f'B / A = {($nb1 + $nb2) / $na:.3f}')"
