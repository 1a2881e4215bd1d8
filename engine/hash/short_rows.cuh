// Short rows of the hash method's warp bins without a hash table: a row of
// at most 32 entries of A and at most 32 * P products (P = 1 .. 4), one warp
// (hash_kernels.cuh calls these first and falls back to its table where they
// return false, having written nothing).
//  * the row's entries of A sit one per lane (B-row start and length, A's
//    value); a lane finds its products' entries by a five-step binary search
//    over the lanes' inclusive prefix (shuffles, no shared memory);
//  * symbolic: a product is new where no lane of its round with the same
//    column comes before it (__match_any_sync) and no product of an earlier
//    round has its column (broadcast reads of the earlier columns);
//  * numeric: each product's key is its column and its index in the row
//    ((column << 7) | index: B has fewer than 2^25 columns), its place in the
//    sorted row the number of smaller keys (every lane reads every key, a
//    broadcast); products of one column then lie together in product order,
//    and the first of each run adds the others to it in that order -- A's
//    entries in order, as the CPU loop and the table kernels sum.
// O(products^2 / 32) comparisons per lane against the table's insertions,
// sort or ranking: fewer instructions where rows have few products, whatever
// their columns span (uniform random matrices: 64 products over all of B).
#pragma once

#include <cstddef>
#include <cstdint>

#include "cuda/warp_primitives.cuh"
#include "spgemm/csr.hpp"

namespace spgemm::hash::kernels {

// Products per lane (P) of a numeric short row whose warp has `group_bytes`
// of shared memory: 32 * P keys, sorted keys and sorted values; at most 4
// (the comparisons grow with its square).
template <typename T>
__host__ __device__ constexpr int short_row_items(std::size_t group_bytes) {
  const std::size_t fit = group_bytes / (32 * (8 + sizeof(T)));
  return fit < 4 ? static_cast<int>(fit) : 4;
}

// A short row's entries of A, one per lane (lanes past the row's entries:
// length 0), and the inclusive prefix of their B-row lengths.
template <typename T>
struct short_row {
  offset_t b_begin = 0;
  int incl = 0;
  T a_val = T(0);
  int total = 0;  // the row's products

