#!/usr/bin/env bash
# On the GPU host: the engine's GPU suite, then the same suite's kernels under
# compute-sanitizer (memcheck, racecheck, synccheck) on a filter of tests on
# generated and small matrices (a checked kernel runs 10-100x slower).
#
#   bench/run_gpu_checks_device.sh DIR [COMMIT]
#
# DIR is what `bench/package_device.sh` gathered (bin/spgemm_gpu_tests, lib/,
# matrices/). Logs go to $OUT (gpu_tests.log, memcheck.log, racecheck.log,
# synccheck.log, environment.txt); a short table comes last. Settings:
# SUITE=0 (the checked runs only), CHECK_FILTER (gtest filter for them), CHECK_TOOLS (default
# "memcheck racecheck synccheck"), SUITE_TIMEOUT and CHECK_TIMEOUT (seconds,
# each tool's run: a run cut short says what it checked until then). Exit status 0 when the suite
# passed and no tool reported an error.
set -u

# shellcheck source-path=SCRIPTDIR source=device_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/device_env.sh"
device_setup gpu-checks-out "$@"
export SPGEMM_MATRICES="$DIR/matrices" SPGEMM_REQUIRE_MATRICES=1
TESTS="$DIR/bin/spgemm_gpu_tests"
CHECK_FILTER=${CHECK_FILTER:-'Methods/GpuMethod.EmptyShapes/*:Methods/GpuMethod.OneByOne/*:Methods/GpuMethod.RectangularAndEmptyRows/*:Methods/GpuMethod.EveryBin/*:Methods/GpuMethod.RowLengthBoundaries/*:GpuTranspose.EdgeCases*:GpuSemirings.Masked*:GpuMatrixOps.MatchTheCpuOnEmpty*:GpuRowPanels.*'}
CHECK_TOOLS=${CHECK_TOOLS:-memcheck racecheck synccheck}
SUITE_TIMEOUT=${SUITE_TIMEOUT:-240}
CHECK_TIMEOUT=${CHECK_TIMEOUT:-120}

write_environment
rows=()
status=0

suite_line() {  # the gtest summary of a log: "N passed, M failed"
  local passed failed
  passed=$(grep -c '^\[       OK \]' "$1")
  failed=$(grep -c '^\[  FAILED  \].*(' "$1")
  echo "$passed passed, $failed failed"
}

if [[ ${SUITE:-1} == 1 ]]; then
  timeout "$SUITE_TIMEOUT" "$TESTS" >"$OUT/gpu_tests.log" 2>&1
  rc=$?
  [[ $rc -eq 0 ]] || status=1
  rows+=("suite|exit $rc|$(suite_line "$OUT/gpu_tests.log")")
  grep -E '^\[  FAILED  \].*\(' "$OUT/gpu_tests.log" | head -n 10
fi

SANITIZER=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in $CHECK_TOOLS; do
  log="$OUT/$tool.log"
  timeout "$CHECK_TIMEOUT" "$SANITIZER" --tool "$tool" --error-exitcode 86 --print-limit 20 \
    "$TESTS" --gtest_filter="$CHECK_FILTER" >"$log" 2>&1
  rc=$?
  errors=$(sed -n 's/^========= ERROR SUMMARY: \([0-9]*\) error.*/\1/p' "$log" | tail -n 1)
  case $rc in
    0) verdict="no error" ;;
    86) verdict="ERRORS"; status=1 ;;
    124)
      if grep -q '^========= \(Invalid\|Race\|Barrier\)' "$log"; then
        verdict="ERRORS before the cut"; status=1
      else
        verdict="cut at ${CHECK_TIMEOUT} s, no error"
      fi ;;
    *) verdict="exit $rc"; status=1 ;;
  esac
  rows+=("$tool|$verdict|$(suite_line "$log"), ${errors:-?} errors")
  grep -m 5 -A 4 '^========= \(Invalid\|Race\|Barrier\|Program hit\)' "$log"
done

echo
echo "checked runs: --gtest_filter=$CHECK_FILTER"
printf '%-10s | %-28s | %s\n' run result tests
for r in "${rows[@]}"; do
  IFS='|' read -r run verdict tests <<<"$r"
  printf '%-10s | %-28s | %s\n' "$run" "$verdict" "$tests"
done
exit $status
