// The vector kernels of a V-cycle and of CG (vectors.cu): axpby, the scaled
// axpby of the smoothers, a two-pass dot product, CSR SpMV with a group of
// lanes per row (the CSR-vector kernel of Bell & Garland, its group as wide
// as the mean row), and the inverse diagonal. Products and sums rounded one
// by one, as the CPU's loops; memory bound, one pass each.
#pragma once

#include <cub/block/block_reduce.cuh>

#include <cstdint>

#include "amg/independent_set_rule.hpp"
#include "spgemm/csr.hpp"

namespace spgemm::amg::gpu::kernels {

inline constexpr int threads = 256;
inline constexpr int dot_blocks = 1024;  // partial sums of a dot product, reduced by one block

__device__ __forceinline__ double combine(double a, double x, double b, double y) {
  const double ax = a == 0 ? 0.0 : __dmul_rn(a, x);
  return b == 0 ? ax : __dadd_rn(ax, __dmul_rn(b, y));
}

__global__ void __launch_bounds__(threads) hashed_kernel(std::int64_t n, double* __restrict__ out) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    out[i] = hashed_value(i);
  }
}

__global__ void __launch_bounds__(threads)
    axpby_kernel(std::int64_t n, double a, const double* __restrict__ x, double b, double* __restrict__ y) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    y[i] = combine(a, a == 0 ? 0.0 : x[i], b, b == 0 ? 0.0 : y[i]);
  }
}

// x and y may be one vector.
__global__ void __launch_bounds__(threads)
    scaled_axpby_kernel(std::int64_t n, double a, const double* __restrict__ d, const double* x, double b, double* y) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    y[i] = combine(a, a == 0 ? 0.0 : __dmul_rn(d[i], x[i]), b, b == 0 ? 0.0 : y[i]);
  }
}

// Partial sums, one per block (grid-stride: a fixed grid, so a fixed order).
__global__ void __launch_bounds__(threads)
    dot_partial_kernel(std::int64_t n, const double* __restrict__ x, const double* __restrict__ y,
                       double* __restrict__ partial) {
  using reduce = cub::BlockReduce<double, threads>;
  __shared__ typename reduce::TempStorage temp;
  double sum = 0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    sum = __dadd_rn(sum, __dmul_rn(x[i], y[i]));
  }
  sum = reduce(temp).Sum(sum);
  if (threadIdx.x == 0) partial[blockIdx.x] = sum;
}

__global__ void __launch_bounds__(threads) dot_final_kernel(int parts, double* __restrict__ partial) {
  using reduce = cub::BlockReduce<double, threads>;
  __shared__ typename reduce::TempStorage temp;
  double sum = 0;
  for (int i = static_cast<int>(threadIdx.x); i < parts; i += threads) sum += partial[i];
  sum = reduce(temp).Sum(sum);
  if (threadIdx.x == 0) partial[0] = sum;
}

// A group of G lanes per row: strided partial sums, then a shuffle
// reduction. Grid-stride over the rows (the grid is capped at 2^16 blocks:
// 2^19 rows at G = 32); a group leaves the loop as a whole.
template <int G>
__global__ void __launch_bounds__(threads)
    spmv_kernel(std::int64_t rows, const offset_t* __restrict__ off, const index_t* __restrict__ col,
                const double* __restrict__ val, const double* __restrict__ x, double alpha, double beta,
                double* __restrict__ y) {
  const std::int64_t groups = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / G);
  const int lane = static_cast<int>(threadIdx.x % G);
  const unsigned mask = G == 32 ? 0xffffffffu : ((1u << G) - 1u) << ((threadIdx.x & 31u) & ~static_cast<unsigned>(G - 1));
  for (std::int64_t row = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / G; row < rows;
       row += groups) {
    double sum = 0;
    for (offset_t k = off[row] + lane; k < off[row + 1]; k += G) sum = __dadd_rn(sum, __dmul_rn(val[k], x[col[k]]));
#pragma unroll
    for (int width = G / 2; width > 0; width /= 2) sum += __shfl_down_sync(mask, sum, width, G);
    if (lane == 0) y[row] = combine(alpha, sum, beta, beta == 0 ? 0.0 : y[row]);
  }
}

// A group of G lanes per row (as spmv_kernel: coalesced, where a thread per
// row read its row alone); the group's first lane writes 1 / a_ii to
// `inverse` and |a_ii|^-1/2 to `inverse_sqrt`, each where not null.
template <int G>
__global__ void __launch_bounds__(threads)
    inverse_diagonal_kernel(std::int64_t rows, const offset_t* __restrict__ off, const index_t* __restrict__ col,
                            const double* __restrict__ val, double* __restrict__ inverse,
                            double* __restrict__ inverse_sqrt, unsigned long long* __restrict__ first_bad) {
  const std::int64_t groups = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / G);
  const int lane = static_cast<int>(threadIdx.x % G);
  const unsigned mask = G == 32 ? 0xffffffffu : ((1u << G) - 1u) << ((threadIdx.x & 31u) & ~static_cast<unsigned>(G - 1));
  for (std::int64_t i = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / G; i < rows;
       i += groups) {
    double d = 0;
    for (offset_t k = off[i] + lane; k < off[i + 1]; k += G) {
      if (col[k] == i) d = val[k];
    }
#pragma unroll
    for (int width = G / 2; width > 0; width /= 2) {
      const double other = __shfl_down_sync(mask, d, width, G);
      d = d != 0 ? d : other;
    }
    if (lane == 0) {
      if (d == 0) atomicMin(first_bad, static_cast<unsigned long long>(i));
      if (inverse != nullptr) inverse[i] = 1.0 / d;
      if (inverse_sqrt != nullptr) inverse_sqrt[i] = 1.0 / sqrt(fabs(d));
    }
  }
}

}  // namespace spgemm::amg::gpu::kernels
