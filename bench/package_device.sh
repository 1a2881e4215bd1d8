#!/usr/bin/env bash
# Builds the GPU binaries for the GPU host (sm_90, static CUDA runtime) and
# gathers what a run there needs into $DEST (default .device/; ignored by git,
# carried by the device tool): bin/, lib/ (the shared libraries ldd lists beyond glibc,
# libstdc++, libgcc_s and the CUDA libraries the host has) and matrices/.
#
#   [DEST=dir] [BUILD=dir] bench/package_device.sh [--service | --peers | --graph | --amg]
#     --service: spgemmd, the CLI, the service tests, benches (run_service_device.sh, run_e2e_device.sh,
#                run_scale_device.sh) and load program instead
#     --graph: spgemmd, the CLI, graph_bench.py and run_graph_device.sh, the Python client's graph
#              suites and worked examples, the wheels they need offline (python-graphblas and
#              SuiteSparse:GraphBLAS, networkx, ...), the shared graphs (bench/README.md)
#     --amg: spgemm-amg-bench, the GPU tests and run_amg_device.sh with amg_pyamg.py (no matrices:
#            the run generates them; pyamg's wheel travels apart, in .whl/)
#     --peers: spgemm-bench, spgemm-export-mtx, spgemm_gpu_tests and run_peers_device.sh with its scripts
#              (stripped), the peer drivers of $PEERS_BIN (default .peers/bin, built by the developer and never
#              committed; absent: none) in peers/, and the matrices of ../shared/corpus too, with both
#              MANIFESTs (bench/README.md)
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${DEST:-.device}

service=OFF
peers=OFF
graph=OFF
amg=OFF
[ "${1:-}" = "--service" ] && service=ON
[ "${1:-}" = "--graph" ] && service=ON && graph=ON
[ "${1:-}" = "--peers" ] && peers=ON
[ "${1:-}" = "--amg" ] && amg=ON
build=${BUILD:-build-device}  # BUILD: one build folder per concurrent packager
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPGEMM_WITH_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DSPGEMM_WITH_SERVICE="$service" >/dev/null
# --service: the service's binaries only (stripped), so that with the
# matrices and libraries they travel under the device tool's 64 MiB.
if [ "$graph" = ON ]; then
  targets=(spgemmd spgemm_cli)
elif [ "$service" = ON ]; then
  targets=(spgemmd spgemm_cli spgemm_service_bench spgemm_e2e_bench spgemm_scale_bench spgemm_load spgemmd_integration_test spgemm_client_tests)
elif [ "$peers" = ON ]; then
  targets=(spgemm_bench spgemm_export_mtx spgemm_gpu_tests)
elif [ "$amg" = ON ]; then
  targets=(spgemm_amg_bench spgemm_gpu_tests)
else
  targets=(spgemm_bench spgemm_gpu_tests spgemm_engine_tests)
fi
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"

