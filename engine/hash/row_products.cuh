// The products of a row of A, enumerated by a group of threads (one warp or
// a whole block) for the hash method's kernels (hash_kernels.cuh): the
// group, the stage of A's entries, which part of each row of B a group or
// warp takes (whole rows, the job's column ranges, a cut of the row's own
// span), and for_each_product_chunk, which hands them out K per thread per
// round in product order.
#pragma once

#include <cstdint>

#include "cuda/warp_primitives.cuh"
#include "semiring/semiring_ops.hpp"
#include "spgemm/csr.hpp"

namespace spgemm::hash::kernels {

using cuda::block_inclusive_scan;
using cuda::full_mask;
using cuda::warp_inclusive_scan;
using cuda::warp_sum;

// A group of threads working on one row: one warp, or the whole block.
template <bool Warp>
struct group {
  __device__ static int rank() { return Warp ? static_cast<int>(threadIdx.x & 31) : static_cast<int>(threadIdx.x); }
  __device__ static int size() { return Warp ? 32 : static_cast<int>(blockDim.x); }
  __device__ static void sync() {
    if constexpr (Warp) {
      __syncwarp();
    } else {
      __syncthreads();
    }
  }
  __device__ static long long inclusive_scan(long long v, long long& total) {
    if constexpr (Warp) {
      v = warp_inclusive_scan(v);
      total = __shfl_sync(full_mask, v, 31);
      return v;
    } else {
      return block_inclusive_scan(v, total);
    }
  }
  __device__ static long long sum(long long v) {
    if constexpr (Warp) {
      return warp_sum(v);
    } else {
      long long total = 0;
      (void)block_inclusive_scan(v, total);
      return total;
    }
  }
};

// Stage of up to G entries of A: begin of the B row, inclusive prefix of the
// B-row lengths, and A's value (numeric).
template <typename T>
struct stage {
  offset_t* b_begin;
  long long* incl;
  T* a_val;  // nullptr in the symbolic pass
  T* scratch;

