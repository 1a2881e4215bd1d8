// ESC SpGEMM kernels (included by esc.cu only).
//
// Method (Bell, Dalton & Olson 2012, section 3.3): expand the products of a
// slice of rows of A into (key, value) pairs, key = (row within the slice,
// column of C), sort them with CUB's radix sort (stable), compress runs of
// equal keys. The kernels here are the element-wise steps around the sorts
// and scans of esc.cu:
//  * entry_products_kernel: products of every entry of A (the length of the
//    row of B it selects); an exclusive scan turns them into `prefix`, the
//    first product of every entry in the product order of A (row by row,
//    A's entries in order, B's entries in order);
//  * piece_start / boundary_gather_kernel: the rows where slices may start;
//  * expand_rows_kernel / expand_band_kernel: one key (and value) per product,
//    written in product order; each lane finds its first product by binary
//    search in `prefix`, then walks forward 32 products at a time;
//  * band_ranges_kernel: for one long row of A, the part of every selected
//    row of B that falls into a column band;
//  * head_flags_kernel, row_nnz_kernel, unique_keys_kernel, compress_kernel:
//    after the sort, run heads (1 where the key differs from the previous
//    one), whose inclusive scan numbers the distinct keys; row lengths of C,
//    the carried keys of a band, and the sums of the runs.
// Semirings and masks: the products are ring.mul (S, semiring/semiring_ops.hpp),
// the runs summed with ring.add; with a mask (C<M>, C<!M>) the expansion
// marks each product the mask allows in `keep` (a binary search in M's row),
// and only those are compacted, sorted and compressed.
// Summation: a run of equal keys holds its products in expansion order (the
// sort is stable), and compress_kernel adds them one after another in one
// thread, starting from the first product (or the carried partial sum): the
// order of the sequential CPU loop, so the results equal it bit for bit.
// Workspace: none (buffers are the host's). Complexity: O(products) work per
// pass, O(log nnz(A)) per lane for its first product.
#pragma once

#include <cstdint>

#include "method/mask_view.cuh"
#include "semiring/semiring_ops.hpp"
#include "spgemm/csr.hpp"

