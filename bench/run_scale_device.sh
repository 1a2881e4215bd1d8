#!/usr/bin/env bash
# Products larger than a GPU, and the GPUs of one server, end to end through
# spgemmd on the GPU host (docs/scaling.md). Each stage fits one device call
# (under 9 minutes) and ends with a short table; rows go to $OUT/scale.tsv
# (run, matrix, mode, measure, value, unit) and the tables the stage fills to
# $OUT/h100-outofcore.tsv or $OUT/multigpu.tsv (bench/results/).
#
#   bench/run_scale_device.sh DIR [COMMIT]      DIR from bench/package_device.sh --service
#
# STAGE (environment) picks what runs:
#   outofcore   one GPU: rmat:18:16 squared in core (default budget), then under
#               --device_budget_bytes=$BUDGET (default 32 GiB): rmat:18:16 and
#               rmat:19:16 squared in row panels, kept in host memory and streamed
#               to this client (about 6 minutes)
#   outofcore20 one GPU, the same budget: rmat:20:16 squared, streamed (C is about
#               120 GB); with KEEP20=1 kept instead, within HOST_BUDGET and past it
#               in a spill file in SPILL_DIR (within SPILL_BUDGET bytes)
#   multigpu    two GPUs: rmat:19:16 squared in panels on GPU 0 alone, then on
#               both (speed-up; identical results by the streamed result's hash),
#               and 100 independent rmat:16:16 products on one GPU, then on both
#               (jobs per second)
# BUDGET and HOST_BUDGET (bytes) set the device and host budgets of the panel
# runs, SPILL_DIR and SPILL_BUDGET where a kept result may spill (default: none); IN_CORE, LARGE, LARGEST and JOB_MATRIX the operands (rmat:18:16,
# rmat:19:16, rmat:20:16, rmat:16:16), e.g. smaller ones for a dry run on the
# CPU (BACKEND=cpu).
set -u

# shellcheck source-path=SCRIPTDIR source=device_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/device_env.sh"
device_setup scale-bench-out "$@"
STAGE=${STAGE:-outofcore}
IN_CORE=${IN_CORE:-rmat:18:16}
LARGE=${LARGE:-rmat:19:16}
LARGEST=${LARGEST:-rmat:20:16}
JOB_MATRIX=${JOB_MATRIX:-rmat:16:16}
BUDGET=${BUDGET:-$((32 << 30))}
HOST_BUDGET=${HOST_BUDGET:-$((96 << 30))}
SPILL=()
if [[ -n "${SPILL_DIR:-}" ]]; then
  mkdir -p "$SPILL_DIR"
  SPILL=(--spill_dir="$SPILL_DIR" --spill_budget_bytes="${SPILL_BUDGET:-0}")
fi
SERVER="$DIR/bin/spgemmd"
BENCH="$DIR/bin/spgemm-scale-bench"
for b in "$SERVER" "$BENCH"; do
  if [[ ! -x "$b" ]]; then
    echo "error: $b not found (bench/package_device.sh --service)" >&2
    exit 1
  fi
done
write_environment
TSV="$OUT/scale.tsv"

SERVER_PID=
stop_server() {
  if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID"
    for _ in $(seq 1 150); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$SERVER_PID" 2>/dev/null && kill -KILL "$SERVER_PID"
    wait "$SERVER_PID" 2>/dev/null
  fi
  SERVER_PID=
}
trap stop_server EXIT

# start NAME FLAGS...: a spgemmd on a free loopback port; sets ADDRESS. With
# BACKEND=cpu (a dry run), --devices=LIST becomes as many CPU backends as LIST
# names GPUs (--cpu_backends), which stand in for them.
start() {
  local name=$1
  shift
  stop_server
  local flags=() f list commas
  for f in "$@"; do
    if [[ "${BACKEND:-auto}" = cpu && "$f" == --devices=* ]]; then
      list=${f#--devices=}
      commas=${list//[^,]/}
      flags+=("--cpu_backends=$((${#commas} + 1))")
    else
      flags+=("$f")
    fi
  done
  rm -f "$OUT/$name.port"
  "$SERVER" --listen=127.0.0.1:0 --port_file="$OUT/$name.port" --metrics_listen= --grace_seconds=5 \
    --backend="${BACKEND:-auto}" "${flags[@]}" \
    >"$OUT/spgemmd-$name.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1 600); do
    [[ -s "$OUT/$name.port" ]] && break
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  if [[ ! -s "$OUT/$name.port" ]]; then
    echo "error: spgemmd ($name) did not serve; last lines of its log:"
    tail -n 20 "$OUT/spgemmd-$name.log"
    exit 1
  fi
  ADDRESS="127.0.0.1:$(cat "$OUT/$name.port")"
}

# bench RUN ARGS...: spgemm-scale-bench against ADDRESS, rows into scale.tsv.
bench() {
  local run=$1
  shift
  echo "== $run: $*"
  "$BENCH" --server "$ADDRESS" --run "$run" --tsv "$TSV" "$@" 2>>"$OUT/bench.log" | cut -f2-
}

case "$STAGE" in
  outofcore)
    start incore --devices=0
    bench "in core" square "$IN_CORE" --kept-only
    start panels --devices=0 --device_budget_bytes="$BUDGET" --host_budget_bytes="$HOST_BUDGET"
    bench "panels" square "$IN_CORE" --kept-only
    bench "panels" square "$LARGE"
    ;;
  outofcore20)
    start panels --devices=0 --device_budget_bytes="$BUDGET" --host_budget_bytes="$HOST_BUDGET" "${SPILL[@]}"
    if [[ "${KEEP20:-0}" = 1 ]]; then bench "panels" square "$LARGEST" --kept-only; else bench "panels" square "$LARGEST" --streamed-only; fi
    ;;
  multigpu)
    start one --devices=0 --device_budget_bytes="$BUDGET" --host_budget_bytes="$HOST_BUDGET"
    bench "1 GPU" square "$LARGE"
    start jobs1 --devices=0
    bench "1 GPU" jobs --matrix "$JOB_MATRIX" --operands 16 --jobs 100 --clients 8
    start two --devices=0,1 --device_budget_bytes="$BUDGET" --host_budget_bytes="$HOST_BUDGET"
    bench "2 GPUs" square "$LARGE"
    start jobs2 --devices=0,1
    bench "2 GPUs" jobs --matrix "$JOB_MATRIX" --operands 16 --jobs 100 --clients 8
    ;;
  *)
    echo "error: STAGE must be outofcore, outofcore20 or multigpu (got '$STAGE')" >&2
    exit 2
    ;;
esac
stop_server
echo
python3 "$(dirname "${BASH_SOURCE[0]}")/scale_summary.py" "$TSV" "$OUT" "$(head -n 4 "$OUT/environment.txt" | tail -n 1)"