  // The 32 entries of warp `w` (a block's stage holds one slice per warp).
  __device__ stage warp_slice(int w) const {
    const int at = 32 * w;
    return stage{b_begin + at, incl + at, a_val != nullptr ? a_val + at : nullptr, scratch + at};
  }
};

// Which products of A's entry k a group enumerates: the whole row k of B
// (warp rows; block rows when column ranges do not pay, pos == nullptr) ...
struct whole_rows {
  __device__ void operator()(const offset_t* __restrict__ b_off, index_t k, offset_t& begin, long long& len) const {
    begin = b_off[k];
    len = b_off[k + 1] - begin;
  }
};

// ... or the part of row k of B with columns in the ranges [lo, hi) of a cut
// of B's columns into stride - 1 ranges (pos holds, per row of B, where each
// range starts within the row: range_positions_kernel). Two cuts: the fine
// column ranges of the block tables (column_ranges per job, balanced by B's
// columns: the warps of a block take disjoint ranges, so no two warps ever add
// to the same entry of C and each commits its products in order, with no
// barrier), and the segments of the job's width (planner::segment_width_for).
constexpr int column_ranges = 32;
struct column_range {
  const int* pos;
  int stride;
  int lo;
  int hi;
  __device__ void operator()(const offset_t* __restrict__ b_off, index_t k, offset_t& begin, long long& len) const {
    const int* p = pos + static_cast<std::int64_t>(k) * stride;
    const int first = p[lo];
    begin = b_off[k] + first;
    len = p[hi] - first;
  }
};

// The column ranges of warp w of a block of `warps` warps.
__device__ __forceinline__ column_range warp_column_range(const int* pos, int w, int warps) {
  const int per = column_ranges / warps;
  return column_range{pos, column_ranges + 1, w * per, (w + 1) * per};
}

// ... or the part of row k of B with columns in [lo, hi): a warp's share of
// a row whose products span few of B's columns (row_column_span), found by
// binary search in the row of B.
__device__ __forceinline__ offset_t lower_bound_column(const index_t* __restrict__ b_col, offset_t lo, offset_t hi,
                                                       index_t col) {
  if (lo == hi || b_col[lo] >= col) return lo;
  if (b_col[hi - 1] < col) return hi;
  while (lo < hi) {
    const offset_t mid = lo + (hi - lo) / 2;
    if (b_col[mid] < col) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}
struct column_window {
  const index_t* __restrict__ b_col;
  index_t lo;
  index_t hi;
  __device__ void operator()(const offset_t* __restrict__ b_off, index_t k, offset_t& begin, long long& len) const {
    const offset_t b1 = b_off[k + 1];
    begin = lower_bound_column(b_col, b_off[k], b1, lo);
    len = lower_bound_column(b_col, begin, b1, hi) - begin;
  }
};

// How the warps of a block table split a row's products between them:
// B's column ranges (pos: range_positions_kernel; nullptr: they enumerate
// the row together and commit in turns), or, for a row whose products span
// few of B's b_cols columns (planner::split_by_row_span), an even cut of the
// row's own span.
struct block_split {
  const int* pos = nullptr;
  std::int64_t b_cols = 0;
};

// The least `lo` and the greatest `hi` over the group, on every thread;
// block groups pass 64 ints of shared `scratch`.
template <bool Warp>
__device__ __forceinline__ void group_min_max(int& lo, int& hi, int* scratch) {
  lo = __reduce_min_sync(full_mask, lo);
  hi = __reduce_max_sync(full_mask, hi);
  if constexpr (!Warp) {
    const int warp = static_cast<int>(threadIdx.x >> 5);
    if ((threadIdx.x & 31) == 0) {
      scratch[warp] = lo;
      scratch[32 + warp] = hi;
    }
    __syncthreads();
    for (int w = 0; w < static_cast<int>(blockDim.x >> 5); ++w) {
      lo = min(lo, scratch[w]);
      hi = max(hi, scratch[32 + w]);
    }
    __syncthreads();  // scratch is free again
  }
}

// The columns row `row`'s products span, [lo, hi] (lo > hi: none), from the
// first and last column of each row of B it selects; the whole block calls
// it, `scratch` holds 64 ints.
__device__ __forceinline__ void row_column_span(std::int64_t row, const offset_t* __restrict__ a_off,
                                                const index_t* __restrict__ a_col, const offset_t* __restrict__ b_off,
                                                const index_t* __restrict__ b_col, int* scratch, index_t& lo,
                                                index_t& hi) {
  int least = 0x7fffffff;
  int most = -1;
  for (offset_t e = a_off[row] + threadIdx.x; e < a_off[row + 1]; e += blockDim.x) {
    const index_t k = a_col[e];
    const offset_t b0 = b_off[k];
    const offset_t b1 = b_off[k + 1];
    if (b1 > b0) {
      least = min(least, b_col[b0]);
      most = max(most, b_col[b1 - 1]);
    }
  }
  group_min_max<false>(least, most, scratch);
  lo = least;
  hi = most;
}

// Enumerates the products of row `row` (the part of each row of B that
// `part` selects) in row order, K * G at a time (G =
// threads of the group): in each round, warp w of the group takes the K * 32
// consecutive products from q0 + w * 32 * K, lane l the products
// base + k * 32 + l (k = 0 .. K-1; several loads in flight per thread). Calls
// visit(valid[K], col[K], p[K], entry[K]) on every thread of the group for
// each round (uniformly: products past the end get valid = false); entry[k]
// is the product's entry of A, counted from the row's first. Numeric
// products are ring.mul(a, b).
template <bool Warp, bool Numeric, int K, typename T, typename Part, typename Visit, typename S = ops::plus_times_ops>
__device__ __forceinline__ void for_each_product_chunk(std::int64_t row, const offset_t* __restrict__ a_off,
                                                       const index_t* __restrict__ a_col,
                                                       const T* __restrict__ a_val,
                                                       const offset_t* __restrict__ b_off,
                                                       const index_t* __restrict__ b_col,
                                                       const T* __restrict__ b_val, stage<T> st, const Part& part,
                                                       Visit&& visit, S ring = {}) {
  using grp = group<Warp>;
  const int rank = grp::rank();
  const int g = grp::size();
  const int lane = static_cast<int>(threadIdx.x & 31);
  const long long first = (Warp ? 0LL : static_cast<long long>(threadIdx.x >> 5) * 32 * K) + lane;
  const offset_t a0 = a_off[row];
  const offset_t a1 = a_off[row + 1];
  for (offset_t e0 = a0; e0 < a1; e0 += g) {
    const int n = static_cast<int>(a1 - e0 < g ? a1 - e0 : g);
    long long len = 0;
    offset_t begin = 0;
    T av = T(0);
    if (rank < n) {
      part(b_off, a_col[e0 + rank], begin, len);
      if constexpr (Numeric) av = a_val[e0 + rank];
    }
    long long total = 0;
    const long long incl = grp::inclusive_scan(len, total);
    grp::sync();  // the previous stage is consumed
    if (rank < n) {
      st.b_begin[rank] = begin;
      st.incl[rank] = incl;
      if constexpr (Numeric) st.a_val[rank] = av;
    }
    grp::sync();
    // The entry of a thread's product: the first i with incl[i] > q. A
    // thread's products only move forward, 32 at a time: where the entries
    // average 32 products or more (steady), the entry of its previous product
    // or the next mostly holds it, else a binary search finds it.
    const bool steady = total >= 32LL * n;
    int lo = 0;
    for (long long q0 = 0; q0 < total; q0 += static_cast<long long>(g) * K) {
      bool valid[K];
      index_t col[K];
      T p[K];
      int entry[K];
#pragma unroll
      for (int k = 0; k < K; ++k) {
        const long long q = q0 + first + k * 32;
        valid[k] = q < total;
        col[k] = 0;
        p[k] = T(0);
        entry[k] = 0;
        if (valid[k]) {
          if (!steady) lo = 0;
          if (!steady || (st.incl[lo] <= q && st.incl[++lo] <= q)) {
            int hi = n - 1;
            if (steady) ++lo;
            while (lo < hi) {
              const int mid = (lo + hi) >> 1;
              if (st.incl[mid] > q) {
                hi = mid;
              } else {
                lo = mid + 1;
              }
            }
          }
          const long long before = lo > 0 ? st.incl[lo - 1] : 0;
          const offset_t j = st.b_begin[lo] + (q - before);
          col[k] = b_col[j];
          if constexpr (Numeric) p[k] = ring.mul(st.a_val[lo], b_val[j]);
          entry[k] = static_cast<int>(e0 - a0) + lo;
        }
      }
      visit(valid, col, p, entry);
    }
  }
}

// Products per thread per round (for_each_product_chunk's K), several loads
// in flight per thread: rows of one warp take two; rows of a block take four
// (on column ranges, or four times fewer turns of the ordered commit).
constexpr int symbolic_batch = 2;
constexpr int warp_numeric_batch = 2;
constexpr int ranged_numeric_batch = 4;

}  // namespace spgemm::hash::kernels
