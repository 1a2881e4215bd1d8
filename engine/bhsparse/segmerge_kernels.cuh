// bhSPARSE's long rows by segmented merge (included by bhsparse.cu only):
// Ji, Lu, Hou, Wang, Liu & Vinter, "Segmented merge: a new primitive for
// parallel sparse matrix computations" (NPC 2020), section 4.3: the rows of
// bhSPARSE's last bin (more than 512 products) "by first saving the scaled
// rows from B (as sub-segments) onto global memory and then merging the
// sub-segments belonging to the same row of C (as a segment)"; all the long
// rows of a slice in one segmented-merge computation.
// Per slice of long rows (at most S products; bhsparse.cu):
//  (1) sub-segment lengths: the length of the row of B each entry of A
//      selects, a warp per row (segment); an exclusive scan gives their
//      starts;
//  (2) expansion: every product (column, a_ik * b_kj) at its place, the
//      scaled rows of B one after another in A's order;
//  (3) the segmented merge (cuda/segmented_merge.cuh): each row one sorted
//      run, equal columns in A's order (the merge is stable);
//  (4) compression: run heads (a column's first item in its row), their
//      inclusive scan, each run summed in order by its head into the row's
//      place in the long rows' results, the row's nnz into C's offsets.
// A row of more than S products runs alone in chunks of its entries: the
// result so far is the chunk's first sub-segment (the carry), so every entry
// of C is still the sum of its products in A's order: the long rows equal the
// CPU reference bit for bit.
// Complexity: per slice, its products times ceil(log2(most entries of a row
// in it)) merge passes, plus the expansion and the compression.
#pragma once

#include <cstdint>

#include "bhsparse/bhsparse_kernels.cuh"
#include "cuda/merge_path.hpp"
#include "spgemm/csr.hpp"

namespace spgemm::bhsparse::kernels {

// What the host reads of every long row: its products and its entries of A.
__global__ void long_shape_kernel(const int* __restrict__ rows, std::int64_t n, const offset_t* __restrict__ a_off,
                                  const offset_t* __restrict__ c_len, std::int64_t* __restrict__ products,
                                  std::int64_t* __restrict__ entries) {
  const std::int64_t i = global_thread();
  if (i >= n) return;
  const int row = rows[i];
  products[i] = c_len[row];
  entries[i] = a_off[row + 1] - a_off[row];
}

// A slice: its segments (rows), their sub-segments, where each segment's
// first sub-segment's entry of A lies, and the carry of a chunked row.
struct slice_view {
  const int* rows = nullptr;               // the slice's rows (segments)
  const std::int64_t* res_at = nullptr;    // each one's place in the results
  std::int64_t segments = 0;
  const std::int64_t* seg = nullptr;       // segments + 1: first sub-segment of each
  // A chunk of one row (one segment): sub-segment 0 is the result so far
  // (`carry` items, maybe none), sub-segment 1 + t the entry entry_base + t of A.
  bool chunked = false;
  std::int64_t carry = 0;
  std::int64_t entry_base = 0;

