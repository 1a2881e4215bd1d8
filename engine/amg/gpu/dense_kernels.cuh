// The coarsest level's kernels (dense.cu): its matrix made dense, inverted in
// place by blocked Gauss-Jordan elimination without pivoting (symmetric
// positive definite), then applied as a dense matrix-vector product per
// cycle. A block step takes `pivot_block` pivots at once in two launches (a
// launch per pivot cost more than its work: 2.6 ms for 501 rows): the first
// inverts the pivots' diagonal block D in a warp's registers (every block
// redundantly, so no launch waits for another) and writes the row panel
// R = D^-1 M_K* (D^-1 itself in the pivots' columns) and a copy of the column
// panel M_*K; the second updates every entry from them, tiled in shared
// memory. n^3 multiply-adds in all (n at most max_coarse: about 10^9 for 1000
// rows), 2 n / pivot_block launches, each started while the one before it
// finishes (cuda/dependent_launch.cuh), n^2 per solve.
#pragma once

#include <cstdint>

#include "cuda/dependent_launch.cuh"
#include "spgemm/csr.hpp"

namespace spgemm::amg::gpu::kernels {

inline constexpr int dense_threads = 256;

// A warp a row: the lanes take the row's entries.
__global__ void __launch_bounds__(dense_threads)
    densify_kernel(std::int64_t n, const offset_t* __restrict__ off, const index_t* __restrict__ col,
                   const double* __restrict__ val, double* __restrict__ m) {
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / 32);
  const int lane = static_cast<int>(threadIdx.x & 31u);
  for (std::int64_t i = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / 32; i < n; i += warps) {
    for (offset_t k = off[i] + lane; k < off[i + 1]; k += 32) m[i * n + col[k]] = val[k];
  }
}

inline constexpr int pivot_block = 32;
inline constexpr int tile_rows = 8;  // threads per tile column: a thread updates pivot_block / tile_rows entries

// D^-1 in place, D the pivots' diagonal block (kb x kb of `d`), by the first
// warp: lane c holds column c in registers and takes pivot p's row and
// column entries by shuffles, the operations of one elimination step each
// (a pivot in registers, no barrier between pivots). False at a zero pivot.
__device__ __forceinline__ bool invert_pivot_block(double (&d)[pivot_block][pivot_block + 1], int kb) {
  const int lane = static_cast<int>(threadIdx.x);
  double c[pivot_block];
#pragma unroll
  for (int r = 0; r < pivot_block; ++r) c[r] = r < kb && lane < kb ? d[r][lane] : 0.0;
#pragma unroll
  for (int p = 0; p < pivot_block; ++p) {
    if (p >= kb) break;
    const double pivot = __shfl_sync(0xffffffffu, c[p], p);
    if (pivot == 0) return false;
    const double scaled = (lane == p ? 1.0 : c[p]) / pivot;  // row p of the step's result
#pragma unroll
    for (int r = 0; r < pivot_block; ++r) {
      const double factor = __shfl_sync(0xffffffffu, c[r], p);  // d[r][p]
      c[r] = r == p ? scaled : (lane == p ? 0.0 : c[r]) - factor * scaled;
    }
  }
#pragma unroll
  for (int r = 0; r < pivot_block; ++r)
    if (r < kb && lane < kb) d[r][lane] = c[r];
  return true;
}

// Columns [K, K + kb) are the pivots. Block x: D^-1 in shared memory, then R's
// columns and the column panel's rows [32x, 32x + 32). A zero pivot is flagged
// (every block sees the same D and stops).
__global__ void __launch_bounds__(pivot_block* tile_rows)
    pivot_panels_kernel(std::int64_t n, std::int64_t first, int kb, const double* __restrict__ m,
                        double* __restrict__ row_panel, double* __restrict__ column_panel, int* __restrict__ singular) {
  __shared__ double d[pivot_block][pivot_block + 1];
  __shared__ double pivot_rows[pivot_block][pivot_block + 1];  // M_K* in the block's columns
  __shared__ bool invertible;
  cuda::wait_for_previous_grid();
  cuda::release_next_grid();
  const int tx = static_cast<int>(threadIdx.x) % pivot_block, ty = static_cast<int>(threadIdx.x) / pivot_block;
  const std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * pivot_block;
  const std::int64_t j = base + tx;
  // Every load issued before any is used: the row panel's sums below then
  // read shared memory instead of waiting on the device's memory term by term.
  for (int r = ty; r < kb; r += tile_rows) {
    if (tx < kb) d[r][tx] = m[(first + r) * n + first + tx];
    if (j < n) pivot_rows[r][tx] = m[(first + r) * n + j];
  }
  __syncthreads();
  if (ty == 0) {
    const bool ok = invert_pivot_block(d, kb);
    if (tx == 0) invertible = ok;
  }
  __syncthreads();
  if (!invertible) {
    if (blockIdx.x == 0 && threadIdx.x == 0) *singular = 1;
    return;
  }
  for (int t = ty; t < kb; t += tile_rows) {
    if (j >= n) break;
    double v;
    if (j >= first && j < first + kb) {
      v = d[t][j - first];
    } else {
      v = 0;
      for (int s = 0; s < kb; ++s) v += d[t][s] * pivot_rows[s][tx];
    }
    row_panel[t * n + j] = v;
  }
  for (std::int64_t i = base + ty; i < base + pivot_block && i < n; i += tile_rows)
    if (tx < kb) column_panel[i * pivot_block + tx] = m[i * n + first + tx];
}

// Every entry from the panels: the pivot rows become R, the others less their
// column panel times R (their pivot columns start from 0). Tiles of 32 x 32.
__global__ void __launch_bounds__(pivot_block* tile_rows)
    pivot_update_kernel(std::int64_t n, std::int64_t first, int kb, double* __restrict__ m,
                        const double* __restrict__ row_panel, const double* __restrict__ column_panel) {
  __shared__ double r_tile[pivot_block][pivot_block + 1];
  __shared__ double c_tile[pivot_block][pivot_block + 1];
  cuda::wait_for_previous_grid();
  cuda::release_next_grid();
  const int tx = static_cast<int>(threadIdx.x) % pivot_block, ty = static_cast<int>(threadIdx.x) / pivot_block;
  const std::int64_t i0 = static_cast<std::int64_t>(blockIdx.y) * pivot_block;
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * pivot_block + tx;
  for (int t = ty; t < kb; t += tile_rows) r_tile[t][tx] = j < n ? row_panel[t * n + j] : 0.0;
  for (int r = ty; r < pivot_block; r += tile_rows)
    c_tile[r][tx] = i0 + r < n && tx < kb ? column_panel[(i0 + r) * pivot_block + tx] : 0.0;
  __syncthreads();
  if (j >= n) return;
  const bool pivot_column = j >= first && j < first + kb;
  for (int r = ty; r < pivot_block; r += tile_rows) {
    const std::int64_t i = i0 + r;
    if (i >= n) break;
    if (i >= first && i < first + kb) {
      m[i * n + j] = r_tile[i - first][tx];
      continue;
    }
    double v = pivot_column ? 0.0 : m[i * n + j];
    for (int t = 0; t < kb; ++t) v -= c_tile[r][t] * r_tile[t][tx];
    m[i * n + j] = v;
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
