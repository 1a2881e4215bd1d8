#!/usr/bin/env bash
# GPU host: the Python suites and the integration test against a GPU server,
# then the Python wire with and without the client's malloc thresholds.
set -u
DIR=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$PWD/svc-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$DIR/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc; python3 --version; } >"$OUT/environment.txt" 2>&1
SITE=$(mktemp -d)
python3 -m pip install -q --no-index --no-deps --no-compile --target "$SITE" "$DIR"/wheels/*.whl >"$OUT/pip.log" 2>&1
export PYTHONPATH="$SITE:$DIR"
export SPGEMMD="$DIR/bin/spgemmd" SPGEMM_TEST_BACKEND=auto SPGEMM_MATRICES="$DIR/matrices" SPGEMM_REQUIRE_SERVER=1
if [[ "${SUITES:-1}" = 1 ]]; then
  start=$(date +%s)
  timeout 240 python3 -m pytest -q -p no:cacheprovider -rs "$DIR/python-tests/test_cuda_ipc.py" \
    "$DIR/python-tests/test_local.py" "$DIR/python-tests/test_handles.py" "$DIR/python-tests/test_products.py" \
    "$DIR/python-tests/test_malloc.py" "$DIR/python-tests/test_wire.py" >"$OUT/pytest.txt" 2>&1
  echo "pytest rc=$? $(( $(date +%s) - start )) s: $(tail -n 1 "$OUT/pytest.txt")"
  start=$(date +%s)
  timeout 150 "$DIR/bin/spgemmd_integration_test" >"$OUT/integration.log" 2>&1
  echo "integration rc=$? $(( $(date +%s) - start )) s: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/integration.log" | tr '\n' ' ')"
fi
work=$(mktemp -d /tmp/svc.XXXXXX)
"$DIR/bin/spgemmd" --listen=127.0.0.1:0 --port_file="$work/port" --unix_socket="$work/s.sock" --metrics_listen= \
  --backend=auto >"$OUT/spgemmd.log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do [[ -s "$work/port" ]] && break; sleep 0.1; done
specs=()
for s in ${WIRE_SPECS:-soc-Epinions1 web-NotreDame stencil27:60 er:400000:8}; do
  if [[ -e "$DIR/matrices/$s.mtx.gz" ]]; then specs+=("$DIR/matrices/$s.mtx.gz"); else specs+=("$s"); fi
done
for address in ${ADDRESSES:-127.0.0.1:$(cat "$work/port") unix://$work/s.sock}; do
  start=$(date +%s)
  echo "# $address" >>"$OUT/wire_malloc.tsv"
  timeout 200 python3 "$DIR/wire_malloc.py" "$address" "${ROUNDS:-3}" "${specs[@]}" >>"$OUT/wire_malloc.tsv" 2>"$OUT/wire_malloc.err"
  echo "wire $address rc=$? $(( $(date +%s) - start )) s"
done
kill -TERM $pid; wait $pid
cat "$OUT/wire_malloc.tsv"
