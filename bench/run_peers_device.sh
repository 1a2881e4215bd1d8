#!/usr/bin/env bash
# Runs spgemm-bench (our methods and cuSPARSE) and the peer libraries' drivers
# on the same matrices in one call on the GPU host, and merges everything into
# one table with our ratio to the best peer per matrix (bench/peers_summary.py).
#
#   bench/run_peers_device.sh DIR [COMMIT]
#
# DIR holds bin/spgemm-bench, bin/spgemm-export-mtx, bin/spgemm_gpu_tests, lib/,
# matrices/*.mtx.gz (with MANIFEST-*.tsv), the scripts, and peers/ with the
# drivers the developer built (optional: without them the peer columns stay
# empty). `bench/package_device.sh --peers` gathers it. The inputs: every
# matrix file (A*A, or A*A^T where it is rectangular) and the generated
# classes below. Results go to $OUT (default ./peers-out):
#   environment.txt   GPU, driver, host
#   gpu_tests.log     spgemm_gpu_tests on the shared matrices (STAGES with tests)
#   bench.log/.tsv/.md spgemm-bench's output (bench/README.md)
#   export.log        spgemm-export-mtx's (the .mtx files go to $MTX_DIR, not $OUT)
#   peers.tsv, peer-logs/  peer_runs.py's results and each driver's output
#   h100-peers.tsv/.md the merged table and its summary
#   plans.txt         the method auto ran on each input, and why (spgemm-bench's plan lines)
# The summary comes last on stdout, then the GPU tests' verdict. Exit status 1
# when a test failed or a result of ours did not match.
#
# Settings (environment): GENERATED_LIST, MATRIX_NAMES (space-separated, narrow
# the run), ALGORITHMS (spgemm-bench --algorithms; default: its own list),
# REPEATS (7), WARMUPS (2), METHOD_SECONDS (spgemm-bench --method-seconds: 0, no
# limit), BENCH_TIMEOUT (300 s), PEER_TIMEOUT (45 s per input),
# PEER_BUDGET (70 s per driver), MTX_DIR (/tmp/spgemm-peers-mtx), STAGES ("bench peers": one of
# them splits the run over two calls; bench/peers_summary.py then merges the two TSVs anywhere;
# "tests" first runs spgemm_gpu_tests on the matrices of MANIFEST-shared.tsv within TEST_TIMEOUT
# (300 s); "stage-b" adds RMerge with SPGEMM_RMERGE_STAGE_B=$STAGE_B_VALUE (default 1024; the
# engine's default is 0, no stage of B) on STAGE_B_LIST for auto and rmerge, within
# STAGE_B_TIMEOUT (60 s): bench-stage-b.tsv), PREVIOUS_PEERS (an earlier h100-peers.tsv: the peers'
# timings where this run has none; default DIR/previous-peers.tsv where present).
set -u

# shellcheck source-path=SCRIPTDIR source=device_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/device_env.sh"
device_setup peers-out "$@"

BENCH="$DIR/bin/spgemm-bench"
EXPORT="$DIR/bin/spgemm-export-mtx"
GENERATED=(
  poisson3d7:100 poisson3d27:64 poisson2d5:1024 elasticity3d:40 rmat:16:16 rmat:17:16 rmat:18:16
  er:1000000:8 er:200000:32 er:1000000:2
  chunglu:300000:16:2.2 chunglu:500000:16:2.5 chunglu:500000:16:3.0
  kron:16:16:0.57:0.19:0.19 kron:17:16:0.45:0.15:0.15 kron:18:8:0.35:0.25:0.25
  band:1000000:64:16 poisson3d13:100 poisson3d19:80 femblocks:30:6 circuit:500000:4:4:10000
  tall:1000000:125000:2/aat tall:1000000:125000:2/ata tall:200000:2000:8/ata
  poisson3d7:100/f32 er:1000000:8/f32 chunglu:500000:16:2.5/f32 rmat:16:16/f32
)
if [[ -n "${GENERATED_LIST+x}" ]]; then read -r -a GENERATED <<<"$GENERATED_LIST"; fi
REPEATS=${REPEATS:-7}
WARMUPS=${WARMUPS:-2}
METHOD_SECONDS=${METHOD_SECONDS:-0}
PREVIOUS_PEERS=${PREVIOUS_PEERS:-$DIR/previous-peers.tsv}
STAGE_B_VALUE=${STAGE_B_VALUE:-1024}
TEST_TIMEOUT=${TEST_TIMEOUT:-300}
STAGE_B_TIMEOUT=${STAGE_B_TIMEOUT:-60}
STAGE_B_LIST=${STAGE_B_LIST:-poisson3d7:100 poisson2d5:1024 poisson3d13:100 er:1000000:8 er:1000000:2 band:1000000:64:16 \
$DIR/matrices/cage11.mtx.gz $DIR/matrices/delaunay_n16.mtx.gz $DIR/matrices/finan512.mtx.gz $DIR/matrices/Andrews.mtx.gz \
$DIR/matrices/bcsstk29.mtx.gz $DIR/matrices/fe_body.mtx.gz}
BENCH_TIMEOUT=${BENCH_TIMEOUT:-300}
PEER_TIMEOUT=${PEER_TIMEOUT:-45}
PEER_BUDGET=${PEER_BUDGET:-70}
MTX_DIR=${MTX_DIR:-/tmp/spgemm-peers-mtx}
STAGES=" ${STAGES:-bench peers} "
for b in "$BENCH" "$EXPORT"; do
  if [[ ! -x "$b" ]]; then
    echo "error: $b not found (bench/package_device.sh --peers)" >&2
    exit 1
  fi
