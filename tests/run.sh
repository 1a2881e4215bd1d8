#!/usr/bin/env bash
# Builds everything into build/ and runs every test suite: the C++ suites
# through ctest (engine, server, C++ client and CLI, deployment checks) and the
# Python client's pytest suite against the spgemmd just built. The README's
# test command; it passes in a bare clone too.
#
# Tests that read the shared matrices (../shared/matrices, or $SPGEMM_MATRICES)
# skip where they are absent, and GPU tests where there is no GPU; each suite
# ends with the skips and their reasons. CI (.ci/run) sets
# SPGEMM_REQUIRE_MATRICES=1 and SPGEMM_REQUIRE_SERVER=1: there only GPU tests
# may skip.
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=$(nproc)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs"
# ctest lists what it skipped but not why: one line per reason.
only_gpu_may_skip=()
if [ "${SPGEMM_REQUIRE_MATRICES:-0}" = "1" ]; then only_gpu_may_skip=(--only-gpu-may-skip); fi
python3 tests/skip_summary.py build "${only_gpu_may_skip[@]}"

# The Python package, installed the way a user would (pip), into a virtual
# environment that sees the numpy/scipy/grpcio already installed.
python3 -m venv --system-site-packages build/python-env
build/python-env/bin/python -m pip install -q --disable-pip-version-check --no-deps ./client/python
# -rs: a line per skip reason.
SPGEMMD="$PWD/build/server/spgemmd" build/python-env/bin/python -m pytest -q -rs client/python/tests
