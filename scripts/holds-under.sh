#!/usr/bin/env bash
# Records in each proof file's sidecar the rule sets it holds under: runs
# the independent checker on the file under every rule set (international,
# fics, joint, each without and with the fifty-move rule) and writes the
# certified ones to the sidecar's "holds_under" list, which `antiproof
# openings` shows. Run from the crate root:
#   scripts/holds-under.sh proofs/*.tree proofs/*.tree.zst
set -euo pipefail
bin=$("$(dirname "$0")/release-bin.sh")
cd "$(dirname "$0")/.."
for tree in "$@"; do
  side="${tree%.zst}"; side="${side%.bz2}"; side="${side%.tree}.json"
  [ -f "$side" ] || { echo "$tree: no sidecar $side" >&2; exit 2; }
  winner=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("winner",""))' "$side")
  holds=()
  for r in international fics joint international+fifty fics+fifty joint+fifty; do
    if "$bin" verify --tree "$tree" --rules "$r" ${winner:+--winner "$winner"} >/dev/null 2>&1; then
      holds+=("$r")
    fi
  done
  python3 - "$side" "${holds[@]}" <<'PY'
import json, sys
path, holds = sys.argv[1], sys.argv[2:]
with open(path) as f:
    d = json.load(f)
d["holds_under"] = holds
with open(path + ".tmp", "w") as f:
    f.write(json.dumps(d, indent=1, sort_keys=True) + "\n")
import os
os.replace(path + ".tmp", path)
PY
  echo "$tree: holds under ${holds[*]:-nothing}"
done