rm -rf "$dest" && mkdir -p $dest/bin $dest/lib $dest/matrices
if [ "$peers" = ON ]; then
  # Stripped, so that with every matrix and the drivers they stay under the device tool's 64 MiB.
  cp "$build"/bench/spgemm-bench "$build"/bench/spgemm-export-mtx "$build"/tests/engine/spgemm_gpu_tests "$dest"/bin/
  strip --strip-unneeded "$dest"/bin/*
  cp bench/run_peers_device.sh bench/peer_runs.py bench/peers_summary.py "$dest"/
  peers_bin=${PEERS_BIN:-.peers/bin}
  if compgen -G "$peers_bin/*" >/dev/null; then
    mkdir -p "$dest"/peers
    cp "$peers_bin"/* "$dest"/peers/
    strip --strip-unneeded "$dest"/peers/*
  else
    echo "no peer drivers in $peers_bin: the run fills our columns and cuSPARSE's only"
  fi
  cp ../shared/corpus/*.mtx.gz "$dest"/matrices/
  cp ../shared/corpus/MANIFEST.tsv "$dest"/matrices/MANIFEST-corpus.tsv
  cp ../shared/matrices/MANIFEST.tsv "$dest"/matrices/MANIFEST-shared.tsv  # the GPU tests' matrices
  # The last committed comparison: the peers' timings for a run without their stage (PREVIOUS_PEERS).
  cp bench/results/h100-peers.tsv "$dest"/previous-peers.tsv
elif [ "$graph" = ON ]; then
  cp "$build"/server/spgemmd "$build"/client/spgemm $dest/bin/
  strip --strip-unneeded $dest/bin/*
  cp bench/run_graph_device.sh bench/graph_bench.py $dest/
  mkdir -p $dest/examples $dest/python-tests $dest/wheels
  cp -r client/python/examples/graph $dest/examples/
  cp client/python/tests/{conftest.py,graph_oracle.py,test_semirings.py,test_graph_ops.py,test_algorithms.py} \
    $dest/python-tests/
  # Offline wheels for the GPU host's Python 3.12 (it has numpy, scipy, grpcio and pytest).
  python3 -m pip wheel -q --no-deps -w $dest/wheels ./client/python
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_17_x86_64 -d $dest/wheels python-graphblas suitesparse-graphblas donfig cffi pycparser \
    networkx pyyaml tqdm \
    "protobuf==$(python3 -c 'import google.protobuf as p; print(p.__version__)')"
  # The graphs of the benchmark and the suites (web-NotreDame, 3.9 MB, would pass the 64 MiB).
  for g in hep-th wiki-Vote ca-CondMat p2p-Gnutella31 email-Enron delaunay_n16 soc-Epinions1 luxembourg_osm \
    rajat01 cryg2500 mbeacxc; do
    cp ../shared/matrices/$g.mtx.gz $dest/matrices/
  done
elif [ "$amg" = ON ]; then
  cp "$build"/bench/spgemm-amg-bench "$build"/tests/engine/spgemm_gpu_tests $dest/bin/
  strip --strip-unneeded $dest/bin/*
  cp bench/run_amg_device.sh bench/amg_pyamg.py $dest/
elif [ "$service" = OFF ]; then
  cp "$build"/bench/spgemm-bench "$build"/tests/engine/spgemm_gpu_tests "$build"/tests/engine/spgemm_engine_tests $dest/bin/
else
  cp "$build"/server/spgemmd "$build"/client/spgemm "$build"/bench/spgemm-service-bench "$build"/bench/spgemm-e2e-bench \
    "$build"/bench/spgemm-scale-bench "$build"/bench/spgemm-load \
    "$build"/tests/server/spgemmd_integration_test "$build"/tests/client/spgemm_client_tests $dest/bin/
  strip --strip-unneeded $dest/bin/*
  cp bench/run_service_device.sh bench/run_gpu_service_suite.sh bench/run_load_device.sh bench/service_timeline.py \
    bench/run_e2e_device.sh bench/e2e_bench.py bench/run_scale_device.sh bench/scale_summary.py \
    client/python/examples/compare.py $dest/
  # The Python package as a wheel, its tests, and the protobuf runtime its
  # generated code needs (the GPU host has Python 3.12 and grpcio, no network).
  mkdir -p $dest/wheels
  python3 -m pip wheel -q --no-deps -w $dest/wheels ./client/python
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_17_x86_64 -d $dest/wheels "protobuf==$(python3 -c 'import google.protobuf as p; print(p.__version__)')"
  cp -r client/python/tests $dest/python-tests
fi
cp bench/run_device.sh bench/run_gpu_checks_device.sh bench/device_env.sh $dest/
bench/copy_libs.sh "$dest"/lib "$dest"/bin/* "$dest"/peers/*
[ "$graph" = ON ] || [ "$amg" = ON ] || cp ../shared/matrices/*.mtx.gz $dest/matrices/
size=$(du -sm "$dest" | cut -f1)
echo "$dest: $size MiB (the device tool carries at most 64 MiB)"
