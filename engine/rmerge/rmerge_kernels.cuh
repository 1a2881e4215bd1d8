// RMerge kernels: MulLimited, the product C = G * B of a left factor G with at
// most W * R entries per row (Gremse et al. 2015, section 2.2, Listing 1;
// Becker et al. 2016, section 2.3 for R > 1 rows per thread).
//
// Method: one sub-warp of W threads computes one row of C. Entry e of the
// left row goes to lane e % W, cursor e / W; each cursor walks one row of B
// with a weight (the entry's value when G is explicit; 1 when G is implicit,
// i.e. row r of G merges the contiguous rows [off[r], off[r+1]) of B). Each
// step: sub-warp min of the cursors' front columns (__shfl_xor_sync, INT_MAX
// once exhausted), every thread sums weight * value over its cursors at that
// column and advances them, sub-warp sum by shuffle, lane 0 writes the entry.
// Output columns come out sorted and unique; the reduction order is fixed, so
// the results are bit-identical from run to run.
// Phases: the structure pass (Count = true) writes row lengths; the caller
// scans them into offsets and allocates C; the value pass fills C.
// Workspace: none (registers only; no shared memory).
// Complexity: per output entry O(R + log W) per thread; the whole pass reads
// every contributing row of B once and writes C once.
// Kernels only: the host dispatch lives in rmerge.cu and mul_limited_*.cu.
#pragma once

#include <cub/block/block_reduce.cuh>

#include <climits>
#include <cstdint>

#include "spgemm/csr.hpp"

namespace spgemm::rmerge {

// Lanes of the calling thread's sub-warp within its warp.
template <int W>
__device__ __forceinline__ unsigned subwarp_mask() {
  if constexpr (W == 32) {
    return 0xffffffffu;
  } else {
    const unsigned lane_in_warp = threadIdx.x & 31u;
    return ((1u << W) - 1u) << (lane_in_warp & ~static_cast<unsigned>(W - 1));
  }
}

template <int W, typename V>
__device__ __forceinline__ V subwarp_min(V v, unsigned mask) {
#pragma unroll
  for (int i = W / 2; i >= 1; i /= 2) {
    const V other = __shfl_xor_sync(mask, v, i, W);
    v = other < v ? other : v;
  }
  return v;
}

template <int W, typename V>
__device__ __forceinline__ V subwarp_sum(V v, unsigned mask) {
#pragma unroll
  for (int i = W / 2; i >= 1; i /= 2) v += __shfl_xor_sync(mask, v, i, W);
  return v;
}

// Count: write the length of row r of C to c_off[r] (c_col, c_val, left_val
// and b_val unused). Otherwise: write row r at c_off[r].
// row_ids: null, or the rows to compute (sub-warp i computes row row_ids[i] of
// G and C; `rows` counts the list): the hybrid plan runs one bin of rows of A.
template <int W, int R, bool Explicit, bool Count, typename T>
__global__ void __launch_bounds__(128) mul_limited_kernel(
    std::int64_t rows, const offset_t* __restrict__ left_off, const index_t* __restrict__ left_col,
    const T* __restrict__ left_val, const offset_t* __restrict__ b_off, const index_t* __restrict__ b_col,
    const T* __restrict__ b_val, offset_t* __restrict__ c_off, index_t* __restrict__ c_col,
    T* __restrict__ c_val, const int* __restrict__ row_ids) {
  static_assert(W == 2 || W == 4 || W == 8 || W == 16 || W == 32, "sub-warp size");
  static_assert(R == 1 || R == 2 || R == 4, "rows per thread");
  const std::int64_t item = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / W;
  if (item >= rows) return;  // uniform across the sub-warp
  const std::int64_t row = row_ids != nullptr ? static_cast<std::int64_t>(row_ids[item]) : item;
  const int lane = static_cast<int>(threadIdx.x % W);
  const unsigned mask = subwarp_mask<W>();

  const offset_t left_begin = left_off[row];
  const offset_t left_end = left_off[row + 1];
  offset_t pos[R];
  offset_t end[R];
  index_t front[R];
  T weight[R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const offset_t e = left_begin + lane + static_cast<offset_t>(r) * W;
    pos[r] = 0;
    end[r] = 0;
    weight[r] = T(1);
    if (e < left_end) {
      const offset_t b_row = Explicit ? static_cast<offset_t>(left_col[e]) : e;
      if constexpr (Explicit && !Count) weight[r] = left_val[e];
      pos[r] = b_off[b_row];
      end[r] = b_off[b_row + 1];
    }
    front[r] = pos[r] < end[r] ? b_col[pos[r]] : INT_MAX;
  }

  offset_t out = Count ? 0 : c_off[row];
  for (;;) {
    index_t m = front[0];
#pragma unroll
    for (int r = 1; r < R; ++r) m = front[r] < m ? front[r] : m;
    m = subwarp_min<W>(m, mask);
    if (m == INT_MAX) break;
    T sum = T(0);
#pragma unroll
    for (int r = 0; r < R; ++r) {
      if (front[r] == m) {
        if constexpr (!Count) {
          if constexpr (Explicit) {
            sum += weight[r] * b_val[pos[r]];
          } else {
            sum += b_val[pos[r]];
          }
        }
        ++pos[r];
        front[r] = pos[r] < end[r] ? b_col[pos[r]] : INT_MAX;
      }
    }
    if constexpr (!Count) {
      sum = subwarp_sum<W>(sum, mask);
      if (lane == 0) {
        c_col[out] = m;
        c_val[out] = sum;
      }
    }
    ++out;
  }
  if constexpr (Count) {
    if (lane == 0) c_off[row] = out;
  }
}

}  // namespace spgemm::rmerge
