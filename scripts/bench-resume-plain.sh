#!/bin/bash
# What a lost machine costs a plain search with --state (issue 30):
#   the line proven uninterrupted (A), against the same command with --state
#   stopped at half of A's nodes (its state saved as it stops), its store and
#   saved table deleted, and run again (B). Prints both runs' nodes and B / A.
# Usage: scripts/bench-resume-plain.sh [--state-tt N] LINE...   (e.g. e3 a5)
# The binary is scripts/release-bin.sh's ($ANTIPROOF_BIN, else the release
# build); stores in a temporary directory, removed at the end.
set -euo pipefail
bin=$("$(dirname "$0")/release-bin.sh")
tt=()
if [ "${1:-}" = "--state-tt" ]; then tt=(--state-tt "$2"); shift 2; fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
common=(prove --memory 1G --json)
nodes() { python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["nodes"], r["result"])'; }
read -r a ares < <("$bin" "${common[@]}" --db "$dir/a.redb" "$@" 2>/dev/null | nodes)
half=$((a / 2))
read -r b1 _ < <("$bin" "${common[@]}" --db "$dir/b.redb" --state "$dir/b.state.zst" "${tt[@]}" \
    --limit "$half nodes" "$@" 2>/dev/null | nodes)
rm -f "$dir/b.redb" "$dir/b.redb.table"
read -r b2 bres < <("$bin" "${common[@]}" --db "$dir/b.redb" --state "$dir/b.state.zst" "${tt[@]}" \
    "$@" 2>/dev/null | nodes)
python3 - "$a" "$ares" "$b1" "$b2" "$bres" "$(stat -c %s "$dir/b.state.zst")" <<'P'
import sys
a, ares, b1, b2, bres, size = sys.argv[1:]
a, b1, b2 = int(a), int(b1), int(b2)
print(f"uninterrupted: {a:,} nodes, {ares}")
print(f"stopped at {b1:,} nodes (state file {int(size):,} bytes), resumed: {b2:,} more, {bres}")
print(f"B / A = {(b1 + b2) / a:.3f}")
P
