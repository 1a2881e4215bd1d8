#!/usr/bin/env bash
# The AMG run on the GPU host (bench/package_device.sh --amg packs DIR):
# the GPU tests of AMG and numeric-only products, then spgemm-amg-bench on the
# bhSPARSE paper's Poisson problems and elasticity3d:40 (setup by phase,
# numeric-only re-setup, PCG solve, the Galerkin pyramid against cuSPARSE's),
# then pyamg on the same matrices on the host's cores (bench/amg_pyamg.py;
# its wheel carried in .whl/). Results in $OUT:
#   gpu_tests.log  amg_bench.log  amg_ours.tsv  h100-amg.tsv  amg.md
#
#   bench/run_amg_device.sh DIR [COMMIT]
set -u

# shellcheck source-path=SCRIPTDIR source=device_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/device_env.sh"
device_setup bench-out "$@"

# Settings: PROBLEMS (generator specs), REPEATS, TEST_FILTER ('*': every GPU
# test). The timeouts keep the whole run within nine minutes.
read -r -a PROBLEMS <<<"${PROBLEMS:-poisson2d5:1024 poisson2d9:1024 poisson3d7:101 poisson3d27:101 elasticity3d:40}"
REPEATS=${REPEATS:-3}
TEST_FILTER=${TEST_FILTER:-GpuNumeric*:GpuGalerkin*:GpuAmg*}
status=0
write_environment

echo "== GPU tests $TEST_FILTER"
if timeout 150 "$DIR/bin/spgemm_gpu_tests" --gtest_filter="$TEST_FILTER" >"$OUT/gpu_tests.log" 2>&1; then
  grep -E "^\[  PASSED|^\[==========\]" "$OUT/gpu_tests.log" | tail -n 2
else
  echo "GPU tests FAILED:"; grep -E "^\[  FAILED|Failure|Expected|Which is|actual" "$OUT/gpu_tests.log" | head -n 30
  status=1
fi

echo "== spgemm-amg-bench ${PROBLEMS[*]}"
dump=$(mktemp -d)
timeout 240 "$DIR/bin/spgemm-amg-bench" "${PROBLEMS[@]}" --repeats "$REPEATS" --dump "$dump" \
  --tsv "$OUT/amg_ours.tsv" --markdown "$OUT/amg.md" >"$OUT/amg_bench.log" 2>&1 || status=1
tail -n 12 "$OUT/amg_bench.log"

echo "== pyamg on $(nproc) cores"
if python3 -c "import pyamg" 2>/dev/null; then
  timeout 150 python3 "$DIR/amg_pyamg.py" "$dump" "$OUT/amg_ours.tsv" "$OUT/h100-amg.tsv" || status=1
else
  echo "pyamg is not installed: carry .whl/ and install it first (bench/README.md)"; status=1
fi
rm -rf "$dump"
exit $status
