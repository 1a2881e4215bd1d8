// The coarsest level's kernels (dense.cu): its matrix made dense, inverted by
// Gauss-Jordan elimination without pivoting (symmetric positive definite), a
// pivot step per launch from one buffer into the other (each step reads only
// its input: no pass over a saved column, no second launch), then applied as a
// dense matrix-vector product per cycle. n^3 multiply-adds for the inverse (n
// at most max_coarse: about 10^9 for 1000 rows), n^2 per solve.
#pragma once

#include <cstdint>

#include "spgemm/csr.hpp"

namespace spgemm::amg::gpu::kernels {

inline constexpr int dense_threads = 256;

__global__ void __launch_bounds__(dense_threads)
    densify_kernel(std::int64_t n, const offset_t* __restrict__ off, const index_t* __restrict__ col,
                   const double* __restrict__ val, double* __restrict__ m) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    for (offset_t k = off[i]; k < off[i + 1]; ++k) m[i * n + col[k]] = val[k];
  }
}

// Pivot k of Gauss-Jordan, from `in` into `out` (two buffers: every entry
// reads only `in`): row k divided by the pivot, its diagonal becoming
// 1 / pivot; every other row i less in_ik / pivot times row k, its entry k
// becoming -in_ik / pivot. A zero pivot is flagged.
__global__ void __launch_bounds__(dense_threads)
    pivot_kernel(std::int64_t n, std::int64_t k, const double* __restrict__ in, double* __restrict__ out,
                 int* __restrict__ singular) {
  const double pivot = in[k * n + k];
  if (pivot == 0) {
    if (blockIdx.x == 0 && threadIdx.x == 0) *singular = 1;
    return;
  }
  const std::int64_t total = n * n;
  for (std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t i = e / n, j = e % n;
    const double row_k = j == k ? 1.0 : in[k * n + j];
    if (i == k) {
      out[e] = row_k / pivot;
    } else {
      out[e] = (j == k ? 0.0 : in[e]) - in[i * n + k] * (row_k / pivot);
    }
  }
}

// y = M x, a warp per row.
__global__ void __launch_bounds__(dense_threads)
    dense_multiply_kernel(std::int64_t n, const double* __restrict__ m, const double* __restrict__ x,
                          double* __restrict__ y) {
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / 32);
  const unsigned lane = threadIdx.x & 31u;
  for (std::int64_t i = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / 32; i < n; i += warps) {
    double sum = 0;
    for (std::int64_t j = lane; j < n; j += 32) sum += m[i * n + j] * x[j];
    for (int width = 16; width > 0; width /= 2) sum += __shfl_down_sync(0xffffffffu, sum, width);
    if (lane == 0) y[i] = sum;
  }
}

}  // namespace spgemm::amg::gpu::kernels
