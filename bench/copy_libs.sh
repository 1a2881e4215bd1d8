#!/usr/bin/env bash
# Copies into LIB_DIR the shared libraries the binaries need beyond those every
# GPU host has (glibc, libstdc++, libgcc_s and the CUDA libraries): what ldd
# lists here for them.
#
#   bench/copy_libs.sh LIB_DIR BINARY...
set -euo pipefail
lib_dir=$1
shift
for bin in "$@"; do
  [ -f "$bin" ] || continue
  ldd "$bin" | awk '/=> \// {print $3}' |
    grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|librt|libcusparse|libcublas|libcublasLt|libnvJitLink)\.so' || true
done | sort -u | xargs -r -I{} cp -L {} "$lib_dir/"
