#!/usr/bin/env bash
# GPU host: the engine's GPU suite with the change, then spgemm-bench auto and spgemm-amg-bench
# before (bin/*-base; SPGEMM_RANKED_WINDOWS=1: the committed write-out) and after (bin/*-new), in turn.
set -u
DIR=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$PWD/ab-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$DIR/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export SPGEMM_MATRICES="$DIR/matrices" SPGEMM_REQUIRE_MATRICES=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$OUT/environment.txt"
if [[ "${TESTS:-1}" = 1 ]]; then
  start=$(date +%s)
  timeout "${TEST_TIMEOUT:-330}" "$DIR/bin/spgemm_gpu_tests" >"$OUT/gpu_tests.log" 2>&1
  echo "gpu tests rc=$? $(( $(date +%s) - start )) s"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) \]|tests from .* ran" "$OUT/gpu_tests.log" | grep -v "SKIPPED \] Methods/GpuMethod.SharedMatrices/.*_f32\|GpuRowPanels.CopiesRowsFromAnotherGpu" | head -20
fi
read -r -a INPUTS <<<"${INPUTS_LIST}"
args=()
for i in "${INPUTS[@]}"; do
  if [[ -e "$DIR/matrices/${i%%/*}.mtx.gz" ]]; then args+=("$DIR/matrices/${i%%/*}.mtx.gz${i#"${i%%/*}"}"); else args+=("$i"); fi
done
for round in $(seq 1 "${ROUNDS:-1}"); do
  for v in base new; do
    start=$(date +%s)
    SPGEMM_RANKED_WINDOWS=1 timeout "${BENCH_TIMEOUT:-150}" "$DIR/bin/spgemm-bench-$v" "${args[@]}" --algorithms auto \
      --repeats 5 --warmups 1 --method-seconds 2 --no-check --tsv "$OUT/bench-$v-r$round.tsv" >"$OUT/bench-$v-r$round.log" 2>&1
    echo "bench $v round $round rc=$? $(( $(date +%s) - start )) s"
    start=$(date +%s)
    timeout 120 "$DIR/bin/spgemm-amg-bench-$v" ${AMG_PROBLEMS:-poisson3d7:101 poisson2d5:1024 poisson3d27:101 elasticity3d:40} \
      --repeats 5 --no-cusparse --tsv "$OUT/amg-$v-r$round.tsv" >"$OUT/amg-$v-r$round.log" 2>&1
    echo "amg $v round $round rc=$? $(( $(date +%s) - start )) s"
  done
done
python3 - "$OUT" <<'PY'
import csv, glob, os, sys
out = sys.argv[1]
ms, amg = {}, {}
for f in sorted(glob.glob(os.path.join(out, "bench-*-r*.tsv"))):
    v = os.path.basename(f).split("-")[1]
    for r in csv.DictReader(open(f), delimiter="\t"):
        ms.setdefault(r["matrix"], {}).setdefault(v, []).append(float(r["ms"]))
for f in sorted(glob.glob(os.path.join(out, "amg-*-r*.tsv"))):
    v = os.path.basename(f).split("-")[1]
    for r in csv.DictReader(open(f), delimiter="\t"):
        amg.setdefault(r["problem"], {}).setdefault(v, []).append(r)
print("matrix\tbase ms\tnew ms")
for m, v in ms.items():
    print(m, "/".join("%.3f" % x for x in v.get("base", [])), "/".join("%.3f" % x for x in v.get("new", [])), sep="\t")
print("problem\tvariant\tpyramid\tsetup\tresetup")
for p, vs in amg.items():
    for v, rs in vs.items():
        print(p, v, "/".join(r["pyramid_ms"] for r in rs), "/".join(r["setup_ms"] for r in rs), "/".join(r["resetup_ms"] for r in rs), sep="\t")
PY
