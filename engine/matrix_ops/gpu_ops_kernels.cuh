// Kernels of the GPU matrix ops (included by gpu_ops.cu only). Each is the
// simplest correct one for a memory-bound step: a thread per row where two
// rows merge or a row is reduced in order, a thread per entry elsewhere, a
// warp per row where rows are copied. Workspace: none (the host's).
#pragma once

#include <cstdint>

#include "cuda/row_of_entry.cuh"
#include "matrix_ops/op_functions.hpp"
#include "semiring/semiring_ops.hpp"
#include "spgemm/csr.hpp"

namespace spgemm::matrix_ops::kernels {

constexpr int block_threads = 256;

__device__ __forceinline__ std::int64_t global_thread() {
  return blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
}

// Row r of A and B merged: C's entries on the union (Union) or intersection.
// Without Write, counts[r] = their number (counts[rows] = 0, for the scan);
// with Write, the entries go to C at c_off[r].
template <typename T, bool Union, bool Write>
__global__ void ewise_rows_kernel(std::int64_t rows, const offset_t* __restrict__ a_off,
                                  const index_t* __restrict__ a_col, const T* __restrict__ a_val,
                                  const offset_t* __restrict__ b_off, const index_t* __restrict__ b_col,
                                  const T* __restrict__ b_val, binary_op op, offset_t* __restrict__ c_off,
                                  index_t* __restrict__ c_col, T* __restrict__ c_val) {
  const std::int64_t r = global_thread();
  if (r > rows) return;
  if (r == rows) {
    if (!Write) c_off[r] = 0;
    return;
  }
  offset_t i = a_off[r], j = b_off[r];
  const offset_t i_end = a_off[r + 1], j_end = b_off[r + 1];
  offset_t out = Write ? c_off[r] : 0;
  const auto put = [&](index_t col, T v) {
    if constexpr (Write) {
      c_col[out] = col;
      c_val[out] = v;
    }
    ++out;
  };
  while (i < i_end && j < j_end) {
    const index_t ca = a_col[i], cb = b_col[j];
    if (ca == cb) {
      put(ca, Write ? ops::apply(op, a_val[i], b_val[j]) : T(0));
      ++i;
      ++j;
    } else if (ca < cb) {
      if (Union) put(ca, Write ? a_val[i] : T(0));
      ++i;
    } else {
      if (Union) put(cb, Write ? b_val[j] : T(0));
      ++j;
    }
  }
  if constexpr (Union) {
    for (; i < i_end; ++i) put(a_col[i], Write ? a_val[i] : T(0));
    for (; j < j_end; ++j) put(b_col[j], Write ? b_val[j] : T(0));
  }
  if constexpr (!Write) c_off[r] = out;
}

template <typename T, typename F>
__global__ void map_values_kernel(std::int64_t n, const T* __restrict__ in, T* __restrict__ out, F f) {
  const std::int64_t e = global_thread();
  if (e < n) out[e] = f(in[e]);
}

template <typename T>
struct unary_fn {
  unary_op op;
  __device__ T operator()(T x) const { return ops::apply(op, x); }
};

template <typename T>
struct scalar_fn {
  apply_scalar a;
  __device__ T operator()(T x) const { return ops::apply(a, x); }
};

// flags[e] = whether select keeps entry e; flags[nnz] = 0.
template <typename T>
__global__ void select_flags_kernel(std::int64_t rows, std::int64_t nnz, const offset_t* __restrict__ a_off,
                                    const index_t* __restrict__ a_col, const T* __restrict__ a_val,
                                    select_entries s, offset_t* __restrict__ flags) {
  const std::int64_t e = global_thread();
  if (e == nnz) flags[e] = 0;
  if (e >= nnz) return;
  const std::int64_t i = cuda::row_of_entry(a_off, rows, e);
  flags[e] = ops::selects(s, i, a_col[e], a_val[e]) ? 1 : 0;
}

// After a stable descending sort of every row's values (`order`: the entry
// each sorted position holds), the first k positions of each row flag their
// entries (flags zeroed before).
__global__ void top_flags_kernel(std::int64_t rows, std::int64_t nnz, const offset_t* __restrict__ a_off,
                                 const std::int64_t* __restrict__ order, std::int64_t k, offset_t* __restrict__ flags) {
  const std::int64_t p = global_thread();
  if (p >= nnz) return;
  const std::int64_t r = cuda::row_of_entry(a_off, rows, p);
  if (p - a_off[r] < k) flags[order[p]] = 1;
}

__global__ void iota_kernel(std::int64_t n, std::int64_t* __restrict__ out) {
  const std::int64_t e = global_thread();
  if (e < n) out[e] = e;
}

// Each row reduced in its order (or counted): vals[r] and found[r] (1 where
// the row has entries); found[rows] = 0.
template <typename T>
__global__ void reduce_rows_kernel(std::int64_t rows, const offset_t* __restrict__ a_off, const T* __restrict__ a_val,
                                   monoid add, bool count, T* __restrict__ vals, offset_t* __restrict__ found) {
  const std::int64_t r = global_thread();
  if (r == rows) found[r] = 0;
  if (r >= rows) return;
  const offset_t begin = a_off[r], end = a_off[r + 1];
  found[r] = end > begin ? 1 : 0;
  if (end == begin) return;
  T acc = count ? T(end - begin) : a_val[begin];
  if (!count) {
    for (offset_t k = begin + 1; k < end; ++k) acc = ops::apply(add, acc, a_val[k]);
  }
  vals[r] = acc;
}

// The reduced rows (position: the scanned found flags) as a vector: a
// rows x 1 matrix (AsRow false: offsets per row, column 0) or a 1 x rows one
// (AsRow: the row numbers as columns).
template <typename T, bool AsRow>
__global__ void vector_kernel(std::int64_t rows, const offset_t* __restrict__ position, const T* __restrict__ vals,
                              offset_t* __restrict__ c_off, index_t* __restrict__ c_col, T* __restrict__ c_val) {
  const std::int64_t r = global_thread();
  if (!AsRow && r <= rows) c_off[r] = position[r];
  if (AsRow && r == 0) {
    c_off[0] = 0;
    c_off[1] = position[rows];
  }
  if (r >= rows || position[r + 1] == position[r]) return;
  c_col[position[r]] = AsRow ? static_cast<index_t>(r) : 0;
  c_val[position[r]] = vals[r];
}

template <typename T>
struct monoid_fn {
  monoid add;
  __device__ T operator()(T x, T y) const { return ops::apply(add, x, y); }
};

// A vector (n x 1 or 1 x n, as_row) as n dense elements and presence flags (zeroed before).
template <typename T>
__global__ void dense_vector_kernel(std::int64_t v_rows, std::int64_t v_nnz, bool as_row,
                                    const offset_t* __restrict__ v_off, const index_t* __restrict__ v_col,
                                    const T* __restrict__ v_val, T* __restrict__ element,
                                    unsigned char* __restrict__ present) {
  const std::int64_t e = global_thread();
  if (e >= v_nnz) return;
  const std::int64_t at = as_row ? v_col[e] : cuda::row_of_entry(v_off, v_rows, e);
  element[at] = v_val[e];
  present[at] = 1;
}

// Entry e of A scaled by its element of v (columns: v_j, else v_i) into
// scaled[e]; flags[e] = whether that element is present; flags[nnz] = 0.
template <typename T>
__global__ void scale_kernel(std::int64_t rows, std::int64_t nnz, const offset_t* __restrict__ a_off,
                             const index_t* __restrict__ a_col, const T* __restrict__ a_val, bool columns,
                             binary_op op, const T* __restrict__ element, const unsigned char* __restrict__ present,
                             T* __restrict__ scaled, offset_t* __restrict__ flags) {
  const std::int64_t e = global_thread();
  if (e == nnz) flags[e] = 0;
  if (e >= nnz) return;
  const std::int64_t at = columns ? a_col[e] : cuda::row_of_entry(a_off, rows, e);
  flags[e] = present[at];
  if (present[at]) scaled[e] = ops::apply(op, a_val[e], element[at]);
}

// lengths[i] = entries of row rows[i] of A (lengths[n] = 0, for the scan).
__global__ void row_lengths_kernel(std::int64_t n, const std::int64_t* __restrict__ rows,
                                   const offset_t* __restrict__ a_off, offset_t* __restrict__ lengths) {
  const std::int64_t i = global_thread();
  if (i < n) lengths[i] = a_off[rows[i] + 1] - a_off[rows[i]];
  if (i == n) lengths[i] = 0;
}

// Row rows[i] of A into row i of C, a warp per row.
template <typename T>
__global__ void gather_rows_kernel(std::int64_t n, const std::int64_t* __restrict__ rows,
                                   const offset_t* __restrict__ a_off, const index_t* __restrict__ a_col,
                                   const T* __restrict__ a_val, const offset_t* __restrict__ c_off,
                                   index_t* __restrict__ c_col, T* __restrict__ c_val) {
  const std::int64_t i = global_thread() >> 5;
  if (i >= n) return;
  const offset_t from = a_off[rows[i]];
  const offset_t length = a_off[rows[i] + 1] - from;
  const offset_t to = c_off[i];
  for (offset_t k = threadIdx.x & 31; k < length; k += 32) {
    c_col[to + k] = a_col[from + k];
    c_val[to + k] = a_val[from + k];
  }
}

}  // namespace spgemm::matrix_ops::kernels
