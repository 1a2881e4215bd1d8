// Masked dot product kernels (included by dot.cu only).
//
// Method: one thread per entry (i, j) of the mask M: its row i by binary
// search in M's offsets, then C(i,j) = sum over k of A(i,k) B(k,j) the
// cheaper of two ways, by the lengths at hand:
//  * by columns: A's row i against B^T's row j (B's column j), both sorted,
//    every index of the shorter list searched in what is left of the longer
//    one: min(|A_i|, |B_:j|) log max(...);
//  * by rows: for every k of A's row i, j searched in B's row k (its ends
//    first, then a search without branches): |A_i| log (mean row of B).
//    Where B's column j is long (a hub of a power-law graph whose rows of B
//    are short, as in triangle counting L<L> = L L) this is the cheaper.
// Where B has no entry above (below) its diagonal only the k >= j (k <= j)
// of A's row can meet it, and the lengths are those of that part.
// Two passes: the first needs only B's column lengths and goes by rows but
// where by columns would be far cheaper (defer_factor); only where it left
// such entries is B transposed, and the second pass does them.
// Either way the matches come in increasing k, so the products are summed in
// the order of A's entries; over a `pair` multiply (Count) they are counted.
// Then the found entries are compacted into C (cuda/compact_entries.hpp).
// Workspace: B's column lengths (4 cols(B) bytes) and a counter; B^T where a
// second pass runs. Complexity: per entry of M, log rows(M) + the cheaper of
// |A_i| log (row of B) and min(|A_i|, |B_j|) log max(|A_i|, |B_j|).
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

// The place of k in the sorted cols[0, n), -1 where it is not there: k
// against the row's ends first (half the rows of B a triangular B offers
// end before or start after it), then a search without branches, in 32 bits
// (a row's length fits them).
__device__ __forceinline__ int place_in_row(const index_t* __restrict__ cols, int n, index_t k) {
  if (n == 0 || k > cols[n - 1] || k < cols[0]) return -1;
  int at = 0;
  for (int len = n; len > 1;) {  // cols[at, at + len) holds the last index <= k
    const int half = len >> 1;
    at = cols[at + half] <= k ? at + half : at;
    len -= half;
  }
  return cols[at] == k ? at : -1;
}

// An entry's sum of products, in the order they come; over a semiring whose
// multiply is `pair` (Count) a count of them, its value as adding that many
// ones gives it.
template <typename T, typename S, bool Count>
struct entry_sum {
  const S& ring;
  T acc = T(0);
  std::int64_t n = 0;

  __device__ __forceinline__ void add(T x, T y) {
    if constexpr (!Count) {
      const T p = ring.mul(x, y);
      acc = n > 0 ? ring.add(acc, p) : p;
    }
    ++n;
  }
  __device__ __forceinline__ T value() const {
    if constexpr (Count) {
      if (ring.add_op == monoid::plus) return static_cast<T>(n);
      if (ring.add_op == monoid::lxor) return static_cast<T>(n & 1);
      return T(1);
    } else {
      return acc;
    }
  }
};

template <typename T>
struct operands {
  const offset_t* __restrict__ a_off;
  const index_t* __restrict__ a_col;
  const T* __restrict__ a_val;
  const offset_t* __restrict__ b_off;
  const index_t* __restrict__ b_col;
  const T* __restrict__ b_val;
};

// B's columns as a pass sees them: B^T's rows (the second pass), or only
// their lengths (the first; off is nullptr).
template <typename T>
struct columns_of_b {
  const offset_t* __restrict__ off = nullptr;
  const index_t* __restrict__ cols = nullptr;
  const T* __restrict__ vals = nullptr;
  const index_t* __restrict__ lengths = nullptr;
};

// What the kernel knows of B: row_steps, 1 + the binary digits of B's mean
// row length (the cost of a search in one of its rows); lower (upper): no
// entry above (below) its diagonal, so only A's k >= j (k <= j) can meet it.
struct shape_of_b {
  int row_steps;
  bool lower;
  bool upper;
};

// The first pass leaves an entry to the second (found[e] = deferred) where a
// search in B's column would cost less than 1 / defer_factor of the search
// by B's rows; B^T is made only where some entry is left.
constexpr offset_t deferred = -1;
constexpr std::int64_t defer_factor = 8;

