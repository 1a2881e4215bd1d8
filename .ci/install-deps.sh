#!/usr/bin/env bash
# Installs everything spgemmd needs to build and test, on Debian 12 (bookworm):
# apt packages (through sudo unless run as root), then Python packages (pip).
# Callers: .ci/run, the Dockerfile's build stage and ./quickstart.sh.
# The CUDA toolkit is not installed here: CI machines and the CUDA devel image
# bring their own; without nvcc the build is CPU-only.
#
#   bash .ci/install-deps.sh           install
#   bash .ci/install-deps.sh --check   install nothing; exit 1 naming what is missing
set -euo pipefail

apt_packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  zlib1g-dev libssl-dev openssl
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev
  prometheus-cpp-dev libcivetweb-dev
  libgtest-dev libgmock-dev libcli11-dev
  python3 python3-pip python3-venv python3-yaml
)
pip_packages=(grpcio grpcio-tools numpy scipy pytest tqdm pyyaml kubernetes-validate python-graphblas networkx dask distributed pyamg)
# The fuzzers and the sanitizer build (tests/fuzz, tests/sanitize): clang
# with libFuzzer and the sanitizer runtimes, llvm-symbolizer for their reports.
test_tool_packages=(clang libclang-rt-dev llvm)

if [ "${1:-}" = "--check" ]; then
  missing=()
  for p in "${apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
  if [ "${SPGEMM_SKIP_PIP:-0}" != "1" ]; then
    # pip names what it lacks: "WARNING: Package(s) not found: a, b".
    not_found=$({ python3 -m pip show "${pip_packages[@]}" 2>&1 >/dev/null || true; } | sed -n 's/.*not found: //p' | tr -d ',')
    missing+=($not_found)
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    echo "missing: ${missing[*]}"
    exit 1
  fi
  exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${apt_packages[@]}" >/dev/null

# SPGEMM_SKIP_PIP=1 skips what only the test suites need: the Python packages
# and the fuzzers' clang (the Dockerfile's build stage does: the image builds
# no Python and runs no fuzzer; tests/deploy reads YAML with python3-yaml).
if [ "${SPGEMM_SKIP_PIP:-0}" != "1" ]; then
  $sudo apt-get install -y -qq --no-install-recommends "${test_tool_packages[@]}" >/dev/null
  # A Debian-managed system Python refuses plain `pip install` (PEP 668).
  pip_flags=(-q --disable-pip-version-check --root-user-action=ignore)
  if python3 -c 'import os, sysconfig, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")))'; then
    pip_flags+=(--break-system-packages)
  fi
  python3 -m pip install "${pip_flags[@]}" "${pip_packages[@]}"
fi