namespace spgemm::esc::kernels {

constexpr int block_threads = 256;
constexpr int items_per_lane = 8;  // products per lane in the expansion kernels, 32 apart

// The last index i in [lo, hi) with x[i] <= v; requires x[lo] <= v and x sorted.
__device__ __forceinline__ std::int64_t last_at_most(const std::int64_t* __restrict__ x, std::int64_t lo,
                                                     std::int64_t hi, std::int64_t v) {
  while (hi - lo > 1) {
    const std::int64_t mid = lo + ((hi - lo) >> 1);
    if (x[mid] <= v) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// The first index i in [lo, hi) with cols[i] >= c (hi if none).
__device__ __forceinline__ std::int64_t first_at_least(const index_t* __restrict__ cols, std::int64_t lo,
                                                       std::int64_t hi, index_t c) {
  while (lo < hi) {
    const std::int64_t mid = lo + ((hi - lo) >> 1);
    if (cols[mid] < c) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

__device__ __forceinline__ std::int64_t global_thread() {
  return blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
}

// First product handled by this lane in an expansion kernel (lanes of a warp
// take consecutive products; each lane then steps by 32).
__device__ __forceinline__ std::int64_t first_lane_item() {
  const std::int64_t warp = global_thread() >> 5;
  return warp * 32 * items_per_lane + (threadIdx.x & 31);
}

// prefix[k] = products of entry k of A (length of the row of B it selects) for
// k < nnz, prefix[nnz] = 0; an exclusive scan follows.
__global__ void entry_products_kernel(std::int64_t nnz, const index_t* __restrict__ a_col,
                                      const offset_t* __restrict__ b_off, std::int64_t* __restrict__ prefix) {
  const std::int64_t k = global_thread();
  if (k < nnz) {
    const index_t j = a_col[k];
    prefix[k] = b_off[j + 1] - b_off[j];
  } else if (k == nnz) {
    prefix[k] = 0;
  }
}

// Rows where a slice may start (DeviceSelect over 0 .. rows): 0, rows, every
// row whose products contain a multiple of `budget` in the product order
// ("holds a grid point"), and the row after each such row. Between two
// consecutive starts lies either one row, or rows holding no grid point,
// whose products are then fewer than `budget`.
struct piece_start {
  const std::int64_t* prefix;  // first product of every entry of A (nnz + 1)
  const offset_t* a_off;
  std::int64_t rows;
  std::int64_t budget;

  __device__ bool holds_grid_point(std::int64_t r) const {
    const std::int64_t lo = prefix[a_off[r]];
    const std::int64_t hi = prefix[a_off[r + 1]];
    return (hi + budget - 1) / budget > (lo + budget - 1) / budget;
  }
  __device__ bool operator()(std::int64_t r) const {
    if (r == 0 || r == rows) return true;
    return holds_grid_point(r) || holds_grid_point(r - 1);
  }
};

// For every selected row: its first entry of A and its first product.
__global__ void boundary_gather_kernel(const std::int64_t* __restrict__ rows, const std::int64_t* __restrict__ count,
                                       const offset_t* __restrict__ a_off, const std::int64_t* __restrict__ prefix,
                                       std::int64_t* __restrict__ entry_at, std::int64_t* __restrict__ product_at) {
  const std::int64_t i = global_thread();
  if (i >= *count) return;
  const offset_t k = a_off[rows[i]];
  entry_at[i] = k;
  product_at[i] = prefix[k];
}

// A slice of rows [r0, r1) of A: entries [k0, k1), products [p0, p0 + n).
struct slice_view {
  std::int64_t r0 = 0;
  std::int64_t r1 = 0;
  std::int64_t k0 = 0;
  std::int64_t k1 = 0;
  std::int64_t p0 = 0;
  std::int64_t n = 0;
};

// One key per product of the slice, in product order: key = (row - r0) <<
// col_bits | column; with kValues also the value ring.mul(a_ik, b_kj); with
// a mask, keep[i] = whether it allows the product's entry.
template <typename K, typename T, bool kValues, typename S>
__global__ void __launch_bounds__(block_threads)
    expand_rows_kernel(slice_view s, const offset_t* __restrict__ a_off, const index_t* __restrict__ a_col,
                       const T* __restrict__ a_val, const offset_t* __restrict__ b_off,
                       const index_t* __restrict__ b_col, const T* __restrict__ b_val,
                       const std::int64_t* __restrict__ prefix, int col_bits, K* __restrict__ keys,
                       T* __restrict__ vals, S ring, method::mask_view<T> mask, int* __restrict__ keep) {
  std::int64_t i = first_lane_item();
  if (i >= s.n) return;
  std::int64_t p = s.p0 + i;
  std::int64_t k = last_at_most(prefix, s.k0, s.k1, p);
  std::int64_t r = last_at_most(a_off, s.r0, s.r1, k);
  for (int t = 0; t < items_per_lane; ++t) {
    const offset_t at = b_off[a_col[k]] + (p - prefix[k]);
    const index_t col = b_col[at];
    keys[i] = (static_cast<K>(r - s.r0) << col_bits) | static_cast<K>(col);
    if constexpr (kValues) vals[i] = ring.mul(a_val[k], b_val[at]);
    if (keep != nullptr) keep[i] = mask.allows(r, col) ? 1 : 0;
    i += 32;
    if (i >= s.n) return;
    p += 32;
    while (prefix[k + 1] <= p) ++k;
    while (a_off[r + 1] <= k) ++r;
  }
}

// One long row of A restricted to the column band [c0, c0 + width): for its
// entry e (of `length`), the first position in B of the band's part of the
// selected row (band_first[e]) and that part's length (band_prefix[e]; an
// exclusive scan follows, band_prefix[length] = 0).
__global__ void band_ranges_kernel(const index_t* __restrict__ row_col, std::int64_t length,
                                   const offset_t* __restrict__ b_off, const index_t* __restrict__ b_col, index_t c0,
                                   index_t c1, std::int64_t* __restrict__ band_first,
                                   std::int64_t* __restrict__ band_prefix) {
  const std::int64_t e = global_thread();
  if (e < length) {
    const index_t j = row_col[e];
    const std::int64_t first = first_at_least(b_col, b_off[j], b_off[j + 1], c0);
    const std::int64_t end = first_at_least(b_col, first, b_off[j + 1], c1);
    band_first[e] = first;
    band_prefix[e] = end - first;
  } else if (e == length) {
    band_prefix[e] = 0;
  }
}

// A chunk of the products of one long row (`row`) in one band: products
// [q0, q0 + n) in the band's product order, written after the `carried` keys
// already at the start of the output.
struct band_chunk {
  std::int64_t row = 0;
  std::int64_t length = 0;  // entries of the row of A
  std::int64_t q0 = 0;
  std::int64_t n = 0;
  std::int64_t carried = 0;
  index_t c0 = 0;
};

// One key (column - c0) per product of the chunk, in product order (values
// and keep as expand_rows_kernel's).
template <typename K, typename T, bool kValues, typename S>
__global__ void __launch_bounds__(block_threads)
    expand_band_kernel(band_chunk c, const T* __restrict__ row_val, const index_t* __restrict__ b_col, const T* __restrict__ b_val,
                       const std::int64_t* __restrict__ band_first, const std::int64_t* __restrict__ band_prefix,
                       K* __restrict__ keys, T* __restrict__ vals, S ring, method::mask_view<T> mask,
                       int* __restrict__ keep) {
  std::int64_t i = first_lane_item();
  if (i >= c.n) return;
  std::int64_t q = c.q0 + i;
  std::int64_t e = last_at_most(band_prefix, 0, c.length, q);
  for (int t = 0; t < items_per_lane; ++t) {
    const std::int64_t at = band_first[e] + (q - band_prefix[e]);
    const index_t col = b_col[at];
    keys[c.carried + i] = static_cast<K>(col - c.c0);
    if constexpr (kValues) vals[c.carried + i] = ring.mul(row_val[e], b_val[at]);
    if (keep != nullptr) keep[i] = mask.allows(c.row, col) ? 1 : 0;
    i += 32;
    if (i >= c.n) return;
    q += 32;
    while (band_prefix[e + 1] <= q) ++e;
  }
}

// flags[i] = 1 where sorted key i starts a run of equal keys.
template <typename K>
__global__ void head_flags_kernel(const K* __restrict__ keys, std::int64_t n, int* __restrict__ flags) {
  const std::int64_t i = global_thread();
  if (i < n) flags[i] = i == 0 || keys[i] != keys[i - 1] ? 1 : 0;
}

// Row lengths of C for the rows of a slice: the distinct keys in the row's
// range of the sorted keys (rows keep their product ranges: keys sort by row
// first). `heads` is the inclusive scan of the run heads.
__global__ void row_nnz_kernel(slice_view s, const offset_t* __restrict__ a_off,
                               const std::int64_t* __restrict__ prefix, const int* __restrict__ heads,
                               offset_t* __restrict__ row_nnz) {
  const std::int64_t t = global_thread();
  const std::int64_t r = s.r0 + t;
  if (r >= s.r1) return;
  const std::int64_t begin = prefix[a_off[r]] - s.p0;
  const std::int64_t end = prefix[a_off[r + 1]] - s.p0;
  row_nnz[r] = end > begin ? heads[end - 1] - (begin > 0 ? heads[begin - 1] : 0) : 0;
}

// Row lengths of C for the rows of a slice whose products were compacted (a
// mask dropped some): every run head adds one to its row, key >> col_bits
// rows after the slice's first (row_nnz: zero for the slice's rows).
template <typename K>
__global__ void row_heads_kernel(const K* __restrict__ keys, std::int64_t n, int col_bits,
                                 offset_t* __restrict__ row_nnz) {
  const std::int64_t i = global_thread();
  if (i < n && (i == 0 || keys[i] != keys[i - 1])) {
    atomicAdd(reinterpret_cast<unsigned long long*>(row_nnz + (keys[i] >> col_bits)), 1ull);
  }
}

// The distinct sorted keys, in order (the carried keys of a band).
template <typename K>
__global__ void unique_keys_kernel(const K* __restrict__ keys, const int* __restrict__ heads, std::int64_t n,
                                   K* __restrict__ out) {
  const std::int64_t i = global_thread();
  if (i < n && (i == 0 || keys[i] != keys[i - 1])) out[heads[i] - 1] = keys[i];
}

// Sums every run of equal sorted keys in order, one thread per run. kCarry:
// the run's key and sum go to position (run number) of carry_keys /
// carry_vals; otherwise to C at *row_start + shift + run number, column =
// (key & col_mask) + c0.
template <typename K, typename T, bool kCarry, typename S>
__global__ void compress_kernel(const K* __restrict__ keys, const T* __restrict__ vals,
                                const int* __restrict__ heads, std::int64_t n, K col_mask, index_t c0,
                                const offset_t* __restrict__ row_start, std::int64_t shift,
                                K* __restrict__ carry_keys, T* __restrict__ carry_vals, index_t* __restrict__ c_col,
                                T* __restrict__ c_val, S ring) {
  const std::int64_t i = global_thread();
  if (i >= n) return;
  const K key = keys[i];
  if (i > 0 && keys[i - 1] == key) return;
  T sum = vals[i];
  for (std::int64_t j = i + 1; j < n && keys[j] == key; ++j) sum = ring.add(sum, vals[j]);
  const std::int64_t run = heads[i] - 1;
  if constexpr (kCarry) {
    carry_keys[run] = key;
    carry_vals[run] = sum;
  } else {
    const std::int64_t at = *row_start + shift + run;
    c_col[at] = static_cast<index_t>(key & col_mask) + c0;
    c_val[at] = sum;
  }
}

}  // namespace spgemm::esc::kernels
