// Masked dot product kernels (included by dot.cu only).
//
// Method: one thread per entry (i, j) of the mask M: its row i by binary
// search in M's offsets, then C(i,j) = sum over k of A(i,k) B(k,j) the
// cheaper of two ways, by the lengths at hand:
//  * by columns: A's row i against B^T's row j (B's column j), both sorted,
//    every index of the shorter list searched in what is left of the longer
//    one: min(|A_i|, |B_:j|) log max(...);
//  * by rows: for every k of A's row i, j searched in B's row k:
//    |A_i| log (mean row of B). Where B's column j is long (a hub of a
//    power-law graph whose rows of B are short, as in triangle counting
//    L<L> = L L with hubs of low index) this is the cheaper.
// Either way the matches come in increasing k, so the products are summed in
// the order of A's entries.
// Then the found entries are compacted into C (cuda/compact_entries.hpp).
// Workspace: none (the host's buffers). Complexity: per entry of M,
// log rows(M) + min(|A_i|, |B_j|) log max(|A_i|, |B_j|).
#pragma once

#include <cstdint>

#include "cuda/row_of_entry.cuh"
#include "method/mask_view.cuh"
#include "semiring/semiring_ops.hpp"
#include "spgemm/csr.hpp"

namespace spgemm::dot::kernels {

constexpr int block_threads = 256;

__device__ __forceinline__ std::int64_t global_thread() {
  return blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
}

// Binary digits of x > 0 (for the lengths' logarithms).
__device__ __forceinline__ int bits(offset_t x) { return 64 - __clzll(static_cast<unsigned long long>(x)); }

// The first position in [lo, hi) whose index is >= k (hi if none).
__device__ __forceinline__ offset_t lower_bound(const index_t* __restrict__ cols, offset_t lo, offset_t hi, index_t k) {
  while (lo < hi) {
    const offset_t mid = lo + ((hi - lo) >> 1);
    if (cols[mid] < k) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// Per entry e of M: vals[e] = A(i,:) (+).(x) B(:,j) and found[e] = 1 where
// at least one product exists (and M counts the entry), else found[e] = 0;
// found[nnz(M)] = 0 for the scan. row_steps: 1 + the binary digits of B's
// mean row length (the cost of a search in one of B's rows).
template <typename T, typename S>
__global__ void __launch_bounds__(block_threads)
    dot_kernel(method::mask_view<T> mask, std::int64_t mask_rows, std::int64_t mask_nnz,
               const offset_t* __restrict__ a_off, const index_t* __restrict__ a_col, const T* __restrict__ a_val,
               const offset_t* __restrict__ b_off, const index_t* __restrict__ b_col, const T* __restrict__ b_val,
               const offset_t* __restrict__ bt_off, const index_t* __restrict__ bt_col, const T* __restrict__ bt_val,
               int row_steps, S ring, T* __restrict__ vals, offset_t* __restrict__ found) {
  const std::int64_t e = global_thread();
  if (e == mask_nnz) found[e] = 0;
  if (e >= mask_nnz) return;
  if (mask.values != nullptr && mask.values[e] == T(0)) {
    found[e] = 0;
    return;
  }
  const std::int64_t i = cuda::row_of_entry(mask.offsets, mask_rows, e);
  const index_t j = mask.cols[e];
  offset_t a = a_off[i];
  const offset_t a_end = a_off[i + 1];
  offset_t b = bt_off[j];
  const offset_t b_end = bt_off[j + 1];
  bool any = false;
  T acc = T(0);
  const auto add = [&](T p) {
    acc = any ? ring.add(acc, p) : p;
    any = true;
  };
  const offset_t la = a_end - a;
  const offset_t lb = b_end - b;
  const offset_t shorter = la < lb ? la : lb;
  const offset_t longer = la < lb ? lb : la;
  if (la > 0 && lb > 0 && la * row_steps < shorter * (1 + bits(longer))) {
    for (; a < a_end; ++a) {
      const index_t k = a_col[a];
      const offset_t row_end = b_off[k + 1];
      const offset_t at = lower_bound(b_col, b_off[k], row_end, j);
      if (at < row_end && b_col[at] == j) add(ring.mul(a_val[a], b_val[at]));
    }
  } else if (la <= lb) {
    for (; a < a_end && b < b_end; ++a) {
      b = lower_bound(bt_col, b, b_end, a_col[a]);
      if (b < b_end && bt_col[b] == a_col[a]) add(ring.mul(a_val[a], bt_val[b++]));
    }
  } else {
    for (; b < b_end && a < a_end; ++b) {
      a = lower_bound(a_col, a, a_end, bt_col[b]);
      if (a < a_end && a_col[a] == bt_col[b]) add(ring.mul(a_val[a++], bt_val[b]));
    }
  }
  vals[e] = acc;
  found[e] = any ? 1 : 0;
}

}  // namespace spgemm::dot::kernels
