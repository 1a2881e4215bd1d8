#!/usr/bin/env bash
# On the GPU host: the graph benchmark (bench/graph_bench.py: triangle counting against
# SuiteSparse:GraphBLAS on the host's cores, the masked product against the unmasked
# product and a filter, one Markov clustering end to end) against a spgemmd on the GPU, then
# the Python graph suites (semirings, masks, the steps between products, the worked
# examples) against python-graphblas, networkx and scipy through a GPU spgemmd.
#
#   bench/run_graph_device.sh DIR [COMMIT]
#
# DIR is what `bench/package_device.sh --graph` gathered (bin/, lib/, matrices/, wheels/,
# python-tests/, examples/graph/). Results go to $OUT (default ./graph-bench-out):
#   environment.txt, spgemmd.log, graph.log (the benchmark's progress)
#   h100-graph.tsv  (bench/README.md, "Graph analytics")
#   pytest.log      the Python graph suites on the GPU backend
# Environment: GRAPH_BENCH_ARGS adds flags to graph_bench.py (e.g. "--generated rmat:18:16");
# GRAPH_TESTS=0 skips the Python suites.
set -u

# shellcheck source-path=SCRIPTDIR source=device_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/device_env.sh"
device_setup graph-bench-out "$@"
write_environment

# The Python side, installed offline beside the host's numpy, scipy, grpcio and pytest (a
# venv, even with the system's site packages, did not see them on the GPU host).
SITE=$(mktemp -d)  # not under $OUT: only the results come back
python3 -m pip install -q --no-index --no-deps --no-compile --target "$SITE" "$DIR"/wheels/*.whl \
  >"$OUT/pip.log" 2>&1 || { echo "pip install failed:"; tail -n 20 "$OUT/pip.log"; exit 1; }
export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
PY=python3

PORT_FILE="$OUT/spgemmd.port"
rm -f "$PORT_FILE"
"$DIR/bin/spgemmd" --listen=127.0.0.1:0 --port_file="$PORT_FILE" --metrics_listen= --backend=auto \
  --grace_seconds=5 >"$OUT/spgemmd.log" 2>&1 &
SERVER_PID=$!
trap 'kill -TERM $SERVER_PID 2>/dev/null; wait $SERVER_PID 2>/dev/null' EXIT
for _ in $(seq 1 600); do [[ -s "$PORT_FILE" ]] && break; sleep 0.1; done
if [[ ! -s "$PORT_FILE" ]]; then
  echo "error: spgemmd did not serve within 60 s:"
  tail -n 20 "$OUT/spgemmd.log"
  exit 1
fi
ADDRESS="127.0.0.1:$(cat "$PORT_FILE")"

echo "== graph_bench.py against $ADDRESS (GraphBLAS on $(nproc) cores)"
# shellcheck disable=SC2086
"$PY" "$DIR/graph_bench.py" --address "$ADDRESS" --cli "$DIR/bin/spgemm" --matrices "$DIR/matrices" \
  --out "$OUT/h100-graph.tsv" --threads "$(nproc)" ${GRAPH_BENCH_ARGS:-} 2>"$OUT/graph.log"
status=$?
column -t -s $'\t' "$OUT/h100-graph.tsv" 2>/dev/null || cat "$OUT/h100-graph.tsv"
[[ $status -ne 0 ]] && { echo "graph_bench.py: exit $status; its last lines:"; tail -n 10 "$OUT/graph.log"; }
kill -TERM $SERVER_PID 2>/dev/null
wait $SERVER_PID 2>/dev/null

if [[ "${GRAPH_TESTS:-1}" != "0" ]]; then
  echo
  echo "== the Python graph suites on the GPU backend"
  SPGEMMD="$DIR/bin/spgemmd" SPGEMM_TEST_BACKEND=auto SPGEMM_MATRICES="$DIR/matrices" SPGEMM_REQUIRE_SERVER=1 \
    "$PY" -m pytest -q -p no:cacheprovider "$DIR/python-tests/test_semirings.py" "$DIR/python-tests/test_graph_ops.py" \
    "$DIR/python-tests/test_algorithms.py" >"$OUT/pytest.log" 2>&1
  tests=$?
  tail -n 15 "$OUT/pytest.log"
  [[ $tests -ne 0 ]] && status=1
fi
exit $status
