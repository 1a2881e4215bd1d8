# syntax=docker/dockerfile:1
# spgemmd image. Build and run (see docs/deployment.md):
#
#   docker build -t spgemmd .
#   deploy/make-credentials.sh creds && sudo chown -R 10001:10001 creds   # a CA, a certificate, a token
#   docker run --gpus all -p 50051:50051 -v "$PWD/creds:/etc/spgemmd:ro" \
#     -e SPGEMMD_TLS_CERT=/etc/spgemmd/tls.crt -e SPGEMMD_TLS_KEY=/etc/spgemmd/tls.key \
#     -e SPGEMMD_TOKENS_FILE=/etc/spgemmd/tokens spgemmd
#
#   docker build --build-arg CPU_ONLY=1 -t spgemmd:cpu .     # hosts without GPUs
#
# The image listens on 0.0.0.0: without TLS and tokens spgemmd refuses to start
# (say so with -e SPGEMMD_INSECURE=true to serve a trusted network unprotected).
#
# Build arguments:
#   CPU_ONLY=1      Debian 12 build and runtime stages, no CUDA (the GPU backend is not built).
#   CUDA_VERSION    CUDA 13 release of the nvidia/cuda images (default below).
#   CUDA_OS         OS of the nvidia/cuda images. NVIDIA publishes no Debian
#                   images; Ubuntu 24.04 carries the same packages the install
#                   script names for Debian 12 (gRPC 1.51, protobuf 3.21,
#                   Abseil 20220623), so the one script serves both.
#   CMAKE_ARGS      extra CMake definitions, e.g. "-DCMAKE_CUDA_ARCHITECTURES=90;100"
#                   (the default is Hopper, sm_90).
#   RUN_TESTS=1     run ctest in the build stage (GPU tests skip: no GPU at build time).
#
# Every setting is an environment variable SPGEMMD_<FLAG> (docs/configuration.md).
# The checks in tests/deploy/ keep this file honest in CI: the build stage
# runs the same install script (.ci/install-deps.sh) and the same cmake
# commands as tests/run.sh, and deploy/docker/gather-libs.sh, run on the
# built binaries, collects every shared library ldd lists beyond the base set.

ARG CPU_ONLY=0
ARG CUDA_VERSION=13.0.2
ARG CUDA_OS=ubuntu24.04

# ---- build stage bases: one per CPU_ONLY value ------------------------------
FROM nvidia/cuda:${CUDA_VERSION}-devel-${CUDA_OS} AS build-base-0
# nvcc is on PATH in the devel image; name it too so CMake's detection cannot miss it.
ENV CUDACXX=/usr/local/cuda/bin/nvcc

FROM debian:12 AS build-base-1

# ---- build ------------------------------------------------------------------
FROM build-base-${CPU_ONLY} AS build
ARG CPU_ONLY
ARG CMAKE_ARGS=""
ARG RUN_TESTS=0
WORKDIR /src

# Dependencies first (own layer, cached while the script is unchanged). The
# same script CI runs; pip is skipped: nothing in the image needs it, and the
# system Python of Debian 12 / Ubuntu 24.04 refuses pip installs (PEP 668).
COPY .ci/install-deps.sh .ci/install-deps.sh
RUN SPGEMM_SKIP_PIP=1 bash .ci/install-deps.sh && rm -rf /var/lib/apt/lists/*

COPY . .

# The configure and build commands of tests/run.sh (CMAKE_ARGS empty by default).
RUN set -eux; \
    jobs=$(nproc); \
    cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release $CMAKE_ARGS; \
    cmake --build build -j "$jobs"; \
    if [ "$RUN_TESTS" = "1" ]; then ctest --test-dir build --output-on-failure -j "$jobs"; fi

# The GPU image must have the GPU backend, the CPU image must not.
RUN set -eux; \
    want=ON; [ "$CPU_ONLY" = "1" ] && want=OFF; \
    grep -qx "SPGEMM_WITH_CUDA:BOOL=$want" build/CMakeCache.txt

# Stage what the runtime image gets: the binaries in /opt/spgemm/bin and the
# shared libraries they need beyond the runtime base in /opt/spgemm/lib (their
# RPATH is $ORIGIN/../lib). The CUDA runtime image holds the toolkit's own
# libraries (/usr/local/cuda*), the host driver brings libcuda.
RUN set -eux; \
    mkdir -p /opt/spgemm/bin /opt/spgemm/lib; \
    cp build/server/spgemmd build/client/spgemm build/bench/spgemm-bench \
       build/tests/deploy/spgemmd-health-probe /opt/spgemm/bin/; \
    strip --strip-unneeded /opt/spgemm/bin/*; \
    bash deploy/docker/gather-libs.sh --provided /usr/local/cuda /opt/spgemm/lib /opt/spgemm/bin/*; \
    /opt/spgemm/bin/spgemmd --help >/dev/null

# ---- runtime stage bases ----------------------------------------------------
FROM nvidia/cuda:${CUDA_VERSION}-runtime-${CUDA_OS} AS runtime-base-0
FROM debian:12-slim AS runtime-base-1

# ---- runtime ------------------------------------------------------------------
FROM runtime-base-${CPU_ONLY} AS runtime
LABEL org.opencontainers.image.title="spgemmd" \
      org.opencontainers.image.description="GPU sparse matrix-matrix multiplication over gRPC (spgemm.v1)"

COPY --from=build /opt/spgemm /opt/spgemm

# A non-root user with a fixed id (Kubernetes' runAsNonRoot checks the number).
RUN groupadd --system --gid 10001 spgemm \
 && useradd --system --uid 10001 --gid 10001 --home-dir /var/lib/spgemm --create-home \
            --shell /usr/sbin/nologin spgemm \
 && /opt/spgemm/bin/spgemmd --help >/dev/null

# Settings come from SPGEMMD_* variables (a command-line flag wins). Listed
# here so `docker inspect` shows them; the addresses are the container's own
# (spgemmd's defaults are loopback), so TLS and tokens are needed to start.
ENV PATH=/opt/spgemm/bin:${PATH} \
    NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility \
    SPGEMMD_LISTEN=0.0.0.0:50051 \
    SPGEMMD_METRICS_LISTEN=0.0.0.0:9464 \
    SPGEMMD_BACKEND=auto \
    SPGEMMD_LOG_FORMAT=json \
    SPGEMMD_GRACE_SECONDS=20

USER 10001:10001
WORKDIR /var/lib/spgemm
# 50051: gRPC (spgemm.v1, grpc.health.v1, reflection); 9464: Prometheus GET /metrics.
EXPOSE 50051 9464
# spgemmd drains on SIGTERM for SPGEMMD_GRACE_SECONDS: stop with `docker stop -t 30`.
STOPSIGNAL SIGTERM
# grpc.health.v1.Health/Check on the address SPGEMMD_LISTEN names (wildcard host -> loopback),
# over TLS where SPGEMMD_TLS_CERT is set.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["/opt/spgemm/bin/spgemmd-health-probe", "--timeout=4"]
ENTRYPOINT ["/opt/spgemm/bin/spgemmd"]
