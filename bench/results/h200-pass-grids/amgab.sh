#!/usr/bin/env bash
# GPU host: spgemm-amg-bench before and after (bin/spgemm-amg-bench-{base,new}), rounds in turn,
# then the GPU tests of the change (TEST_FILTER).
set -u
DIR=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$PWD/amgab-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$DIR/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export SPGEMM_MATRICES="$DIR/matrices"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$OUT/environment.txt"
read -r -a PROBLEMS <<<"${PROBLEMS:-poisson3d7:101 poisson2d5:1024 poisson3d27:101 elasticity3d:40}"
for round in $(seq 1 "${ROUNDS:-2}"); do
  for v in base new; do
    start=$(date +%s)
    extra=--no-cusparse
    [[ $round = 1 ]] && extra=""
    timeout 200 "$DIR/bin/spgemm-amg-bench-$v" "${PROBLEMS[@]}" --repeats "${REPEATS:-5}" --galerkin-phases $extra \
      --tsv "$OUT/$v-r$round.tsv" >"$OUT/$v-r$round.log" 2>&1
    echo "$v round $round rc=$? $(( $(date +%s) - start )) s"
  done
done
if [[ -n "${TEST_FILTER:-}" ]]; then
  start=$(date +%s)
  timeout 300 "$DIR/bin/spgemm_gpu_tests" --gtest_filter="$TEST_FILTER" >"$OUT/gpu_tests.log" 2>&1
  echo "gpu tests rc=$? $(( $(date +%s) - start )) s"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) \]|tests from .* ran" "$OUT/gpu_tests.log" | head -20
fi
grep -h "R(AQ)\|(RA)Q" "$OUT"/*-r1.log | sed 's/ (auto: [^)]*))//g' | cut -c1-230
python3 - "$OUT" <<'PY'
import csv, glob, os, sys
out = sys.argv[1]
rows = {}
for f in sorted(glob.glob(os.path.join(out, "*-r*.tsv"))):
    v = os.path.basename(f).split("-")[0]
    for r in csv.DictReader(open(f), delimiter="\t"):
        rows.setdefault(r["problem"], {}).setdefault(v, []).append(r)
for p, vs in rows.items():
    for v, rs in vs.items():
        print(p, v, "pyramid", "/".join(r.get("pyramid_ms", "?") for r in rs), "numeric",
              "/".join(r.get("pyramid_numeric_ms", "?") for r in rs), "setup", "/".join(r.get("setup_ms", "?") for r in rs),
              "resetup", "/".join(r.get("resetup_ms", "?") for r in rs), "cusparse", rs[0].get("cusparse_pyramid_ms", "?"))
PY
