#!/usr/bin/env bash
# Packs builds of the engine at several revisions for bench/run_ab_device.sh:
#
#   [DEST=.device-ab] [WORKTREE=../spgemmd-ab] [TESTS="NAME ..."] [AMG=1] \
#     bench/package_ab.sh NAME=REV [NAME=REV ...] -- INPUT [INPUT ...]
#
# The first NAME=REV is the baseline. Each revision is built for sm_90 in one
# scratch worktree (WORKTREE, a detached checkout kept between calls, with its
# build-device folder: later calls rebuild incrementally), spgemm-bench for
# every variant, spgemm-amg-bench too with AMG=1 (the Galerkin pyramid and the
# setup of run_ab_device.sh's AMG_PROBLEMS), and spgemm_gpu_tests for those
# TESTS names (default: every variant but the baseline). INPUTs: generator specs as spgemm-bench takes
# them, or Matrix Market files (copied into matrices/, their /aat, /f32
# suffixes kept). The package (binaries stripped, lib/, the shared matrices
# for the GPU suites, the run script) goes into DEST/ab.tgz, within the
# device tool's 64 MiB; on the GPU host:
#   mkdir -p /tmp/ab && tar xzf DEST/ab.tgz -C /tmp/ab && bash /tmp/ab/run_ab_device.sh /tmp/ab
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
dest=${DEST:-.device-ab}
worktree=${WORKTREE:-$repo/../spgemmd-ab}
variants=()
revs=()
while [[ $# -gt 0 && "$1" != -- ]]; do
  [[ "$1" == *=* ]] || { echo "usage: $0 NAME=REV ... -- INPUT ..." >&2; exit 2; }
  variants+=("${1%%=*}")
  revs+=("$(git rev-parse --verify "${1#*=}^{commit}")")
  shift
done
[[ $# -gt 0 ]] && shift
if [[ ${#variants[@]} -lt 2 || $# -lt 1 ]]; then
  echo "usage: $0 NAME=REV NAME=REV ... -- INPUT ...   (a baseline, at least one variant, inputs)" >&2
  exit 2
fi
tested=("${variants[@]:1}")
[[ -n "${TESTS:-}" ]] && read -r -a tested <<<"$TESTS"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/bin "$stage"/lib "$stage"/matrices
[[ -d "$worktree" ]] || git worktree add -q --detach "$worktree" "${revs[0]}"
for i in "${!variants[@]}"; do
  v=${variants[$i]}
  git -C "$worktree" checkout -q --detach "${revs[$i]}"
  cmake -S "$worktree" -B "$worktree/build-device" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPGEMM_WITH_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DSPGEMM_WITH_SERVICE=OFF >/dev/null
  targets=(spgemm_bench)
  [[ " ${tested[*]} " == *" $v "* ]] && targets+=(spgemm_gpu_tests)
  [[ "${AMG:-}" == 1 ]] && targets+=(spgemm_amg_bench)
  echo "== $v: $(git -C "$worktree" log -1 --format='%h %s' | cut -c1-100)"
  cmake --build "$worktree/build-device" -j "$(nproc)" --target "${targets[@]}" >/dev/null
  cp "$worktree/build-device/bench/spgemm-bench" "$stage/bin/spgemm-bench-$v"
  [[ "${AMG:-}" == 1 ]] && cp "$worktree/build-device/bench/spgemm-amg-bench" "$stage/bin/spgemm-amg-bench-$v"
  [[ " ${targets[*]} " == *" spgemm_gpu_tests "* ]] &&
    cp "$worktree/build-device/tests/engine/spgemm_gpu_tests" "$stage/bin/gpu-tests-$v"
  echo "$v" >>"$stage/variants.txt"
done
strip --strip-unneeded "$stage"/bin/*
for input in "$@"; do
  file=${input%%.mtx.gz*}.mtx.gz
  if [[ "$input" == *.mtx.gz* && -f "$file" ]]; then
    cp "$file" "$stage/matrices/"
    echo "matrices/$(basename "$file")${input#"$file"}" >>"$stage/inputs.txt"
  else
    echo "$input" >>"$stage/inputs.txt"
  fi
done
cp ../shared/matrices/*.mtx.gz "$stage/matrices/"  # the GPU suites' matrices
bench/copy_libs.sh "$stage/lib" "$stage"/bin/*
cp bench/run_ab_device.sh bench/ab_summary.py bench/device_env.sh "$stage/"
mkdir -p "$dest"
tar czf "$dest/ab.tgz" -C "$stage" .
size=$(du -m "$dest/ab.tgz" | cut -f1)
echo "$dest/ab.tgz: $size MiB (the device tool carries at most 64 MiB): ${variants[*]}, $(wc -l <"$stage/inputs.txt") inputs"
