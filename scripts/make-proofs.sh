#!/usr/bin/env bash
# Rebuilds the certified proof files in proofs/: proves each line into a
# scratch store, exports it as a Watkins win-tree file, certifies the file
# with the independent checker, and writes the sidecar JSON (the line, rule
# set, winner, size, the checker's report, and every rule set the file holds
# under: scripts/holds-under.sh). Run from the crate root:
#   scripts/make-proofs.sh            # the default lines
#   scripts/make-proofs.sh "e3 e5"    # other lines
#   scripts/make-proofs.sh --rules lichess "h4"
#       # under a rule set with the fifty-move rule: proofs/h4.fifty.tree,
#       # its sidecar naming the rule set (needs `verify --rules lichess`)
#   scripts/make-proofs.sh --rules joint "h4"   # proofs/h4.joint.tree
#   scripts/make-proofs.sh --smaller "e3 f5"
#       # proves with `prove --smaller-proof` (several times slower, smaller
#       # certificates: rung 10 80,426 positions instead of 91,656)
#   scripts/make-proofs.sh --smaller --seeds 13 "e3 g6"
#       # proves with `prove --seed S` for S = 0..12, each into its own
#       # store, and keeps the smallest proof (rung 7: 4,422 positions,
#       # seed 12, instead of 4,808); the sidecar names the seed
#   scripts/make-proofs.sh --db /work/runs/h3.redb "h3 Nh6 f4" "h3 Nh6 g4"
#       # proves nothing: exports each line's proof from that store (a long
#       # run's, with the lines it has proven: scripts/replies-proven.py
#       # lists them), then certifies and records it as above; a line the
#       # store has not proven is an error
#   scripts/make-proofs.sh --tables DIR --db S "LINE"
#       # a store proven with `prove --tables DIR` (endgame tables of the
#       # same rule set): the export expands every table leaf
#       # (`export --expand-tables`), so the file needs no tables; without
#       # --db the lines are proven with the tables too
set -euo pipefail
rules=international
smaller=""
seeds=1
from_db=""
tables=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rules) rules=$2; shift 2 ;;
    --smaller) smaller="--smaller-proof"; shift ;;
    --tables)
      [ -d "${2-}" ] || { echo "make-proofs.sh: --tables takes a directory of endgame tables, not '${2-}'" >&2; exit 2; }
      tables=(--tables "$2"); shift 2 ;;
    --db)
      from_db=${2-}; shift $(($# > 1 ? 2 : 1))
      [ -f "$from_db" ] || { echo "make-proofs.sh: --db takes an existing store, not '$from_db'" >&2; exit 2; } ;;
    --seeds)
      seeds=${2-}; shift $(($# > 1 ? 2 : 1))
      case "$seeds" in
        '' | *[!0-9]* | 0) echo "make-proofs.sh: --seeds takes a count of 1 or more, not '$seeds'" >&2; exit 2 ;;
      esac ;;
    *) break ;;
  esac
done
if [ -n "$from_db" ]; then
  # The store's proofs are exported below; `prove` is not run.
  [ "$seeds" -eq 1 ] && [ -z "$smaller" ] || { echo "make-proofs.sh: --db proves nothing: no --smaller or --seeds with it" >&2; exit 2; }
  seeds=0
fi
# The file name says the rule set unless it is plain international:
# h4.tree, h4.joint.tree, h4.fifty.tree, h4.joint.fifty.tree.
suffix=""
fifty=false
case "$rules" in
  lichess | *+fifty | *+50 | *_fifty) suffix=".fifty"; fifty=true ;;
esac
case "$rules" in
  fics*) suffix=".fics$suffix" ;;
  joint*) suffix=".joint$suffix" ;;