// B's column lengths: lengths[c] += 1 per entry of column c (zeroed before).
__global__ void column_lengths_kernel(std::int64_t nnz, const index_t* __restrict__ cols,
                                      index_t* __restrict__ lengths) {
  const std::int64_t e = global_thread();
  if (e < nnz) atomicAdd(&lengths[cols[e]], 1);
}

// Per entry e of M: vals[e] = A(i,:) (+).(x) B(:,j) and found[e] = 1 where
// at least one product exists (and M counts the entry), else found[e] = 0.
// First pass (bt.off nullptr): every entry by B's rows, but those a search in
// B's column would do far faster, left as found[e] = deferred and counted in
// *left; found[nnz(M)] = 0 for the scan. Second pass (B^T given): only the
// deferred entries, each the cheapest way.
// (At most 32 registers a thread: every warp slot of an SM can be filled.)
template <typename T, typename S, bool Count>
__global__ void __launch_bounds__(block_threads, 2048 / block_threads)
    dot_kernel(method::mask_view<T> mask, std::int64_t mask_rows, std::int64_t mask_nnz, operands<T> x,
               columns_of_b<T> bt, shape_of_b shape, S ring, T* __restrict__ vals, offset_t* __restrict__ found,
               unsigned long long* __restrict__ left) {
  const std::int64_t e = global_thread();
  const bool first_pass = bt.off == nullptr;
  if (first_pass && e == mask_nnz) found[e] = 0;
  if (e >= mask_nnz) return;
  if (!first_pass && found[e] != deferred) return;
  if (mask.values != nullptr && mask.values[e] == T(0)) {
    found[e] = 0;
    return;
  }
  const std::int64_t i = cuda::row_of_entry(mask.offsets, mask_rows, e);
  const index_t j = mask.cols[e];
  offset_t a = x.a_off[i];
  offset_t a_end = x.a_off[i + 1];
  // The search by rows starts at A's row's start all the same (below): the
  // lanes of a warp on the same row then read the same rows of B together.
  const offset_t row_start = a;
  if (shape.lower) a = lower_bound(x.a_col, a, a_end, j);
  if (shape.upper) a_end = lower_bound(x.a_col, a, a_end, j + 1);
  offset_t b = first_pass ? 0 : bt.off[j];
  const offset_t b_end = first_pass ? bt.lengths[j] : bt.off[j + 1];
  entry_sum<T, S, Count> sum{ring};
  const offset_t la = a_end - a;
  const offset_t lb = b_end - b;
  const offset_t shorter = la < lb ? la : lb;
  const offset_t longer = la < lb ? lb : la;
  const std::int64_t by_rows = la * shape.row_steps;
  const std::int64_t by_column = shorter * (1 + bits(longer));
  if (first_pass && la > 0 && lb > 0 && by_column * defer_factor < by_rows) {
    found[e] = deferred;
    atomicAdd(left, 1ull);
    return;
  }
  if (la > 0 && lb > 0 && (first_pass || by_rows < by_column)) {
    for (a = row_start; a < a_end; ++a) {
      const index_t k = x.a_col[a];
      if (k < j && shape.lower) continue;
      const offset_t row = x.b_off[k];
      const int at = place_in_row(x.b_col + row, static_cast<int>(x.b_off[k + 1] - row), j);
      if (at >= 0) sum.add(x.a_val[a], x.b_val[row + at]);
    }
  } else if (la <= lb) {
    for (; a < a_end && b < b_end; ++a) {
      b = lower_bound(bt.cols, b, b_end, x.a_col[a]);
      if (b < b_end && bt.cols[b] == x.a_col[a]) sum.add(x.a_val[a], bt.vals[b++]);
    }
  } else {
    for (; b < b_end && a < a_end; ++b) {
      a = lower_bound(x.a_col, a, a_end, bt.cols[b]);
      if (a < a_end && x.a_col[a] == bt.cols[b]) sum.add(x.a_val[a++], bt.vals[b]);
    }
  }
  if (sum.n > 0) vals[e] = sum.value();
  found[e] = sum.n > 0 ? 1 : 0;
}

}  // namespace spgemm::dot::kernels