  // The entry of A of sub-segment `first` of segment s.
  __device__ offset_t first_entry(const offset_t* a_off, std::int64_t s) const {
    return chunked ? entry_base - 1 : a_off[rows[s]];
  }
};

// (1) per sub-segment its length (sub, an exclusive scan follows; sub[q] =
// 0) and its segment; a warp per segment.
__global__ void sub_lengths_kernel(slice_view v, const offset_t* __restrict__ a_off, const index_t* __restrict__ a_col,
                                   const offset_t* __restrict__ b_off, std::int64_t* __restrict__ sub,
                                   int* __restrict__ seg_of) {
  const std::int64_t s = global_thread() >> 5;
  const int lane = static_cast<int>(threadIdx.x & 31);
  if (s >= v.segments) return;
  const std::int64_t first = v.seg[s];
  const std::int64_t count = v.seg[s + 1] - first;
  const offset_t e0 = v.first_entry(a_off, s);
  for (std::int64_t t = lane; t < count; t += 32) {
    if (v.chunked && t == 0) {
      sub[first] = v.carry;
    } else {
      const index_t k = a_col[e0 + t];
      sub[first + t] = b_off[k + 1] - b_off[k];
    }
    seg_of[first + t] = static_cast<int>(s);
  }
  if (s == v.segments - 1 && lane == 0) {
    sub[v.seg[v.segments]] = 0;
    seg_of[v.seg[v.segments]] = static_cast<int>(s);
  }
}

// Where each segment's items start (seg_pos[segments] = the items).
__global__ void segment_positions_kernel(slice_view v, const std::int64_t* __restrict__ sub,
                                         std::int64_t* __restrict__ seg_pos) {
  const std::int64_t s = global_thread();
  if (s <= v.segments) seg_pos[s] = sub[v.seg[s]];
}

// (2) every product at its place; items of the carry copied first.
template <typename T>
__global__ void expand_kernel(slice_view v, std::int64_t items, const std::int64_t* __restrict__ sub, std::int64_t q,
                              const int* __restrict__ seg_of, const offset_t* __restrict__ a_off,
                              const index_t* __restrict__ a_col, const T* __restrict__ a_val,
                              const offset_t* __restrict__ b_off, const index_t* __restrict__ b_col,
                              const T* __restrict__ b_val, const index_t* __restrict__ carry_cols,
                              const T* __restrict__ carry_vals, index_t* __restrict__ keys, T* __restrict__ vals) {
  const std::int64_t p = global_thread();
  if (p >= items) return;
  if (p < v.carry) {
    keys[p] = carry_cols[p];
    vals[p] = carry_vals[p];
    return;
  }
  const std::int64_t j = cuda::last_start_at_most(sub, q, p);
  const int s = seg_of[j];
  const offset_t e = v.first_entry(a_off, s) + (j - v.seg[s]);
  const index_t k = a_col[e];
  const offset_t at = b_off[k] + (p - sub[j]);
  keys[p] = b_col[at];
  vals[p] = a_val[e] * b_val[at];
}

// (4) run heads: 1 where an item starts its segment or differs from the one before.
__global__ void heads_kernel(std::int64_t items, std::int64_t segments, const std::int64_t* __restrict__ seg_pos,
                             const index_t* __restrict__ keys, int* __restrict__ heads) {
  const std::int64_t p = global_thread();
  if (p >= items) return;
  const std::int64_t s = cuda::last_start_at_most(seg_pos, segments, p);
  heads[p] = p == seg_pos[s] || keys[p] != keys[p - 1] ? 1 : 0;
}

// (4) each run summed in order by its head into the results (runs: the
// inclusive scan of the heads).
template <typename T>
__global__ void compress_kernel(slice_view v, std::int64_t items, const std::int64_t* __restrict__ seg_pos,
                                const index_t* __restrict__ keys, const T* __restrict__ vals,
                                const int* __restrict__ runs, index_t* __restrict__ res_cols, T* __restrict__ res_vals) {
  const std::int64_t p = global_thread();
  if (p >= items) return;
  const std::int64_t s = cuda::last_start_at_most(seg_pos, v.segments, p);
  const std::int64_t begin = seg_pos[s];
  const std::int64_t end = seg_pos[s + 1];
  if (p != begin && keys[p] == keys[p - 1]) return;  // not a head
  T sum = vals[p];
  for (std::int64_t x = p + 1; x < end && keys[x] == keys[p]; ++x) sum += vals[x];
  const std::int64_t at = v.res_at[s] + (runs[p] - runs[begin]);
  res_cols[at] = keys[p];
  res_vals[at] = sum;
}

// (4) each row's nnz into C's offsets.
__global__ void segment_nnz_kernel(slice_view v, const std::int64_t* __restrict__ seg_pos, const int* __restrict__ runs,
                                   offset_t* __restrict__ c_len) {
  const std::int64_t s = global_thread();
  if (s >= v.segments) return;
  const std::int64_t begin = seg_pos[s];
  const std::int64_t end = seg_pos[s + 1];
  c_len[v.rows[s]] = end > begin ? runs[end - 1] - runs[begin] + 1 : 0;
}

// The long rows' state for stage (4): each row's result in the results.
template <typename T>
__global__ void segmerge_done_kernel(const int* __restrict__ rows, std::int64_t n, const std::int64_t* __restrict__ res_at,
                                     const offset_t* __restrict__ c_len, index_t* res_cols, T* res_vals,
                                     long_row<T>* __restrict__ state) {
  const std::int64_t i = global_thread();
  if (i >= n) return;
  long_row<T> s;
  s.row = rows[i];
  s.merged = static_cast<int>(c_len[s.row]);
  s.cols = res_cols + res_at[i];
  s.vals = res_vals + res_at[i];
  state[i] = s;
}

}  // namespace spgemm::bhsparse::kernels
