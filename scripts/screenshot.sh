#!/bin/sh
# Screenshots of the proof page in a real headless browser (Debian's
# chromium), for a person to look at. Not part of CI.
#
#   scripts/screenshot.sh [--tree FILE | --db PATH] [MOVES...]
#
# Starts `antiproof serve` on a free loopback port with the given proof
# (default: proofs/*.tree), loads /browse?moves=MOVES (comma-separated UCI,
# default e2e3) and writes target/screenshot.png (1000x800; OUT_PNG=FILE
# for another file). Needs `apt-get install -y chromium`; the binary is
# $ANTIPROOF_BIN, else the release build (scripts/release-bin.sh builds
# it, wherever CARGO_TARGET_DIR puts it). Exits non-zero, saying why,
# when the server, the browser or the file is missing; "wrote FILE" only
# once FILE was written by this run.
set -eu
me=screenshot.sh
# ANTIPROOF is the older name of ANTIPROOF_BIN.
ANTIPROOF_BIN=${ANTIPROOF_BIN:-${ANTIPROOF:-}}
export ANTIPROOF_BIN
bin=$("$(dirname "$0")/release-bin.sh")
src=""
if [ "${1:-}" = "--tree" ] || [ "${1:-}" = "--db" ]; then
    [ $# -ge 2 ] || { echo "$me: $1 needs a path" >&2; exit 2; }
    src="$1 $2"
    input=$2
    shift 2
fi
moves=$(echo "${*:-e2e3}" | tr ' ' ',')
out=${OUT_PNG:-target/screenshot.png}
if [ -n "${input:-}" ] && [ -e "$out" ] && [ "$out" -ef "$input" ]; then
    echo "$me: the output $out is the input $input: refusing to overwrite it" >&2
    exit 2
fi
command -v chromium >/dev/null 2>&1 ||
    { echo "$me: chromium not found (apt-get install -y chromium)" >&2; exit 2; }
mkdir -p "$(dirname "$out")"
# The old file goes first: only a file this run writes is claimed.
rm -f "$out"
log=$(mktemp)
# shellcheck disable=SC2086
"$bin" serve $src --addr 127.0.0.1:0 >"$log" 2>&1 &
pid=$!
# `|| true`: under set -e a failing command in the trap (the server
# already gone) would change the exit status.
trap 'kill $pid 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 50); do
    grep -q "listening on" "$log" && break
    sleep 0.1
done
addr=$(sed -n 's|.*listening on http://\([^/]*\)/.*|\1|p' "$log")
[ -n "$addr" ] || { cat "$log" >&2; echo "$me: antiproof serve did not start" >&2; exit 2; }
profile=$(mktemp -d)
status=0
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --screenshot="$out" --window-size=1000,800 \
    "http://$addr/browse?moves=$moves" >/dev/null 2>&1 || status=$?
rm -rf "$profile"
[ "$status" -eq 0 ] || { echo "$me: chromium failed (exit $status)" >&2; exit 1; }
[ -s "$out" ] || { echo "$me: chromium wrote no screenshot to $out" >&2; exit 1; }
echo "wrote $out (http://$addr/browse?moves=$moves)"
