#!/bin/sh
# Prints the path of the antiproof binary the scripts run, or fails
# (exit 2, saying why): $ANTIPROOF_BIN when set (it must be an executable
# file; nothing is built), else the release build, built first
# (`cargo build --release`), in the target directory cargo reports
# (`cargo metadata`: CARGO_TARGET_DIR and a configured target-dir
# included, not a hard-coded target/). Used by make-proofs.sh, replies-proven.py,
# screenshot.sh, holds-under.sh, bench-jobs.sh and bench-resume-plain.sh:
#   bin=$(scripts/release-bin.sh)
set -eu
me=release-bin.sh
if [ -n "${ANTIPROOF_BIN:-}" ]; then
  if [ -f "$ANTIPROOF_BIN" ] && [ -x "$ANTIPROOF_BIN" ]; then
    # Absolute: the callers change directory.
    case $ANTIPROOF_BIN in
      /*) echo "$ANTIPROOF_BIN" ;;
      *) echo "$(pwd)/$ANTIPROOF_BIN" ;;
    esac
    exit 0
  fi
  echo "$me: ANTIPROOF_BIN=$ANTIPROOF_BIN is not an executable file" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
cargo build --release --quiet >&2 || { echo "$me: cargo build --release failed" >&2; exit 2; }
dir=$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])') ||
  { echo "$me: cargo metadata did not say the target directory" >&2; exit 2; }
bin=$dir/release/antiproof
[ -x "$bin" ] || { echo "$me: $bin is missing after cargo build --release" >&2; exit 2; }
echo "$bin"
