#!/usr/bin/env bash
# Builds everything into build/ and runs every test suite: the C++ suites
# through ctest (engine, server, C++ client and CLI, deployment checks) and the
# Python client's pytest suite against the spgemmd just built. The README's
# test command.
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=$(nproc)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs"

# The Python package, installed the way a user would (pip), into a virtual
# environment that sees the numpy/scipy/grpcio already installed.
python3 -m venv --system-site-packages build/python-env
build/python-env/bin/python -m pip install -q --disable-pip-version-check --no-deps ./client/python
SPGEMMD="$PWD/build/server/spgemmd" build/python-env/bin/python -m pytest -q client/python/tests
