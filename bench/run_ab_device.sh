#!/usr/bin/env bash
# Builds of the engine against each other on the GPU host, in one call
# (bench/package_ab.sh packs DIR):
#
#   bench/run_ab_device.sh DIR
#
# DIR holds bin/spgemm-bench-NAME for every variant (variants.txt lists them,
# the baseline first), bin/gpu-tests-NAME for those whose GPU suite runs,
# bin/spgemm-amg-bench-NAME where packed (package_ab.sh with AMG=1), lib/,
# matrices/ and inputs.txt (one spgemm-bench input a line; paths relative to
# DIR). Rounds of every variant in turn on all the inputs (the first round
# checks the results of every variant but the baseline), then as many rounds
# of the AMG problems (the first with cuSPARSE's pyramid), then the GPU suite
# of each variant that has one (on DIR/matrices). Results in $OUT (default
# ./ab-out), at most six files so that the device tool brings them all back:
#   environment.txt  GPU, driver, host
#   ab.tsv           spgemm-bench's rows, variant and round in front
#   amg.tsv          spgemm-amg-bench's rows, the same two in front
#   amg-phases.txt   its --galerkin-phases lines, a header per variant and round
#   ab.md            bench/ab_summary.py's tables (also the end of stdout)
#   gpu_tests.txt    each suite's verdict, and the failures where there are
# Settings (environment): ALGORITHMS (hash), ROUNDS (2), REPEATS (5),
# WARMUPS (1), METHOD_SECONDS (1), BENCH_TIMEOUT (200 s a variant and round),
# AMG_PROBLEMS (issue 25's: poisson3d7:101 poisson2d5:1024 poisson3d27:101
# elasticity3d:40; "none": no AMG rounds), AMG_REPEATS (5), AMG_TIMEOUT (200 s
# a variant and round), TESTS ("": every variant with a suite; "none": no
# suite), TEST_TIMEOUT (250 s a suite). Exit status 1 when a suite failed or
# a result was not ok.
set -u
# shellcheck source-path=SCRIPTDIR source=device_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/device_env.sh"
device_setup ab-out "$@"

ALGORITHMS=${ALGORITHMS:-hash}
ROUNDS=${ROUNDS:-2}
REPEATS=${REPEATS:-5}
WARMUPS=${WARMUPS:-1}
METHOD_SECONDS=${METHOD_SECONDS:-1}
BENCH_TIMEOUT=${BENCH_TIMEOUT:-200}
AMG_PROBLEMS=${AMG_PROBLEMS:-poisson3d7:101 poisson2d5:1024 poisson3d27:101 elasticity3d:40}
AMG_REPEATS=${AMG_REPEATS:-5}
AMG_TIMEOUT=${AMG_TIMEOUT:-200}
TEST_TIMEOUT=${TEST_TIMEOUT:-250}
mapfile -t VARIANTS < <(grep -v '^\s*$' "$DIR/variants.txt")
INPUTS=()
while read -r line; do
  [[ -z "$line" ]] && continue
  if [[ "$line" == matrices/* ]]; then INPUTS+=("$DIR/$line"); else INPUTS+=("$line"); fi
done <"$DIR/inputs.txt"
if [[ ${#VARIANTS[@]} -lt 1 || ${#INPUTS[@]} -lt 1 ]]; then
  echo "error: $DIR/variants.txt and $DIR/inputs.txt must name at least one variant and one input" >&2
  exit 2
fi

write_environment
status=0
tsv="$OUT/ab.tsv"
rm -f "$tsv"
one=$(mktemp)
for round in $(seq 1 "$ROUNDS"); do
  for v in "${VARIANTS[@]}"; do
    check=--no-check
    [[ $round == 1 && $v != "${VARIANTS[0]}" ]] && check=--check
    timeout "$BENCH_TIMEOUT" "$DIR/bin/spgemm-bench-$v" --algorithms "$ALGORITHMS" --repeats "$REPEATS" \
      --warmups "$WARMUPS" --method-seconds "$METHOD_SECONDS" $check --tsv "$one" "${INPUTS[@]}" >/dev/null 2>&1
    rc=$?
    echo "round $round, $v: exit $rc"
    [[ $rc == 0 ]] || status=1
    if [[ -s "$one" ]]; then
      [[ -f "$tsv" ]] || head -n 1 "$one" | sed 's/^/variant\tround\t/' >"$tsv"
      tail -n +2 "$one" | sed "s/^/$v\t$round\t/" >>"$tsv"
    fi
    rm -f "$one"
  done
done

amg_tsv="$OUT/amg.tsv"
rm -f "$amg_tsv" "$OUT/amg-phases.txt"
if [[ "$AMG_PROBLEMS" != none ]] && compgen -G "$DIR/bin/spgemm-amg-bench-*" >/dev/null; then
  read -r -a problems <<<"$AMG_PROBLEMS"
  for round in $(seq 1 "$ROUNDS"); do
    for v in "${VARIANTS[@]}"; do
      [[ -x "$DIR/bin/spgemm-amg-bench-$v" ]] || continue
      vendor=--no-cusparse
      [[ $round == 1 ]] && vendor=""
      log=$(mktemp)
      timeout "$AMG_TIMEOUT" "$DIR/bin/spgemm-amg-bench-$v" "${problems[@]}" --repeats "$AMG_REPEATS" \
        --galerkin-phases $vendor --tsv "$one" >"$log" 2>&1
      rc=$?
      echo "amg round $round, $v: exit $rc"
      [[ $rc == 0 ]] || status=1
      { echo "== $v, round $round"; grep -E 'R\(AQ\)|\(RA\)Q' "$log"; } >>"$OUT/amg-phases.txt"
      if [[ -s "$one" ]]; then
        [[ -f "$amg_tsv" ]] || head -n 1 "$one" | sed 's/^/variant\tround\t/' >"$amg_tsv"
        tail -n +2 "$one" | sed "s/^/$v\t$round\t/" >>"$amg_tsv"
      fi
      rm -f "$one" "$log"
    done
  done
fi

: >"$OUT/gpu_tests.txt"
tested=("${VARIANTS[@]}")
[[ -n "${TESTS:-}" ]] && read -r -a tested <<<"$TESTS"
if [[ "${TESTS:-}" != none ]]; then
  for v in "${tested[@]}"; do
    suite="$DIR/bin/gpu-tests-$v"
    [[ -x "$suite" ]] || continue
    log=$(mktemp)
    SPGEMM_MATRICES="$DIR/matrices" timeout "$TEST_TIMEOUT" "$suite" --gtest_brief=1 >"$log" 2>&1
    rc=$?
    {
      echo "== $v: exit $rc (124: stopped after $TEST_TIMEOUT s)"
      grep -E '^\[  (PASSED|SKIPPED|FAILED)  \]' "$log" | grep -v -E '^\[  SKIPPED  \] [A-Z]'
      [[ $rc == 0 ]] || grep -E -A12 '^\[ RUN|Failure' "$log" | head -n 60
    } >>"$OUT/gpu_tests.txt"
    [[ $rc == 0 ]] || status=1
    rm -f "$log"
  done
  cat "$OUT/gpu_tests.txt"
fi

if [[ -f "$tsv" ]]; then
  amg_args=()
  [[ -f "$amg_tsv" ]] && amg_args=(--amg "$amg_tsv")
  python3 "$(dirname "${BASH_SOURCE[0]}")/ab_summary.py" "$tsv" "${amg_args[@]}" --markdown "$OUT/ab.md" || status=1
  grep -q '^not ok' "$OUT/ab.md" && status=1
fi
exit $status
