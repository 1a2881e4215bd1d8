# shellcheck shell=bash
# Sourced by run_device.sh and run_service_device.sh on the GPU host (it
# travels with them into .device/): the common start of a run there.
#
#   device_setup DEFAULT_OUT "$@"
#     Reads DIR [COMMIT] from the arguments (usage and exit 2 when DIR is not a
#     folder); sets DIR, COMMIT and OUT (default $PWD/DEFAULT_OUT, created);
#     puts DIR/lib before the host's CUDA libraries on LD_LIBRARY_PATH.
#   write_environment
#     Writes commit, date, host and GPU to $OUT/environment.txt and prints it.
#   find_matrices
#     Sets MATRICES to the DIR/matrices/*.mtx.gz files (none: empty).

device_setup() {
  local default_out=$1
  shift
  if [[ $# -lt 1 || ! -d "$1" ]]; then
    echo "usage: $0 DIR [COMMIT]   (DIR holds bin/, lib/ and matrices/)" >&2
    exit 2
  fi
  DIR=$(cd "$1" && pwd)
  COMMIT=${2:-unknown}
  OUT=${OUT:-$PWD/$default_out}
  mkdir -p "$OUT"
  # The binaries look in $ORIGIN/../lib first; the CUDA libraries of the host
  # are the fallback.
  export LD_LIBRARY_PATH="$DIR/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
}

write_environment() {
  {
    echo "commit: $COMMIT"
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(uname -srm), $(nproc) cores"
    if command -v nvidia-smi >/dev/null 2>&1; then
      nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
    else
      echo "nvidia-smi: not found"
    fi
  } >"$OUT/environment.txt" 2>&1
  cat "$OUT/environment.txt"
}

find_matrices() {
  shopt -s nullglob
  # shellcheck disable=SC2034  # read by the sourcing script
  MATRICES=("$DIR"/matrices/*.mtx.gz)
  shopt -u nullglob
}
