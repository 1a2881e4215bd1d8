// The coarsest level's kernels (dense.cu): its matrix made dense, inverted in
// place by Gauss-Jordan elimination without pivoting (symmetric positive
// definite), a pivot step per two launches, then applied as a dense
// matrix-vector product per cycle. n^3 multiply-adds for the inverse (n at
// most max_coarse: about 10^9 for 1000 rows), n^2 per solve.
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

// Pivot k, one block: column k saved, row k divided by the pivot (its
// diagonal becoming 1 / pivot); a zero pivot is flagged.
__global__ void __launch_bounds__(dense_threads)
    pivot_row_kernel(std::int64_t n, std::int64_t k, double* __restrict__ m, double* __restrict__ column,
                     int* __restrict__ singular) {
  for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x) column[i] = m[i * n + k];
  __syncthreads();
  const double pivot = column[k];
  if (pivot == 0) {
    if (threadIdx.x == 0) *singular = 1;
    return;
  }
  for (std::int64_t j = threadIdx.x; j < n; j += blockDim.x) m[k * n + j] = j == k ? 1.0 / pivot : m[k * n + j] / pivot;
}

// Every other row i: m_ij -= column_i m_kj, and m_ik = -column_i m_kk.
__global__ void __launch_bounds__(dense_threads)
    eliminate_kernel(std::int64_t n, std::int64_t k, double* __restrict__ m, const double* __restrict__ column) {
  const std::int64_t total = n * n;
  for (std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t i = e / n, j = e % n;
    if (i == k) continue;
    m[e] = (j == k ? 0.0 : m[e]) - column[i] * m[k * n + j];
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
