#!/usr/bin/env bash
# Runs the service benchmark on the GPU host: starts spgemmd from DIR/bin on
# loopback (--backend=auto), runs spgemm-service-bench against it, stops it.
#
#   bench/run_service_device.sh DIR [COMMIT]
#
# DIR holds bin/spgemmd, bin/spgemm-service-bench, lib/ and matrices/*.mtx.gz
# (bench/package_device.sh --service gathers them). Results go to $OUT
# (default ./service-bench-out):
#   environment.txt  GPU, driver, host
#   spgemmd.log      the server's log
#   service.log      everything spgemm-service-bench printed
#   service.tsv      gpu matrix measure value unit target status (bench/README.md)
#   service.md       the markdown tables
#   timeline.txt     the server's per-phase timeline of the kept products (service_timeline.py)
# A short table comes last on stdout. Exit status: 0 when every row was
# measured and matched (targets missed do not change it), 1 otherwise.
#
# Environment: SERVICE_BENCH_ARGS adds flags to spgemm-service-bench (e.g.
# "--repeats 21 --jobs-seconds 5"); SPGEMMD_ARGS adds flags to spgemmd.
set -u

# shellcheck source-path=SCRIPTDIR source=device_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/device_env.sh"
device_setup service-bench-out "$@"

SERVER="$DIR/bin/spgemmd"
BENCH="$DIR/bin/spgemm-service-bench"
for b in "$SERVER" "$BENCH"; do
  if [[ ! -x "$b" ]]; then
    echo "error: $b not found (bench/package_device.sh --service)" >&2
    exit 1
  fi
done
GENERATED=(poisson3d7:64 poisson2d5:512 rmat:14:8)

write_environment

# The server, on a free loopback port, without the metrics listener.
PORT_FILE="$OUT/spgemmd.port"
rm -f "$PORT_FILE"
# shellcheck disable=SC2086
"$SERVER" --listen=127.0.0.1:0 --port_file="$PORT_FILE" --metrics_listen= --backend=auto --grace_seconds=5 \
  ${SPGEMMD_ARGS:-} >"$OUT/spgemmd.log" 2>&1 &
SERVER_PID=$!
stop_server() {
  if [[ -n "${SERVER_PID:-}" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID"
    for _ in $(seq 1 150); do
      kill -0 "$SERVER_PID" 2>/dev/null || break
      sleep 0.2
    done
    kill -0 "$SERVER_PID" 2>/dev/null && kill -KILL "$SERVER_PID"
    wait "$SERVER_PID" 2>/dev/null
  fi
  SERVER_PID=
}
trap stop_server EXIT

for _ in $(seq 1 600); do
  [[ -s "$PORT_FILE" ]] && break
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    echo "error: spgemmd exited before serving; last lines of spgemmd.log:"
    tail -n 20 "$OUT/spgemmd.log"
    exit 1
  fi
  sleep 0.1
done
if [[ ! -s "$PORT_FILE" ]]; then
  echo "error: spgemmd did not serve within 60 s; last lines of spgemmd.log:"
  tail -n 20 "$OUT/spgemmd.log"
  exit 1
fi
ADDRESS="127.0.0.1:$(cat "$PORT_FILE")"

find_matrices

echo "== spgemm-service-bench against $ADDRESS: ${#MATRICES[@]} files + ${#GENERATED[@]} generated matrices"
# shellcheck disable=SC2086
"$BENCH" --server "$ADDRESS" "${MATRICES[@]}" "${GENERATED[@]}" --commit "$COMMIT" \
  --tsv "$OUT/service.tsv" --markdown "$OUT/service.md" ${SERVICE_BENCH_ARGS:-} >"$OUT/service.log" 2>&1
status=$?
stop_server
if [[ $status -ne 0 ]]; then
  echo "spgemm-service-bench: exit $status (see service.log); its last lines:"
  grep -v '^|' "$OUT/service.log" | tail -n 10
  status=1
fi

echo
echo "== results ($(grep -m1 '^- server' "$OUT/service.md" 2>/dev/null | cut -c3-))"
if [[ -s "$OUT/service.tsv" ]]; then
  # One line per matrix: engine ms, kept and streamed round trips, the kept
  # overhead against its target; then transfers and small jobs; then every
  # row that failed.
  awk -F'\t' '
    NR == 1 { next }
    { key = $2 "\t" $3; v[key] = $4; st[key] = $7; tg[key] = $6 }
    !($2 in seen) { seen[$2] = 1; order[++n] = $2 }
    $7 != "ok" && $7 != "pass" && $7 != "miss" { bad[++nb] = $2 " " $3 ": " $7 }
    function get(m, k) { return ((m "\t" k) in v) ? v[m "\t" k] : "-" }
    function mark(m, k) { return ((m "\t" k) in st) ? st[m "\t" k] : "" }
    END {
      printf "%-22s %10s %10s %10s %10s %10s %10s  %s\n", "matrix", "engine ms", "server ms", "kept ms", "kept-srv", "overhead", "streamed", "overhead target"
      for (i = 1; i <= n; ++i) {
        m = order[i]
        if (!((m "\tengine_ms") in v)) continue
        printf "%-22s %10s %10s %10s %10s %10s %10s  %s %s\n", substr(m, 1, 22), get(m, "engine_ms"), get(m, "server_compute_ms"),
               get(m, "kept_rtt_ms"), get(m, "kept_beyond_server_ms"), get(m, "kept_overhead_ms"), get(m, "streamed_rtt_ms"),
               tg[m "\tkept_overhead_ms"], mark(m, "kept_overhead_ms")
      }
      for (i = 1; i <= n; ++i) {
        m = order[i]
        if ((m "\tupload_gbps") in v)
          printf "transfer %s: upload %s GB/s (%s), download %s GB/s (%s), target %s\n", m,
                 get(m, "upload_gbps"), mark(m, "upload_gbps"), get(m, "download_gbps"), mark(m, "download_gbps"),
                 tg[m "\tupload_gbps"]
        if ((m "\tjobs_per_s") in v)
          printf "small jobs %s: %s jobs/s (%s, target %s), p50 %s ms, p99 %s ms, %s flops each\n", m,
                 get(m, "jobs_per_s"), mark(m, "jobs_per_s"), tg[m "\tjobs_per_s"], get(m, "job_p50_ms"),
                 get(m, "job_p99_ms"), get(m, "job_flops")
      }
      for (i = 1; i <= nb; ++i) print "not ok: " substr(bad[i], 1, 160)
    }' "$OUT/service.tsv"
fi
grep -h '^targets:' "$OUT/service.md" 2>/dev/null
echo
echo "== server timeline of the kept products (median ms; docs/operations.md names the phases)"
python3 "$(dirname "${BASH_SOURCE[0]}")/service_timeline.py" "$OUT/spgemmd.log" "$OUT/service.md" | tee "$OUT/timeline.txt"
exit $status
