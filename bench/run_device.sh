#!/usr/bin/env bash
# Runs the GPU tests and the benchmark on the GPU host.
#
#   bench/run_device.sh DIR [COMMIT]
#
# DIR holds bin/spgemm-bench, bin/spgemm_gpu_tests (optional), lib/ and
# matrices/*.mtx.gz. Results go to $OUT (default ./bench-out), five files:
#   environment.txt  GPU, driver, host
#   gpu_tests.log    output of spgemm_gpu_tests (when present)
#   bench.log        everything spgemm-bench printed (stdout and stderr)
#   bench.tsv        one row per matrix and algorithm (columns in bench/README.md)
#   bench.md         the markdown table
# A short table comes last on stdout. Exit status: 0 when the tests passed and
# every result matched, 1 otherwise.
set -u

# shellcheck source-path=SCRIPTDIR source=device_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/device_env.sh"
device_setup bench-out "$@"
export SPGEMM_MATRICES="$DIR/matrices" SPGEMM_REQUIRE_MATRICES=1

BENCH="$DIR/bin/spgemm-bench"
TESTS="$DIR/bin/spgemm_gpu_tests"
GENERATED=(poisson3d7:100 poisson3d27:64 poisson2d5:1024 elasticity3d:40 rmat:16:16 rmat:17:16 rmat:18:16)
# GENERATED_LIST (space-separated generator specs) and MATRIX_NAMES (space-
# separated shared matrix names, e.g. "email-Enron cage11") narrow the run;
# TRANSPOSE=1 (default) also times A^T (spgemm-bench --transpose) into
# transpose.tsv / transpose.md.
if [[ -n "${GENERATED_LIST+x}" ]]; then read -r -a GENERATED <<<"$GENERATED_LIST"; fi
TRANSPOSE=${TRANSPOSE:-1}
# Optional settings: ALGORITHMS (spgemm-bench --algorithms), REPEATS, WARMUPS,
# TEST_FILTER (gtest filter), TEST_TIMEOUT and BENCH_TIMEOUT (seconds).
ALGORITHMS=${ALGORITHMS:-auto,hash,rmerge,esc,block,cusparse-alg1,cusparse-alg2,cusparse-alg3}
REPEATS=${REPEATS:-9}
WARMUPS=${WARMUPS:-2}
TEST_FILTER=${TEST_FILTER:-*}
TEST_TIMEOUT=${TEST_TIMEOUT:-600}
BENCH_TIMEOUT=${BENCH_TIMEOUT:-3600}

write_environment

status=0

if [[ -x "$TESTS" ]]; then
  echo "== GPU tests"
  if timeout "$TEST_TIMEOUT" "$TESTS" --gtest_filter="$TEST_FILTER" >"$OUT/gpu_tests.log" 2>&1; then
    echo "GPU tests: passed ($(wc -l <"$OUT/gpu_tests.log") lines in gpu_tests.log)"
  else
    echo "GPU tests: FAILED (exit $?); last lines of gpu_tests.log:"
    grep -E "^\[  FAILED|Failure|error|Expected|Which is|actual" "$OUT/gpu_tests.log" | head -n 30
    tail -n 5 "$OUT/gpu_tests.log"
    status=1
  fi
else
  echo "== GPU tests: $TESTS not present, skipped"
fi

if [[ ! -x "$BENCH" ]]; then
  echo "error: $BENCH not found" >&2
  exit 1
fi

find_matrices
if [[ -n "${MATRIX_NAMES:-}" ]]; then
  selected=()
  for name in $MATRIX_NAMES; do
    [[ -f "$DIR/matrices/$name.mtx.gz" ]] && selected+=("$DIR/matrices/$name.mtx.gz")
  done
  MATRICES=("${selected[@]}")
fi

echo "== spgemm-bench: ${#MATRICES[@]} files + ${#GENERATED[@]} generated matrices"
timeout "$BENCH_TIMEOUT" "$BENCH" "${MATRICES[@]}" "${GENERATED[@]}" --algorithms "$ALGORITHMS" \
  --repeats "$REPEATS" --warmups "$WARMUPS" --commit "$COMMIT" --tsv "$OUT/bench.tsv" --markdown "$OUT/bench.md" >"$OUT/bench.log" 2>&1
