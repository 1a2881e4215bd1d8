#!/usr/bin/env bash
# The first command in a fresh clone (README.md): on Debian 12 it installs
# what the build needs where something is missing (.ci/install-deps.sh: apt
# through sudo, then pip), builds spgemmd and the `spgemm` CLI into build/,
# starts a spgemmd on a free loopback port, squares a matrix through it,
# prints the summary and stops the server.
#
#   ./quickstart.sh                  the example matrix the repository ships
#   ./quickstart.sh poisson3d7:64    or any .mtx / .mtx.gz file or generator spec
#
# Without nvcc the build is CPU-only and the server runs on the CPU backend;
# with it, the GPU backend is built too (longer) and the server uses every GPU.
set -euo pipefail
cd "$(dirname "$0")"
input=${1:-examples/bcsstk13.mtx.gz}

step() { printf '\n== %s\n' "$*"; }

if ! command -v dpkg-query >/dev/null; then
  step "Not Debian: install what .ci/install-deps.sh names yourself; building with what is there"
elif ! missing=$(bash .ci/install-deps.sh --check); then
  step "Installing the dependencies ($missing) with .ci/install-deps.sh: apt-get through sudo, then pip"
  bash .ci/install-deps.sh
fi

# The configure command of tests/run.sh, so that the test command reuses this build.
step "Building spgemmd and the spgemm CLI into build/"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$(nproc)" --target spgemmd spgemm_cli

name=$(basename "$input")
name=${name%.gz}
name=${name%.mtx}
output=build/quickstart/${name//:/_}_squared.mtx
mkdir -p build/quickstart
step "Squaring $input on a local spgemmd (client/cli/run-local.sh)"
client/cli/run-local.sh multiply "$input" -o "$output" --stats

step "Done: the product is in $output"
cat <<EOF
Next:
  bash tests/run.sh                          # every test suite (builds the rest first)
  build/server/spgemmd --listen=127.0.0.1 &  # a server of your own on port 50051 (spgemmd --help)
  build/client/spgemm multiply A.mtx -o C.mtx --stats   # the CLI finds it (SPGEMM_SERVER, default localhost:50051)
EOF
