#!/bin/sh
# Screenshots of the proof page in a real headless browser (Debian's
# chromium), for a person to look at. Not part of CI.
#
#   scripts/screenshot.sh [--tree FILE | --db PATH] [MOVES...]
#
# Starts `antiproof serve` on a free loopback port with the given proof
# (default: proofs/*.tree), loads /browse?moves=MOVES (comma-separated UCI,
# default e2e3) and writes target/screenshot.png (1000x800). Needs
# `apt-get install -y chromium` and a built binary (cargo build --release).
set -eu
bin=${ANTIPROOF:-target/release/antiproof}
src=""
if [ "${1:-}" = "--tree" ] || [ "${1:-}" = "--db" ]; then
    src="$1 $2"
    shift 2
fi
moves=$(echo "${*:-e2e3}" | tr ' ' ',')
out=${OUT_PNG:-target/screenshot.png}
log=$(mktemp)
# shellcheck disable=SC2086
"$bin" serve $src --addr 127.0.0.1:0 >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 50); do
    grep -q "listening on" "$log" && break
    sleep 0.1
done
addr=$(sed -n 's|.*listening on http://\([^/]*\)/.*|\1|p' "$log")
[ -n "$addr" ] || { cat "$log"; exit 2; }
profile=$(mktemp -d)
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --screenshot="$out" --window-size=1000,800 \
    "http://$addr/browse?moves=$moves" >/dev/null 2>&1
rm -rf "$profile"
echo "wrote $out (http://$addr/browse?moves=$moves)"
