#!/usr/bin/env bash
# The sanitizer build and the fuzzers: spgemmd, the server's test suites and
# the libFuzzer targets of tests/fuzz, compiled with clang, AddressSanitizer
# and UndefinedBehaviorSanitizer into build-sanitize/ (CPU only). Runs the
# core, server and attack suites there, then each fuzz target for
# FUZZ_SECONDS (default 30) from its seed corpus (tests/fuzz/corpus/TARGET;
# new inputs go to a scratch copy). Prints the executions of each target; a
# crash, a leak or a sanitizer report fails the run and leaves the input in
# build-sanitize/fuzz/TARGET/. CI runs it after tests/run.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."

build=${SANITIZE_BUILD:-build-sanitize}
seconds=${FUZZ_SECONDS:-30}
jobs=$(nproc)
# fuzzer-no-link: the coverage the fuzzers steer by, in every library they
# reach. -O1 -g1: a quicker build (CI's clock), line numbers in the reports.
flags="-O1 -g1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -fsanitize=fuzzer-no-link"
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=None -DSPGEMM_WITH_CUDA=OFF \
  -DSPGEMM_FUZZ=ON -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" >/dev/null
fuzzers=(csr_validator chunk_assembler upload_call region_upload matrix_market)
cmake --build "$build" -j "$jobs" --target spgemmd spgemmd_core_tests chunk_codec_test chunk_frame_test \
  spare_arrays_test auth_test local_peer_test spgemmd_integration_test spgemmd_security_test spgemmd_attack_tests "${fuzzers[@]/%/_fuzz}"

# A failed allocation is an exception (std::bad_alloc), as without ASan.
export ASAN_OPTIONS=allocator_may_return_null=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1
# The attack suite's RSS measurements mean nothing under ASan's quarantine
# and shadow memory: that part runs in the plain build only.
ctest --test-dir "$build" -R '^(core|server|attack)\.' -E '^attack\.abuse$' --output-on-failure -j "$jobs"

echo "== fuzzing, ${seconds} s a target"
status=0
for f in "${fuzzers[@]}"; do
  work="$build/fuzz/$f"
  rm -rf "$work" && mkdir -p "$work/corpus"
  cp tests/fuzz/corpus/"$f"/* "$work/corpus/"
  if (cd "$work" && "../../tests/fuzz/${f}_fuzz" -max_total_time="$seconds" -print_final_stats=1 -timeout=20 \
        -rss_limit_mb=2048 corpus >log 2>&1); then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
    echo "$f: ${execs:-?} executions, no crash"
  else
    echo "$f: FAILED; its log ends:"
    tail -n 40 "$work/log"
    status=1
  fi
done
exit $status
