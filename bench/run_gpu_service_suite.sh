#!/usr/bin/env bash
# On the GPU host: the service's test suites against the GPU backend, the CLI's
# GPU-versus-CPU comparison over every shared matrix, the Python suite, the
# Python end-to-end comparison (scipy, CuPy) and the service benchmark.
#
#   bench/run_gpu_service_suite.sh DIR [COMMIT]
#
# DIR is what `bench/package_device.sh --service` gathered (bin/, lib/,
# matrices/, wheels/). Logs go to $OUT; a short summary comes last.
set -u
DIR=$(cd "$1" && pwd)
COMMIT=${2:-unknown}
OUT=${OUT:-$PWD/gpu-suite-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$DIR/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export SPGEMM_MATRICES="$DIR/matrices" SPGEMM_REQUIRE_MATRICES=1 SPGEMM_TEST_BACKEND=auto
export SPGEMMD="$DIR/bin/spgemmd" SPGEMM_CLI="$DIR/bin/spgemm" SPGEMM_REQUIRE_SERVER=1
summary=()
note() { summary+=("$1"); }

suites="$OUT/suites.log"
: >"$suites"
for t in spgemmd_integration_test spgemm_client_tests; do
  if "$DIR/bin/$t" >>"$suites" 2>&1; then note "$t (GPU backend): passed"; else note "$t (GPU backend): FAILED"; fi
done
grep -E "^\[  (PASSED|FAILED)|tests ran" "$suites" | tail -n 6

# The CLI through a GPU server and through a CPU server, every shared matrix.
work=$(mktemp -d)
start() {  # start BACKEND NAME -> prints the port
  # Its output goes to a file: an inherited stdout would hold $(start ...) open.
  "$SPGEMMD" --listen=127.0.0.1:0 --port_file="$work/$2.port" --metrics_listen= --backend="$1" \
    >"$work/$2.log" 2>&1 &
  for _ in $(seq 1 300); do [ -s "$work/$2.port" ] && break; sleep 0.1; done
  cat "$work/$2.port"
}
gpu_port=$(start auto gpu)
cpu_port=$(start cpu cpu)
cli="$OUT/cli.log"
: >"$cli"
for m in "$DIR"/matrices/*.mtx.gz; do
  name=$(basename "$m" .mtx.gz)
  "$SPGEMM_CLI" --server "127.0.0.1:$gpu_port" multiply "$m" -o "$work/$name.gpu.mtx" --stats >>"$cli" 2>&1
  "$SPGEMM_CLI" --server "127.0.0.1:$cpu_port" multiply "$m" -o "$work/$name.cpu.mtx" >>"$cli" 2>&1
done
python3 - "$work" "$DIR/matrices" >"$OUT/cli_compare.txt" 2>&1 <<'PY'
import glob, os, sys
import numpy as np, scipy.io, scipy.sparse as sp
work, mats = sys.argv[1], sys.argv[2]
bad = 0
for m in sorted(glob.glob(mats + "/*.mtx.gz")):
    name = os.path.basename(m)[:-7]
    a = sp.csr_matrix(scipy.io.mmread(m), dtype=np.float64)
    g = sp.csr_matrix(scipy.io.mmread("%s/%s.gpu.mtx" % (work, name)))
    c = sp.csr_matrix(scipy.io.mmread("%s/%s.cpu.mtx" % (work, name)))
    same_structure = g.nnz == c.nnz and (g.indptr == c.indptr).all() and (g.indices == c.indices).all()
    scale = abs(a) @ abs(a)
    diff = abs(g - c)
    worst = float(diff.multiply(scale.power(-1)).max()) if diff.nnz else 0.0
    identical = same_structure and (g.data == c.data).all()
    ok = same_structure and worst <= 1e-12
    bad += not ok
    print("%-16s nnz %10d  structure %s  max scaled diff %.2e  %s" % (
        name, g.nnz, "same" if same_structure else "DIFFERENT", worst, "bit-identical" if identical else ""))
print("CLI GPU vs CPU: %d of %d matrices differ" % (bad, len(glob.glob(mats + "/*.mtx.gz"))))
PY
tail -n 1 "$OUT/cli_compare.txt"
note "$(tail -n 1 "$OUT/cli_compare.txt")"

# The Python package and its suite against the GPU server (a server of its own).
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$DIR"/wheels/*.whl >"$OUT/python.log" 2>&1
export PYTHONPATH=/tmp/site
if python3 -m pytest -q -p no:cacheprovider "$DIR/python-tests" >>"$OUT/python.log" 2>&1; then
  note "python suite (GPU backend): $(tail -n 1 "$OUT/python.log")"
else
  note "python suite (GPU backend): FAILED: $(tail -n 1 "$OUT/python.log")"
fi
big=$(ls -S "$DIR"/matrices/*.mtx.gz | head -n 6)
python3 "$DIR/compare.py" --address "127.0.0.1:$gpu_port" $big >"$OUT/python_compare.txt" 2>&1
kill %1 %2 2>/dev/null
wait 2>/dev/null

# The service benchmark (starts its own server).
OUT="$OUT" bash "$DIR/run_service_device.sh" "$DIR" "$COMMIT" >"$OUT/service_summary.txt" 2>&1
note "service bench: exit $?"

echo "== python end to end (ms)"; cat "$OUT/python_compare.txt"
echo "== service bench"; tail -n 30 "$OUT/service_summary.txt"
echo "== summary"; printf '%s\n' "${summary[@]}"
