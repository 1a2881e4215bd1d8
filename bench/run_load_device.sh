#!/usr/bin/env bash
# Runs spgemm-load on the GPU host against a spgemmd it starts there
# (--backend=auto: every GPU), every result checked (bench/README.md).
#
#   bench/run_load_device.sh DIR [COMMIT]          # in the foreground
#   LOAD_DETACH=1 bench/run_load_device.sh DIR     # starts it in the background, returns
#   bench/run_load_device.sh DIR --collect         # waits (up to 580 s) for a detached run
#
# DIR holds bin/spgemmd, bin/spgemm-load and lib/ (bench/package_device.sh
# --service gathers them). LOAD_CLIENTS (default 16), LOAD_SECONDS (600) and
# LOAD_ARGS (more flags for spgemm-load) set the run. A run longer than one
# device-tool command (10 minutes) goes detached: its files are in
# /tmp/spgemm-load-device until --collect copies them to $OUT (default
# ./load-out): environment.txt, load.txt (the report), load.tsv. Exit
# status: spgemm-load's (0: no error, no wrong result, RSS back near its
# baseline), or 1 where a detached run is not done within the wait.
set -u

# shellcheck source-path=SCRIPTDIR source=device_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/device_env.sh"
collect=0
args=("$@")
if [[ "${2:-}" == "--collect" ]]; then
  collect=1
  args=("$1")
fi
device_setup load-out "${args[@]}"
RUN=/tmp/spgemm-load-device

if [[ $collect == 1 ]]; then
  for _ in $(seq 1 580); do
    [[ -s "$RUN/status" ]] && break
    sleep 1
  done
  cp "$RUN"/environment.txt "$RUN"/load.txt "$RUN"/load.tsv "$OUT"/ 2>/dev/null
  cat "$OUT/load.txt" 2>/dev/null
  if [[ ! -s "$RUN/status" ]]; then
    echo "the detached run is not done yet; collect again"
    exit 1
  fi
  exit "$(cat "$RUN/status")"
fi

for b in "$DIR/bin/spgemmd" "$DIR/bin/spgemm-load"; do
  if [[ ! -x "$b" ]]; then
    echo "error: $b not found (bench/package_device.sh --service)" >&2
    exit 1
  fi
done
rm -rf "$RUN" && mkdir -p "$RUN"
OUT_FINAL=$OUT
OUT=$RUN write_environment >/dev/null
cp "$RUN/environment.txt" "$OUT_FINAL/"
run() {
  # shellcheck disable=SC2086
  "$DIR/bin/spgemm-load" --spawn "$DIR/bin/spgemmd" --backend auto --clients "${LOAD_CLIENTS:-16}" \
    --seconds "${LOAD_SECONDS:-600}" --max-rows 20000 --tsv "$RUN/load.tsv" ${LOAD_ARGS:-} >"$RUN/load.txt" 2>&1
  echo $? >"$RUN/status"
}
if [[ "${LOAD_DETACH:-0}" == 1 ]]; then
  export -f run
  export DIR RUN LOAD_CLIENTS LOAD_SECONDS LOAD_ARGS
  setsid nohup bash -c run >/dev/null 2>&1 </dev/null &
  echo "spgemm-load runs detached (${LOAD_SECONDS:-600} s); collect with: $0 $1 --collect"
  exit 0
fi
run
cp "$RUN/load.txt" "$RUN/load.tsv" "$OUT_FINAL/" 2>/dev/null
cat "$OUT_FINAL/load.txt"
exit "$(cat "$RUN/status")"
