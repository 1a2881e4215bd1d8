#!/usr/bin/env bash
# On the GPU host: C = A·A end to end through spgemmd per path — TCP, the Unix
# socket, shared memory, CUDA IPC — against scipy and CuPy in the same run,
# from Python (e2e_bench.py) and from C++ (spgemm-e2e-bench); first the
# Python client's CUDA IPC and shared-memory tests against the GPU server.
#
#   bench/run_e2e_device.sh DIR [COMMIT]
#
# DIR is what `bench/package_device.sh --service` gathered (bin/, lib/,
# matrices/, wheels/, python-tests/, e2e_bench.py). Results go to $OUT
# (default ./e2e-out): environment.txt, spgemmd.log, local_tests.log,
# e2e-python.log, e2e-cpp.log, and h100-e2e.tsv (every row of both benches:
# bench/README.md names the columns). The summary of h100-e2e.tsv comes last.
# About 5 minutes on the H100; each step has a time limit, all together 9.
set -u

# shellcheck source-path=SCRIPTDIR source=device_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/device_env.sh"
device_setup e2e-out "$@"
write_environment
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
GPU=${GPU:-cpu}
find_matrices
# Generated products of 1e7 to 1e8 nonzeros of C (poisson3d7:N has 25 per row);
# E2E_GENERATED (Python) and E2E_CPP_INPUTS (C++, beside the files) replace them.
read -r -a GENERATED <<<"${E2E_GENERATED:-poisson3d7:74 er:1000000:4 poisson3d7:120 poisson3d7:159}"
read -r -a CPP_GENERATED <<<"${E2E_CPP_INPUTS:-poisson3d7:74 poisson3d7:159}"

# The Python package (and the protobuf runtime its generated code needs) beside the host's numpy, scipy, CuPy.
SITE=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --no-compile --target "$SITE" "$DIR"/wheels/*.whl >"$OUT/pip.log" 2>&1
export PYTHONPATH="$SITE"
status=0

echo "== the Python client's local paths (shared memory, CUDA IPC) against the GPU server"
SPGEMMD="$DIR/bin/spgemmd" SPGEMM_TEST_BACKEND=auto SPGEMM_MATRICES="$DIR/matrices" \
  timeout 120 python3 -m pytest -q -p no:cacheprovider -rs "$DIR/python-tests/test_cuda_ipc.py" \
  "$DIR/python-tests/test_local.py" >"$OUT/local_tests.log" 2>&1 || status=1
tail -n 3 "$OUT/local_tests.log"

# The server: GPUs, loopback TCP and a Unix socket (its path short enough for sockaddr_un).
SOCKET_DIR=$(mktemp -d /tmp/spgemm-e2e.XXXXXX)
PORT_FILE="$SOCKET_DIR/port"
"$DIR/bin/spgemmd" --listen=127.0.0.1:0 --port_file="$PORT_FILE" --unix_socket="$SOCKET_DIR/s.sock" \
  --metrics_listen= --backend=auto --grace_seconds=5 >"$OUT/spgemmd.log" 2>&1 &
SERVER_PID=$!
trap 'kill -TERM $SERVER_PID 2>/dev/null; wait $SERVER_PID 2>/dev/null; rm -rf "$SOCKET_DIR" "$SITE"' EXIT
for _ in $(seq 1 600); do
  [[ -s "$PORT_FILE" ]] && break
  kill -0 "$SERVER_PID" 2>/dev/null || { echo "spgemmd exited:"; tail -n 20 "$OUT/spgemmd.log"; exit 1; }
  sleep 0.1
done
TCP="127.0.0.1:$(cat "$PORT_FILE")"
UNIX="unix://$SOCKET_DIR/s.sock"

echo "== Python: ${#MATRICES[@]} files + ${GENERATED[*]}"
timeout 300 python3 "$DIR/e2e_bench.py" --tcp "$TCP" --unix "$UNIX" --gpu "$GPU" "${MATRICES[@]}" \
  --generated "${GENERATED[@]}" --tsv "$OUT/e2e-python.tsv" >"$OUT/e2e-python.log" 2>&1 || status=1
echo "== C++: ${#MATRICES[@]} files + ${CPP_GENERATED[*]}"
timeout 100 "$DIR/bin/spgemm-e2e-bench" --tcp "$TCP" --unix "$UNIX" --gpu "$GPU" --repeats 3 "${MATRICES[@]}" \
  "${CPP_GENERATED[@]}" --tsv "$OUT/e2e-cpp.tsv" >"$OUT/e2e-cpp.log" 2>&1 || status=1

{
  head -n 1 "$OUT/e2e-python.tsv"
  tail -n +2 "$OUT/e2e-python.tsv"
  [[ -s "$OUT/e2e-cpp.tsv" ]] && tail -n +2 "$OUT/e2e-cpp.tsv"
} >"$OUT/h100-e2e.tsv" 2>/dev/null
echo
python3 "$DIR/e2e_bench.py" --summary "$OUT/h100-e2e.tsv"
awk -F'\t' 'NR > 1 && $11 != "ok" && $11 !~ /^skipped/ { print "not ok: " $2 " " $6 ": " $11 }' "$OUT/h100-e2e.tsv"
echo "C++ rows (ms): $(awk -F'\t' 'NR > 1 && $6 !~ /download/ { printf "%s %s %s; ", $2, $6, $7 }' "$OUT/e2e-cpp.tsv" 2>/dev/null)"
exit $status