done

write_environment
started=$SECONDS
stage() { echo "== $1 (at $((SECONDS - started)) s)"; }

# The GPU tests, on the shared matrices only (the corpus would multiply their time).
tests_status=0
tests_verdict=""
if [[ "$STAGES" == *" tests "* ]]; then
  TESTS="$DIR/bin/spgemm_gpu_tests"
  if [[ -x "$TESTS" ]]; then
    shared="$OUT/shared-matrices"
    rm -rf "$shared" && mkdir -p "$shared"
    if [[ -f "$DIR/matrices/MANIFEST-shared.tsv" ]]; then
      awk -F'\t' 'NR > 1 { print $2 }' "$DIR/matrices/MANIFEST-shared.tsv" |
        while read -r f; do [[ -f "$DIR/matrices/$f" ]] && ln -s "$DIR/matrices/$f" "$shared/$f"; done
    fi
    stage "spgemm_gpu_tests: $(find "$shared" -name '*.mtx.gz' | wc -l) shared matrices"
    SPGEMM_MATRICES="$shared" SPGEMM_REQUIRE_MATRICES=1 timeout "$TEST_TIMEOUT" "$TESTS" >"$OUT/gpu_tests.log" 2>&1
    tests_status=$?
    rm -rf "$shared"
    if [[ $tests_status -eq 0 ]]; then
      tests_verdict="GPU tests: passed ($(grep -E '^\[  PASSED|^\[  SKIPPED' "$OUT/gpu_tests.log" | tr '\n' ' '))"
    else
      tests_verdict="GPU tests: FAILED (exit $tests_status; 124: stopped after $TEST_TIMEOUT s): $(grep '^\[  FAILED  \] [A-Z]' "$OUT/gpu_tests.log" | sort -u | wc -l) failed"
      grep -E '^\[  FAILED  \] [A-Z]|exception' "$OUT/gpu_tests.log" | sort -u | head -n 12
    fi
    echo "$tests_verdict"
  else
    tests_verdict="GPU tests: $TESTS not present, not run"
  fi
fi

# Every matrix file, square ones as A*A, rectangular ones as A*A^T.
find_matrices
INPUTS=()
for f in "${MATRICES[@]}"; do
  name=$(basename "$f" .mtx.gz)
  if [[ -n "${MATRIX_NAMES:-}" && " $MATRIX_NAMES " != *" $name "* ]]; then continue; fi
  square=$(zcat "$f" 2>/dev/null | awk '!/^%/ { print ($1 == $2); exit }')
  if [[ "$square" == 1 ]]; then INPUTS+=("$f"); else INPUTS+=("$f/aat"); fi
done
INPUTS+=("${GENERATED[@]}")

PEERS=0
if [[ "$STAGES" == *" peers "* ]] && compgen -G "$DIR/peers/*" >/dev/null; then PEERS=1; fi
if [[ $PEERS == 1 ]]; then
  stage "spgemm-export-mtx: ${#INPUTS[@]} inputs as Matrix Market files for the peers, into $MTX_DIR"
  rm -rf "$MTX_DIR"
  "$EXPORT" --dir "$MTX_DIR" --manifest "$MTX_DIR/manifest.tsv" "${INPUTS[@]}" >"$OUT/export.log" 2>&1 ||
    { echo "spgemm-export-mtx: exit $? (see export.log)"; tail -n 5 "$OUT/export.log"; }
fi

bench_status=0
if [[ "$STAGES" == *" bench "* ]]; then
  stage "spgemm-bench: ${#INPUTS[@]} inputs, median of $REPEATS"
  algorithms=()
  if [[ -n "${ALGORITHMS:-}" ]]; then algorithms=(--algorithms "$ALGORITHMS"); fi
  timeout "$BENCH_TIMEOUT" "$BENCH" "${INPUTS[@]}" "${algorithms[@]}" --repeats "$REPEATS" --warmups "$WARMUPS" \
    --method-seconds "$METHOD_SECONDS" --commit "$COMMIT" --tsv "$OUT/bench.tsv" --markdown "$OUT/bench.md" \
    >"$OUT/bench.log" 2>&1
  bench_status=$?
  if [[ $bench_status -ne 0 ]]; then
    echo "spgemm-bench: exit $bench_status (124: stopped after $BENCH_TIMEOUT s; see bench.log)"
    grep -v '^|' "$OUT/bench.log" | tail -n 5
  fi