esac
# The binary: $ANTIPROOF_BIN, else the release build wherever cargo puts
# it (CARGO_TARGET_DIR included); a missing one stops here, exit 2.
bin=$("$(dirname "$0")/release-bin.sh")
cd "$(dirname "$0")/.."
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
if [ $# -eq 0 ]; then
  set -- "e4" "d4" "d3" "e3 d5" "e3 d6" "e3 Na6" "e3 g6" "e3 e5" "e3 f5" "e3 Nf6" "e3 h6" "e3 a5" "e3 a6" "e3 h5" "Nc3" "Nf3" "f4" "h4"
fi
# With tables, every export expands their leaves: the file needs none.
expand=()
[ ${#tables[@]} -eq 0 ] || expand=(--expand-tables "${tables[@]}")
mkdir -p proofs
for line in "$@"; do
  name=$(echo "$line" | tr ' ' '-')$suffix
  # Each seed into its own store; the smallest proof is kept (the first
  # of equal ones).
  best=""
  best_size=0
  [ -z "$from_db" ] || best=0
  for ((seed = 0; seed < seeds; seed++)); do
    db="$scratch/$name.$seed.redb"
    # shellcheck disable=SC2086
    report=$("$bin" prove --memory 8G --rules "$rules" $smaller ${tables[@]+"${tables[@]}"} --seed "$seed" --json --db "$db" $line) ||
      { echo "make-proofs.sh: prove $line failed (exit $?)" >&2; exit 1; }
    size=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["proof_positions"])' "$report")
    if [ "$seeds" -gt 1 ]; then echo "$line: seed $seed, $size positions" >&2; fi
    if [ -z "$best" ] || [ "$size" -lt "$best_size" ]; then
      [ -n "$best" ] && rm -f "$scratch/$name.$best.redb"
      best=$seed
      best_size=$size
    else
      rm -f "$db"
    fi
  done
  # Small proofs stay plain .tree files; one over 1 MiB is written
  # zstd-compressed (.tree.zst, level 19), split into one file a reply of
  # the loser where a file would pass 50 MB (antiproof openings adds the
  # parts up again). The other form of the same name is removed.
  store=${from_db:-$scratch/$name.$best.redb}
  plain="$scratch/$name.tree"
  # shellcheck disable=SC2086
  "$bin" export --rules "$rules" --db "$store" ${expand[@]+"${expand[@]}"} $line -o "$plain" >/dev/null
  if [ "$(stat -c %s "$plain")" -le 1048576 ]; then
    rm -f "proofs/$name.tree.zst"
    mv "$plain" "proofs/$name.tree"
    files=("proofs/$name.tree")
  else
    rm -f "proofs/$name.tree"
    # shellcheck disable=SC2086
    mapfile -t files < <("$bin" export --rules "$rules" --db "$store" ${expand[@]+"${expand[@]}"} $line \
      -o "proofs/$name.tree.zst" --zstd-level 19 --split-above 50M | sed -n 's/^wrote \(.*\): rules .*/\1/p')
  fi
  [ "${#files[@]}" -gt 0 ] || { echo "make-proofs.sh: exporting $line wrote no file" >&2; exit 1; }
  for tree in "${files[@]}"; do
    [ -s "$tree" ] || { echo "make-proofs.sh: exporting $line: $tree was not written" >&2; exit 1; }
    side="${tree%.zst}"; side="${side%.tree}.json"
    report=$("$bin" verify --rules "$rules" --tree "$tree" --json) ||
      { echo "make-proofs.sh: $tree is not certified (verify exit $?)" >&2; exit 1; }
    # A part's line is its own (the whole line and the moves to its root).
    part_line=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["root_line"])' "$report")
    [ "${#files[@]}" -gt 1 ] || part_line="$line"
    python3 - "$part_line" "$report" "$fifty" "$best" > "$side" <<'PY'
import json, sys
line, report, fifty = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3] == "true"
seed = int(sys.argv[4])
rules = report["rules"].split("+")[0]
out = {"line": line, "rules": rules, "winner": report["winner"],
       "fifty_move_rule": fifty, "rule_set": rules + ("+fifty" if fifty else ""),
       "positions": report["positions"], "verified": report["verdict"] == "certified",
       "verify": {k: report[k] for k in ("verdict", "positions", "positions_with_repeats",
                                          "leaves", "longest_line", "root_fen")}}
if seed:
    out["seed"] = seed
print(json.dumps(out, indent=1, sort_keys=True))
PY
    ANTIPROOF_BIN=$bin scripts/holds-under.sh "$tree" >/dev/null
    echo "$tree: $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["winner"], "wins,", d["positions"], "positions, verified" if d["verified"] else "NOT verified")' "$side")"
  done
done