  // The entry of A and the position in B of product q (every lane calls it,
  // q per lane; q < total for the position to mean anything).
  __device__ __forceinline__ offset_t position(int q, int& entry) const {
    int lo = 0;
#pragma unroll
    for (int s = 16; s > 0; s >>= 1) {
      if (__shfl_sync(cuda::full_mask, incl, lo + s - 1) <= q) lo += s;
    }
    const int before = __shfl_sync(cuda::full_mask, incl, lo > 0 ? lo - 1 : 0);
    entry = lo;
    return __shfl_sync(cuda::full_mask, b_begin, lo) + (q - (lo > 0 ? before : 0));
  }
};

// Stages row `row` one entry per lane; false where it has more than 32
// entries or more than max_products products (every lane returns the same).
template <bool Numeric, typename T>
__device__ __forceinline__ bool stage_short_row(std::int64_t row, int max_products, const offset_t* __restrict__ a_off,
                                                const index_t* __restrict__ a_col, const T* __restrict__ a_val,
                                                const offset_t* __restrict__ b_off, short_row<T>& r) {
  const int lane = static_cast<int>(threadIdx.x & 31);
  const offset_t a0 = a_off[row];
  const offset_t a1 = a_off[row + 1];
  if (a1 - a0 > 32) return false;
  long long len = 0;
  if (lane < a1 - a0) {
    const index_t k = a_col[a0 + lane];
    r.b_begin = b_off[k];
    len = b_off[k + 1] - r.b_begin;
    if constexpr (Numeric) r.a_val = a_val[a0 + lane];
  }
  const long long incl = cuda::warp_inclusive_scan(len);
  const long long total = __shfl_sync(cuda::full_mask, incl, 31);
  if (total > max_products) return false;
  r.incl = static_cast<int>(incl);
  r.total = static_cast<int>(total);
  return true;
}

// Symbolic: the number of distinct columns of the row's products into
// row_nnz[row]; `cols`: 128 ints of shared memory, 16-byte aligned.
__device__ __forceinline__ bool symbolic_short_row(std::int64_t row, const offset_t* __restrict__ a_off,
                                                   const index_t* __restrict__ a_col,
                                                   const offset_t* __restrict__ b_off,
                                                   const index_t* __restrict__ b_col, index_t* cols,
                                                   offset_t* __restrict__ row_nnz) {
  constexpr int max_products = 128;
  short_row<float> r;
  if (!stage_short_row<false, float>(row, max_products, a_off, a_col, static_cast<const float*>(nullptr), b_off, r)) {
    return false;
  }
  const int lane = static_cast<int>(threadIdx.x & 31);
  int count = 0;
  for (int base = 0; base < r.total; base += 32) {
    const int q = base + lane;
    int entry = 0;
    const offset_t j = r.position(q, entry);
    const bool valid = q < r.total;
    const index_t col = valid ? b_col[j] : -1 - lane;  // invalid lanes match nothing
    cols[q] = col;
    const unsigned peers = __match_any_sync(cuda::full_mask, col);
    bool fresh = valid && lane == __ffs(peers) - 1;
    for (int e = 0; e < base; e += 4) {  // earlier rounds: whole ones
      const int4 c4 = *reinterpret_cast<const int4*>(cols + e);
      fresh = fresh && c4.x != col && c4.y != col && c4.z != col && c4.w != col;
    }
    count += fresh ? 1 : 0;
    __syncwarp();
  }
  count = cuda::warp_sum(count);
  if (lane == 0) row_nnz[row] = count;
  return true;
}

// Numeric: the row's entries to C in column order. Shared memory at `base`
// (16-byte aligned): 32 * P keys, 32 * P sorted keys, 32 * P sorted values.
template <int P, typename T, typename S>
__device__ __forceinline__ bool numeric_short_row(std::int64_t row, std::int64_t b_cols,
                                                  const offset_t* __restrict__ a_off,
                                                  const index_t* __restrict__ a_col, const T* __restrict__ a_val,
                                                  const offset_t* __restrict__ b_off,
                                                  const index_t* __restrict__ b_col, const T* __restrict__ b_val,
                                                  unsigned char* base,
                                                  const offset_t* __restrict__ c_off, index_t* __restrict__ c_col,
                                                  T* __restrict__ c_val, S ring) {
  static_assert(32 * P <= 128, "product indices take 7 bits of the key");
  constexpr unsigned no_key = 0xffffffffu;  // sorts after every product
  if (b_cols >= (1LL << 25)) return false;  // the largest key stays below no_key
  short_row<T> r;
  if (!stage_short_row<true, T>(row, 32 * P, a_off, a_col, a_val, b_off, r)) return false;
  unsigned* keys = reinterpret_cast<unsigned*>(base);
  unsigned* sorted_keys = keys + 32 * P;
  T* sorted_vals = reinterpret_cast<T*>(sorted_keys + 32 * P);
  const int lane = static_cast<int>(threadIdx.x & 31);
  unsigned key[P];
  T p[P];
#pragma unroll
  for (int i = 0; i < P; ++i) {
    const int q = lane + 32 * i;
    int entry = 0;
    const offset_t j = r.position(q, entry);
    const T av = __shfl_sync(cuda::full_mask, r.a_val, entry);
    key[i] = no_key;
    p[i] = T(0);
    if (q < r.total) {
      key[i] = (static_cast<unsigned>(b_col[j]) << 7) | static_cast<unsigned>(q);
      p[i] = ring.mul(av, b_val[j]);
    }
    keys[q] = key[i];
  }
  __syncwarp();
  const int rounded = (r.total + 3) & ~3;  // keys past total read no_key
  int place[P] = {};
  for (int e = 0; e < rounded; e += 4) {
    const uint4 k4 = *reinterpret_cast<const uint4*>(keys + e);
#pragma unroll
    for (int i = 0; i < P; ++i) {
      place[i] += (k4.x < key[i]) + (k4.y < key[i]) + (k4.z < key[i]) + (k4.w < key[i]);
    }
  }
#pragma unroll
  for (int i = 0; i < P; ++i) {
    if (key[i] != no_key) {
      sorted_keys[place[i]] = key[i];
      sorted_vals[place[i]] = p[i];
    }
  }
  __syncwarp();
  // The first product of each column: its entry's place is the number of
  // such firsts before it.
  const offset_t out = c_off[row];
  int written = 0;
  for (int base = 0; base < r.total; base += 32) {
    const int e = base + lane;
    const bool valid = e < r.total;
    const unsigned col = valid ? sorted_keys[e] >> 7 : 0;
    const bool first = valid && (e == 0 || (sorted_keys[e - 1] >> 7) != col);
    const unsigned firsts = __ballot_sync(cuda::full_mask, first);
    if (first) {
      T acc = sorted_vals[e];
      for (int f = e + 1; f < r.total && (sorted_keys[f] >> 7) == col; ++f) acc = ring.add(acc, sorted_vals[f]);
      const offset_t at = out + written + __popc(firsts & ((1u << lane) - 1u));
      c_col[at] = static_cast<index_t>(col);
      c_val[at] = acc;
    }
    written += __popc(firsts);
  }
  __syncwarp();  // the caller's next row reuses the shared memory
  return true;
}

}  // namespace spgemm::hash::kernels