bench_status=$?
if [[ $bench_status -ne 0 ]]; then
  echo "spgemm-bench: exit $bench_status (see bench.log)"
  grep -v '^|' "$OUT/bench.log" | tail -n 10
  status=1
fi

echo
echo "== results ($(grep -m1 '^- device' "$OUT/bench.md" 2>/dev/null | cut -c3-))"
if [[ -s "$OUT/bench.tsv" ]]; then
  # One line per matrix: auto (and hash, rmerge) against the fastest cuSPARSE
  # ALG; rows that did not succeed are listed after it.
  awk -F'\t' '
    NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i; next }
    { m = $c["matrix"]; algo = $c["algorithm"]; ok = $c["status"] == "ok" }
    !(m in seen) { seen[m] = 1; order[++n] = m; flops[m] = $c["flops"] }
    ok && algo !~ /^cusparse/ { t[m, algo] = $c["ms"]; if (algo == "auto") { gf[m] = $c["gflops"]; peak[m] = $c["peak_bytes"]; nnzc[m] = $c["nnz_c"]; floor_ms[m] = $c["floor_ms"] } }
    algo ~ /^cusparse/ && ok && (!(m in best) || $c["ms"] + 0 < best[m] + 0) { best[m] = $c["ms"]; alg[m] = substr(algo, 10) }
    !ok { note[m] = note[m] " " algo ": " substr($c["status"], 1, 50) ";" }
    END {
      printf "%-16s %8s %8s %8s %8s %6s %7s %6s %6s %5s %6s %7s %s\n", "matrix", "flops", "auto", "hash", "rmerge", "GF/s", "cuSP", "ALG", "ratio", "B/nzC", "best", "floor", "not ok"
      for (i = 1; i <= n; ++i) {
        m = order[i]
        a = ((m, "auto") in t) ? t[m, "auto"] : "-"
        h = ((m, "hash") in t) ? t[m, "hash"] : "-"
        r = ((m, "rmerge") in t) ? t[m, "rmerge"] : "-"
        b = (m in best) ? best[m] : "-"
        ratio = (a != "-" && b != "-" && a + 0 > 0) ? sprintf("%.2f", b / a) : "-"
        bpn = (m in peak && peak[m] != "NA" && nnzc[m] + 0 > 0) ? sprintf("%.1f", peak[m] / nnzc[m]) : "-"
        mine = (h != "-" && (r == "-" || h + 0 < r + 0)) ? h : r
        bestours = (mine != "-" && a != "-") ? sprintf("%.2f", a / mine) : "-"
        printf "%-16s %8.3g %8s %8s %8s %6s %7s %6s %6s %5s %6s %7s %s\n", substr(m, 1, 16), flops[m], a, h, r, (m in gf ? gf[m] : "-"), b, (m in alg ? alg[m] : "-"), ratio, bpn, bestours, (m in floor_ms ? floor_ms[m] : "-"), note[m]
      }
    }' "$OUT/bench.tsv"
fi
grep -h -E '^(auto|rmerge) vs' "$OUT/bench.md" 2>/dev/null

if [[ "$TRANSPOSE" == 1 ]]; then
  echo "== spgemm-bench --transpose"
  timeout "$BENCH_TIMEOUT" "$BENCH" "${MATRICES[@]}" "${GENERATED[@]}" --transpose \
    --repeats "$REPEATS" --warmups "$WARMUPS" --commit "$COMMIT" --tsv "$OUT/transpose.tsv" \
    --markdown "$OUT/transpose.md" >"$OUT/transpose.log" 2>&1 || { echo "transpose bench: exit $? (see transpose.log)"; status=1; }
  awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i; next }
    { m = $c["matrix"]; a = $c["algorithm"]; t[m, a] = $c["ms"]; st[m, a] = $c["status"]; if (!(m in seen)) { seen[m] = 1; order[++n] = m } }
    END { for (i = 1; i <= n; ++i) { m = order[i]; printf "%-16s transpose %8s (%s)  csr2csc %8s (%s)\n", substr(m, 1, 16), t[m, "transpose"], st[m, "transpose"], t[m, "cusparse-csr2csc"], st[m, "cusparse-csr2csc"] } }' "$OUT/transpose.tsv" 2>/dev/null
  grep -h -E '^transpose vs' "$OUT/transpose.md" 2>/dev/null
fi
exit $status
