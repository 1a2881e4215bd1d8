#!/usr/bin/env bash
# Gathers the shared libraries that binaries need and a runtime base image
# lacks into DEST (the image's /opt/spgemm/lib). The binaries find them there
# through their RPATH $ORIGIN/../lib (set by CMake, with --disable-new-dtags so
# the libraries' own dependencies resolve from there too).
#
# Usage: gather-libs.sh [--provided PREFIX]... DEST BINARY...
#
# Not copied:
#  - the C runtime every glibc image has (glibc's libraries and the loader,
#    libstdc++, libgcc_s), built against the same distribution release;
#  - the NVIDIA driver's libraries (libcuda, libnvidia-*), which the container
#    toolkit mounts from the host at `docker run --gpus`;
#  - anything whose path starts with a --provided PREFIX (/usr/local/cuda
#    also matches /usr/local/cuda-13.0: the CUDA runtime image holds the
#    toolkit's shared libraries).
# Anything else ldd lists, or cannot find, is copied or is an error.
# tests/deploy/check_libs.py runs this on the built binaries in CI.
set -euo pipefail

provided=()
while [ $# -gt 0 ]; do
  case "$1" in
    --provided) provided+=("$2"); shift 2 ;;
    --provided=*) provided+=("${1#--provided=}"); shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
if [ $# -lt 2 ]; then
  echo "usage: $0 [--provided PREFIX]... DEST BINARY..." >&2
  exit 2
fi
dest=$1
shift
mkdir -p "$dest"

# Sonames of the base set: the C runtime, and the driver's libraries.
is_base() {
  case "$1" in
    linux-vdso.so.*|linux-gate.so.*|ld-linux*.so.*|ld64.so.*) return 0 ;;
    libc.so.6|libm.so.6|libpthread.so.0|libdl.so.2|librt.so.1|libresolv.so.2|libutil.so.1) return 0 ;;
    libanl.so.1|libnsl.so.1|libmvec.so.1|libBrokenLocale.so.1) return 0 ;;
    libstdc++.so.6|libgcc_s.so.1) return 0 ;;
    libcuda.so.1|libnvidia-*.so*|libnvcuvid.so.1|libnvoptix.so.1) return 0 ;;
  esac
  return 1
}

is_provided() {
  local path=$1 p
  for p in "${provided[@]+"${provided[@]}"}"; do
    case "$path" in "$p"*) return 0 ;; esac
  done
  return 1
}

status=0
copied=0
for bin in "$@"; do
  if [ ! -f "$bin" ]; then
    echo "gather-libs: no such binary: $bin" >&2
    status=1
    continue
  fi
  # ldd lists the whole closure: the binary's needs and theirs.
  # Lines: "soname => /path (addr)", "soname => not found", "/abs/path (addr)", "vdso (addr)".
  while IFS= read -r line; do
    line="${line#"${line%%[![:space:]]*}"}"
    [ -n "$line" ] || continue
    soname=${line%% *}
    path=""
    case "$line" in
      *" => not found"*) path="NOTFOUND" ;;
      *" => "*) path=${line#* => }; path=${path%% (*} ;;
      /*) path=${soname}; soname=$(basename "$soname") ;;
      *) ;;
    esac
    if is_base "$soname"; then
      continue
    fi
    if [ "$path" = "NOTFOUND" ] || [ -z "$path" ]; then
      echo "gather-libs: $bin needs $soname, which ldd cannot find" >&2
      status=1
      continue
    fi
    if is_provided "$path"; then
      continue
    fi
    if [ ! -e "$dest/$soname" ]; then
      # Copy the file the soname resolves to, under the soname (no symlinks).
      cp -L "$path" "$dest/$soname"
      chmod 0644 "$dest/$soname"
      copied=$((copied + 1))
    fi
  done < <(ldd "$bin")
done
echo "gather-libs: $copied libraries into $dest" >&2
exit $status
