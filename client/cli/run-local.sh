#!/usr/bin/env bash
# Starts a local spgemmd (every GPU, or the CPU backend where there is none) on
# a free loopback port, runs one `spgemm` CLI command against it, and stops it.
#
#   client/cli/run-local.sh multiply A.mtx.gz -o C.mtx --stats
#
# Binaries come from build/ (override with BUILD=dir).
set -euo pipefail
build=${BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}
work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; rm -rf "$work"' EXIT

"$build/server/spgemmd" --listen=127.0.0.1:0 --port_file="$work/port" --metrics_listen= \
  --log_format=text 2>"$work/spgemmd.log" &
server=$!
for _ in $(seq 1 300); do
  [ -s "$work/port" ] && break
  kill -0 "$server" 2>/dev/null || { cat "$work/spgemmd.log" >&2; exit 1; }
  sleep 0.1
done
[ -s "$work/port" ] || { echo "spgemmd did not start; its log:" >&2; cat "$work/spgemmd.log" >&2; exit 1; }

SPGEMM_SERVER="127.0.0.1:$(cat "$work/port")" "$build/client/spgemm" "$@"