fi

if [[ "$STAGES" == *" stage-b "* ]]; then
  read -r -a stage_b_inputs <<<"$STAGE_B_LIST"
  stage "spgemm-bench with SPGEMM_RMERGE_STAGE_B=$STAGE_B_VALUE: ${#stage_b_inputs[@]} inputs"
  SPGEMM_RMERGE_STAGE_B=$STAGE_B_VALUE timeout "$STAGE_B_TIMEOUT" "$BENCH" "${stage_b_inputs[@]}" --algorithms auto,rmerge \
    --repeats "$REPEATS" --warmups "$WARMUPS" --no-check --tsv "$OUT/bench-stage-b.tsv" >"$OUT/bench-stage-b.log" 2>&1 ||
    echo "spgemm-bench (stage of B): exit $?"
fi

HERE=$(dirname "${BASH_SOURCE[0]}")
if [[ $PEERS == 1 ]]; then
  drivers=("$DIR"/peers/*)
  stage "peers: ${drivers[*]##*/}"
  python3 "$HERE/peer_runs.py" --drivers "$DIR/peers" --manifest "$MTX_DIR/manifest.tsv" --tsv "$OUT/peers.tsv" \
    --logs "$OUT/peer-logs" --repeats "$REPEATS" --warmups "$WARMUPS" --timeout "$PEER_TIMEOUT" --budget "$PEER_BUDGET"
elif [[ "$STAGES" == *" peers "* ]]; then
  stage "peers: no drivers in $DIR/peers, their columns stay empty"
fi

if [[ -s "$OUT/bench.tsv" ]]; then
  stage "summary"
  manifests=()
  for m in "$DIR"/matrices/MANIFEST-*.tsv; do [[ -f "$m" ]] && manifests+=(--manifest "$m"); done
  previous=()
  [[ -f "$PREVIOUS_PEERS" ]] && previous=(--previous "$PREVIOUS_PEERS")
  python3 "$HERE/peers_summary.py" "$OUT/bench.tsv" --peers "$OUT/peers.tsv" "${previous[@]}" "${manifests[@]}" \
    --tsv "$OUT/h100-peers.tsv" --markdown "$OUT/h100-peers.md"
fi
if grep -q '^plan: ' "$OUT/bench.log" 2>/dev/null; then
  # spgemm-bench's line per input: the method auto ran and why.
  grep '^plan: ' "$OUT/bench.log" >"$OUT/plans.txt"
  echo "auto's methods (plans.txt): $(sed -nE 's/^plan: .*: auto: ([a-z]+).*/\1/p' "$OUT/plans.txt" | sort | uniq -c |
    awk '{ printf "%s%s %s", sep, $1, $2; sep = ", " }')"
  scattered='^plan: ([^:]+(:[^:]+)*): auto: hash.*\(rows of A ([0-9.]+) of the matrix off the diagonal, ([0-9]+) products.*'
  grep 'off the diagonal' "$OUT/plans.txt" | sed -E "s/$scattered/  scattered rows, hash: \\1 (\\3, \\4 products a row)/"
fi
if [[ -s "$OUT/bench-stage-b.tsv" && -s "$OUT/bench.tsv" ]]; then
  echo "RMerge's stage of B (ms: default / SPGEMM_RMERGE_STAGE_B=$STAGE_B_VALUE):"
  awk -F'\t' 'FNR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i; next }
    FILENAME ~ /stage-b/ { staged[$c["matrix"] " " $c["algorithm"]] = $c["ms"]; next }
    ($c["algorithm"] == "auto" || $c["algorithm"] == "rmerge") { plain[$c["matrix"] " " $c["algorithm"]] = $c["ms"] }
    END { for (k in staged) if (k in plain) printf "  %-32s %9s %9s\n", k, plain[k], staged[k] }' \
    "$OUT/bench.tsv" "$OUT/bench-stage-b.tsv" | sort
fi
if [[ -s "$OUT/bench.tsv" ]]; then
  # Our methods' results that did not match, or failed, in one line each.
  awk -F'\t' 'NR > 1 && $7 !~ /^cusparse/ && $12 != "ok" { printf "  not ok: %s %s: %s\n", $2, $7, substr($12, 1, 90) }' \
    "$OUT/bench.tsv"
fi
echo "(done in $((SECONDS - started)) s)"
[[ -n "$tests_verdict" ]] && echo "$tests_verdict"
# spgemm-bench exits 1 on a mismatch; a timeout (124) leaves a partial table, reported above.
[[ $bench_status -eq 1 || $tests_status -ne 0 ]] && exit 1
exit 0
