// Hash SpGEMM kernels (included by hash.cu only).
//
// Method (per row of A, by one warp or one block; Nagasaka et al. 2017
// "nsparse", Parger et al. 2020 "spECK", Du et al. 2022 "OpSparse" for the
// hash tables per bin; Liu & Vinter 2015 for the binning):
//  * the row's products are enumerated in row order -- A's entries in order,
//    for each the entries of the row of B -- G at a time (G = threads of the
//    group): A's entries are staged in shared memory with the inclusive
//    prefix of their B-row lengths, each thread finds its product by binary
//    search over the stage;
//  * symbolic: insert the column into the table (atomicCAS on int keys), count
//    the columns inserted first, sum over the group -> nnz of the row;
//  * numeric: find-or-insert the slot, then commit the products to their slots
//    in product order: within a warp, __match_any_sync groups the lanes of one
//    slot and the lowest lane adds them in lane order; warps of a block commit
//    one after another. Each entry of C is therefore summed in the order of
//    A's entries, exactly as the sequential CPU loop does: deterministic.
//    Then a bitonic sort of the table by column (empty keys sort last) and
//    the first nnz slots are written out;
//  * dense rows (beyond the largest shared table): the same with a bitmap and
//    a dense value array of b.cols in global memory per block, the row read
//    out in column order by a block scan over the bitmap words.
// Workspace: none beyond the per-block dense arrays (sized by the host).
// Complexity: O(products) table operations, O(S log^2 S) sort per row of
// table size S; a dense row also reads its b.cols / 32 bitmap words.
#pragma once

#include <cstdint>

#include "planner/planner.hpp"
#include "spgemm/csr.hpp"

namespace spgemm::hash::kernels {

constexpr index_t empty_key = 0x7fffffff;  // sorts after every column
constexpr unsigned full_mask = 0xffffffffu;

__device__ __forceinline__ long long warp_inclusive_scan(long long v) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const long long u = __shfl_up_sync(full_mask, v, d);
    if (lane >= d) v += u;
  }
  return v;
}

__device__ __forceinline__ long long warp_sum(long long v) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(full_mask, v, d);
  return v;
}

// Inclusive scan over the block; `total` receives the block's sum. Every
// thread of the block must call it.
__device__ __forceinline__ long long block_inclusive_scan(long long v, long long& total) {
  __shared__ long long warp_totals[32];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int warps = blockDim.x >> 5;
  v = warp_inclusive_scan(v);
  if (lane == 31) warp_totals[warp] = v;
  __syncthreads();
  long long offset = 0;
  long long sum = 0;
  for (int w = 0; w < warps; ++w) {
    const long long t = warp_totals[w];
    if (w < warp) offset += t;
    sum += t;
  }
  total = sum;
  __syncthreads();
  return v + offset;
}

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

// Shared-memory hash table of a power-of-two size.
template <typename T>
struct shared_table {
  index_t* keys;
  T* vals;
  unsigned mask;

  __device__ void clear(int rank, int size) {
    for (unsigned i = rank; i <= mask; i += size) {
      keys[i] = empty_key;
      vals[i] = T(0);
    }
  }
  __device__ int insert(index_t col, bool& inserted) {
    unsigned s = (static_cast<unsigned>(col) * 107u) & mask;
    for (;;) {
      const index_t old = atomicCAS(&keys[s], empty_key, col);
      if (old == empty_key) {
        inserted = true;
        return static_cast<int>(s);
      }
      if (old == col) {
        inserted = false;
        return static_cast<int>(s);
      }
      s = (s + 1) & mask;
    }
  }
};

// Dense accumulator in global memory: one bit per column, one value per column.
template <typename T>
struct dense_table {
  unsigned* bits;
  T* vals;
  __device__ int insert(index_t col, bool& inserted) {
    const unsigned m = 1u << (col & 31);
    const unsigned old = atomicOr(&bits[col >> 5], m);
    inserted = (old & m) == 0;
    return col;
  }
};

// Adds each lane's product to its slot, lanes of one slot in lane order.
// The whole warp calls it; slot < 0 means no product.
template <typename T>
__device__ __forceinline__ void warp_commit(int slot, T p, T* vals, T* scratch) {
  const int lane = threadIdx.x & 31;
  scratch[lane] = p;
  __syncwarp();
  const unsigned peers = __match_any_sync(full_mask, slot);
  if (slot >= 0 && lane == __ffs(peers) - 1) {
    T acc = vals[slot];
    unsigned m = peers;
    while (m != 0) {
      acc += scratch[__ffs(m) - 1];
      m &= m - 1;
    }
    vals[slot] = acc;
  }
  __syncwarp();
}

// Stage of up to G entries of A: begin of the B row, inclusive prefix of the
// B-row lengths, and A's value (numeric).
template <typename T>
struct stage {
  offset_t* b_begin;
  long long* incl;
  T* a_val;  // nullptr in the symbolic pass
  T* scratch;
};

// Enumerates the products of row `row` in row order, G at a time, calling
// visit(valid, col, p) on every thread of the group for each chunk
// (uniformly: invalid threads get valid = false).
template <bool Warp, bool Numeric, typename T, typename Visit>
__device__ __forceinline__ void for_each_product_chunk(std::int64_t row, const offset_t* __restrict__ a_off,
                                                       const index_t* __restrict__ a_col,
                                                       const T* __restrict__ a_val,
                                                       const offset_t* __restrict__ b_off,
                                                       const index_t* __restrict__ b_col,
                                                       const T* __restrict__ b_val, stage<T> st, Visit&& visit) {
  using grp = group<Warp>;
  const int rank = grp::rank();
  const int g = grp::size();
  const offset_t a0 = a_off[row];
  const offset_t a1 = a_off[row + 1];
  for (offset_t e0 = a0; e0 < a1; e0 += g) {
    const int n = static_cast<int>(a1 - e0 < g ? a1 - e0 : g);
    long long len = 0;
    offset_t begin = 0;
    T av = T(0);
    if (rank < n) {
      const index_t k = a_col[e0 + rank];
      begin = b_off[k];
      len = b_off[k + 1] - begin;
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
    for (long long q0 = 0; q0 < total; q0 += g) {
      const long long q = q0 + rank;
      const bool valid = q < total;
      index_t col = 0;
      T p = T(0);
      if (valid) {
        int lo = 0;
        int hi = n - 1;
        while (lo < hi) {  // first i with incl[i] > q
          const int mid = (lo + hi) >> 1;
          if (st.incl[mid] > q) {
            hi = mid;
          } else {
            lo = mid + 1;
          }
        }
        const long long before = lo > 0 ? st.incl[lo - 1] : 0;
        const offset_t j = st.b_begin[lo] + (q - before);
        col = b_col[j];
        if constexpr (Numeric) p = st.a_val[lo] * b_val[j];
      }
      visit(valid, col, p, total - q0);
    }
  }
}

// Symbolic pass, shared tables: nnz of each row of the bin into row_nnz.
template <bool Warp>
__global__ void symbolic_shared_kernel(const int* __restrict__ rows, std::int64_t n, int table,
                                       const offset_t* __restrict__ a_off, const index_t* __restrict__ a_col,
                                       const offset_t* __restrict__ b_off, const index_t* __restrict__ b_col,
                                       offset_t* __restrict__ row_nnz) {
  extern __shared__ __align__(16) unsigned char smem[];
  using grp = group<Warp>;
  const int g = grp::size();
  const int groups = Warp ? static_cast<int>(blockDim.x >> 5) : 1;
  const int gi = Warp ? static_cast<int>(threadIdx.x >> 5) : 0;
  const std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * groups + gi;
  if (r >= n) return;  // warp groups only: a block group has r < n
  unsigned char* base = smem + static_cast<std::size_t>(gi) * (static_cast<std::size_t>(g) * 16 + 4u * table);
  stage<float> st{reinterpret_cast<offset_t*>(base), reinterpret_cast<long long*>(base + 8 * g), nullptr, nullptr};
  shared_table<float> t{reinterpret_cast<index_t*>(base + 16 * g), nullptr, static_cast<unsigned>(table - 1)};
  const int rank = grp::rank();
  for (unsigned i = rank; i < static_cast<unsigned>(table); i += g) t.keys[i] = empty_key;
  grp::sync();
  const std::int64_t row = rows[r];
  long long count = 0;
  for_each_product_chunk<Warp, false, float>(row, a_off, a_col, static_cast<const float*>(nullptr), b_off, b_col,
                                             static_cast<const float*>(nullptr), st,
                                             [&](bool valid, index_t col, float, long long) {
                                               if (valid) {
                                                 bool inserted = false;
                                                 (void)t.insert(col, inserted);
                                                 count += inserted ? 1 : 0;
                                               }
                                             });
  count = grp::sum(count);
  if (rank == 0) row_nnz[row] = count;
}

// Symbolic pass, dense rows: one block per row at a time, bitmap in global memory.
__global__ void symbolic_dense_kernel(const int* __restrict__ rows, std::int64_t n, std::int64_t words,
                                      unsigned* __restrict__ bitmaps, const offset_t* __restrict__ a_off,
                                      const index_t* __restrict__ a_col, const offset_t* __restrict__ b_off,
                                      const index_t* __restrict__ b_col, offset_t* __restrict__ row_nnz) {
  extern __shared__ __align__(16) unsigned char smem[];
  using grp = group<false>;
  const int g = grp::size();
  stage<float> st{reinterpret_cast<offset_t*>(smem), reinterpret_cast<long long*>(smem + 8 * g), nullptr, nullptr};
  unsigned* bits = bitmaps + static_cast<std::size_t>(blockIdx.x) * words;
  dense_table<float> t{bits, nullptr};
  for (std::int64_t r = blockIdx.x; r < n; r += gridDim.x) {
    const std::int64_t row = rows[r];
    long long count = 0;
    for_each_product_chunk<false, false, float>(row, a_off, a_col, static_cast<const float*>(nullptr), b_off, b_col,
                                                static_cast<const float*>(nullptr), st,
                                                [&](bool valid, index_t col, float, long long) {
                                                  if (valid) {
                                                    bool inserted = false;
                                                    (void)t.insert(col, inserted);
                                                    count += inserted ? 1 : 0;
                                                  }
                                                });
    count = grp::sum(count);  // synchronizes the block
    if (threadIdx.x == 0) row_nnz[row] = count;
    for (std::int64_t w = threadIdx.x; w < words; w += g) bits[w] = 0;
    __syncthreads();
  }
}

// Commits one chunk of products (thread rank <-> product q0 + rank) in order.
template <bool Warp, typename T>
__device__ __forceinline__ void commit_chunk(int slot, T p, T* vals, T* scratch, long long remaining) {
  if constexpr (Warp) {
    warp_commit(slot, p, vals, scratch);
  } else {
    const int warp = static_cast<int>(threadIdx.x >> 5);
    const long long needed = (remaining + 31) / 32;
    const int active = static_cast<int>(needed < (blockDim.x >> 5) ? needed : (blockDim.x >> 5));
    for (int w = 0; w < active; ++w) {
      if (warp == w) warp_commit(slot, p, vals, scratch + 32 * w);
      __syncthreads();
    }
  }
}

// Numeric pass, shared tables.
template <bool Warp, typename T>
__global__ void numeric_shared_kernel(const int* __restrict__ rows, std::int64_t n, int table,
                                      const offset_t* __restrict__ a_off, const index_t* __restrict__ a_col,
                                      const T* __restrict__ a_val, const offset_t* __restrict__ b_off,
                                      const index_t* __restrict__ b_col, const T* __restrict__ b_val,
                                      const offset_t* __restrict__ c_off, index_t* __restrict__ c_col,
                                      T* __restrict__ c_val) {
  extern __shared__ __align__(16) unsigned char smem[];
  using grp = group<Warp>;
  const int g = grp::size();
  const int groups = Warp ? static_cast<int>(blockDim.x >> 5) : 1;
  const int gi = Warp ? static_cast<int>(threadIdx.x >> 5) : 0;
  const std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * groups + gi;
  if (r >= n) return;
  const std::size_t per_group =
      static_cast<std::size_t>(g) * (16 + 2 * sizeof(T)) + static_cast<std::size_t>(table) * (4 + sizeof(T));
  unsigned char* base = smem + static_cast<std::size_t>(gi) * per_group;
  unsigned char* p8 = base;
  stage<T> st;
  st.b_begin = reinterpret_cast<offset_t*>(p8);
  p8 += 8 * g;
  st.incl = reinterpret_cast<long long*>(p8);
  p8 += 8 * g;
  shared_table<T> t;
  t.vals = reinterpret_cast<T*>(p8);
  p8 += sizeof(T) * table;
  st.a_val = reinterpret_cast<T*>(p8);
  p8 += sizeof(T) * g;
  st.scratch = reinterpret_cast<T*>(p8);
  p8 += sizeof(T) * g;
  t.keys = reinterpret_cast<index_t*>(p8);
  t.mask = static_cast<unsigned>(table - 1);
  const int rank = grp::rank();
  t.clear(rank, g);
  grp::sync();
  const std::int64_t row = rows[r];
  for_each_product_chunk<Warp, true, T>(row, a_off, a_col, a_val, b_off, b_col, b_val, st,
                                        [&](bool valid, index_t col, T p, long long remaining) {
                                          int slot = -1;
                                          if (valid) {
                                            bool inserted = false;
                                            slot = t.insert(col, inserted);
                                          }
                                          commit_chunk<Warp, T>(slot, p, t.vals, st.scratch, remaining);
                                        });
  grp::sync();
  // Bitonic sort of the whole table by key; empty keys go last.
  for (int k = 2; k <= table; k <<= 1) {
    for (int j = k >> 1; j > 0; j >>= 1) {
      for (int i = rank; i < table; i += g) {
        const int ixj = i ^ j;
        if (ixj > i) {
          const index_t ki = t.keys[i];
          const index_t kx = t.keys[ixj];
          const bool up = (i & k) == 0;
          if ((ki > kx) == up && ki != kx) {
            t.keys[i] = kx;
            t.keys[ixj] = ki;
            const T vi = t.vals[i];
            t.vals[i] = t.vals[ixj];
            t.vals[ixj] = vi;
          }
        }
      }
      grp::sync();
    }
  }
  const offset_t out = c_off[row];
  const std::int64_t nnz = c_off[row + 1] - out;
  for (std::int64_t i = rank; i < nnz; i += g) {
    c_col[out + i] = t.keys[i];
    c_val[out + i] = t.vals[i];
  }
}

// Numeric pass, dense rows: bitmap + dense values of b.cols in global memory
// per block (values zero between rows).
template <typename T>
__global__ void numeric_dense_kernel(const int* __restrict__ rows, std::int64_t n, std::int64_t b_cols,
                                     unsigned* __restrict__ bitmaps, T* __restrict__ dense_vals,
                                     const offset_t* __restrict__ a_off, const index_t* __restrict__ a_col,
                                     const T* __restrict__ a_val, const offset_t* __restrict__ b_off,
                                     const index_t* __restrict__ b_col, const T* __restrict__ b_val,
                                     const offset_t* __restrict__ c_off, index_t* __restrict__ c_col,
                                     T* __restrict__ c_val) {
  extern __shared__ __align__(16) unsigned char smem[];
  using grp = group<false>;
  const int g = grp::size();
  const std::int64_t words = (b_cols + 31) / 32;
  stage<T> st;
  st.b_begin = reinterpret_cast<offset_t*>(smem);
  st.incl = reinterpret_cast<long long*>(smem + 8 * g);
  st.a_val = reinterpret_cast<T*>(smem + 16 * g);
  st.scratch = reinterpret_cast<T*>(smem + 16 * g + sizeof(T) * g);
  dense_table<T> t{bitmaps + static_cast<std::size_t>(blockIdx.x) * words,
                   dense_vals + static_cast<std::size_t>(blockIdx.x) * b_cols};
  for (std::int64_t r = blockIdx.x; r < n; r += gridDim.x) {
    const std::int64_t row = rows[r];
    for_each_product_chunk<false, true, T>(row, a_off, a_col, a_val, b_off, b_col, b_val, st,
                                           [&](bool valid, index_t col, T p, long long remaining) {
                                             int slot = -1;
                                             if (valid) {
                                               bool inserted = false;
                                               slot = t.insert(col, inserted);
                                             }
                                             commit_chunk<false, T>(slot, p, t.vals, st.scratch, remaining);
                                           });
    __syncthreads();
    // Read the row out in column order.
    offset_t out = c_off[row];
    for (std::int64_t w0 = 0; w0 < words; w0 += g) {
      const std::int64_t w = w0 + threadIdx.x;
      unsigned word = w < words ? t.bits[w] : 0u;
      long long total = 0;
      const long long incl = block_inclusive_scan(__popc(word), total);
      offset_t pos = out + incl - __popc(word);
      while (word != 0) {
        const int bit = __ffs(word) - 1;
        const index_t col = static_cast<index_t>(w * 32 + bit);
        c_col[pos] = col;
        c_val[pos] = t.vals[col];
        t.vals[col] = T(0);
        ++pos;
        word &= word - 1;
      }
      if (w < words) t.bits[w] = 0;
      out += total;
    }
    __syncthreads();
  }
}

// Rows whose A row holds one entry: C's row is a scaled copy of B's row.
template <typename T>
__global__ void copy_rows_kernel(const int* __restrict__ rows, std::int64_t n, const offset_t* __restrict__ a_off,
                                 const index_t* __restrict__ a_col, const T* __restrict__ a_val,
                                 const offset_t* __restrict__ b_off, const index_t* __restrict__ b_col,
                                 const T* __restrict__ b_val, const offset_t* __restrict__ c_off,
                                 index_t* __restrict__ c_col, T* __restrict__ c_val) {
  const std::int64_t r = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  if (r >= n) return;
  const int lane = threadIdx.x & 31;
  const std::int64_t row = rows[r];
  const offset_t e = a_off[row];
  const index_t k = a_col[e];
  const T av = a_val[e];
  const offset_t b0 = b_off[k];
  const offset_t b1 = b_off[k + 1];
  const offset_t out = c_off[row] - b0;
  for (offset_t j = b0 + lane; j < b1; j += 32) {
    c_col[out + j] = b_col[j];
    c_val[out + j] = T(0) + av * b_val[j];
  }
}

using ull = unsigned long long;

// Counters: [0] products, [1] nnz bound, [2] max row products, [3] max row
// length, [4] numeric dense candidates, [8 ..) symbolic histogram,
// [8 + max_bins ..) numeric histogram.
constexpr int counter_products = 0;
constexpr int counter_bound = 1;
constexpr int counter_max_products = 2;
constexpr int counter_max_length = 3;
constexpr int counter_dense = 4;
constexpr int counter_symbolic_hist = 8;
constexpr int counter_numeric_hist = 8 + planner::max_bins;
constexpr int counter_count = 8 + 2 * planner::max_bins;

__device__ __forceinline__ ull warp_max(ull v) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) {
    const ull u = __shfl_xor_sync(full_mask, v, d);
    v = u > v ? u : v;
  }
  return v;
}

__device__ __forceinline__ ull warp_add(ull v) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(full_mask, v, d);
  return v;
}

// Per row: products, symbolic bin (into bins when given), and the nnz of rows
// that need no symbolic kernel (into row_nnz when given); totals into counters.
__global__ void stats_kernel(std::int64_t rows, const offset_t* __restrict__ a_off,
                             const index_t* __restrict__ a_col, const offset_t* __restrict__ b_off,
                             std::int64_t b_cols, planner::limits lim, unsigned char* __restrict__ bins,
                             offset_t* __restrict__ row_nnz, ull* __restrict__ counters) {
  __shared__ unsigned hist[planner::max_bins];
  for (int i = threadIdx.x; i < planner::max_bins; i += blockDim.x) hist[i] = 0;
  __syncthreads();
  const int numeric_dense = planner::dense_bin(lim.numeric_max_table);
  ull products = 0, bound = 0, max_products = 0, max_length = 0, dense = 0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t start = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t end = (rows + stride - 1) / stride * stride;  // uniform trip count per warp
  for (std::int64_t i = start; i < end; i += stride) {
    if (i < rows) {
      const offset_t a0 = a_off[i];
      const offset_t a1 = a_off[i + 1];
      std::int64_t p = 0;
      for (offset_t e = a0; e < a1; ++e) {
        const index_t k = a_col[e];
        p += b_off[k + 1] - b_off[k];
      }
      const std::int64_t len = a1 - a0;
      const int bin = planner::symbolic_bin(len, p, b_cols, lim);
      if (bins != nullptr) bins[i] = static_cast<unsigned char>(bin);
      if (row_nnz != nullptr && bin <= planner::bin_copy) row_nnz[i] = p;
      atomicAdd(&hist[bin], 1u);
      const std::int64_t capped = p < b_cols ? p : b_cols;
      products += static_cast<ull>(p);
      bound += static_cast<ull>(capped);
      max_products = static_cast<ull>(p) > max_products ? static_cast<ull>(p) : max_products;
      max_length = static_cast<ull>(len) > max_length ? static_cast<ull>(len) : max_length;
      dense += planner::numeric_bin(len, capped, lim) == numeric_dense ? 1 : 0;
    }
  }
  products = warp_add(products);
  bound = warp_add(bound);
  dense = warp_add(dense);
  max_products = warp_max(max_products);
  max_length = warp_max(max_length);
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(counters + counter_products, products);
    atomicAdd(counters + counter_bound, bound);
    atomicAdd(counters + counter_dense, dense);
    atomicMax(counters + counter_max_products, max_products);
    atomicMax(counters + counter_max_length, max_length);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < planner::max_bins; i += blockDim.x) {
    if (hist[i] != 0) atomicAdd(counters + counter_symbolic_hist + i, static_cast<ull>(hist[i]));
  }
}

// Numeric bins from the exact nnz of each row.
__global__ void numeric_bins_kernel(std::int64_t rows, const offset_t* __restrict__ a_off,
                                    const offset_t* __restrict__ c_off, planner::limits lim,
                                    unsigned char* __restrict__ bins, ull* __restrict__ counters) {
  __shared__ unsigned hist[planner::max_bins];
  for (int i = threadIdx.x; i < planner::max_bins; i += blockDim.x) hist[i] = 0;
  __syncthreads();
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < rows;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const int previous = bins[i];
    // Merge-bin rows (hybrid plan) stay with the method of their symbolic pass.
    const int bin = planner::is_merge_bin(previous)
                        ? previous
                        : planner::numeric_bin(a_off[i + 1] - a_off[i], c_off[i + 1] - c_off[i], lim);
    bins[i] = static_cast<unsigned char>(bin);
    atomicAdd(&hist[bin], 1u);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < planner::max_bins; i += blockDim.x) {
    if (hist[i] != 0) atomicAdd(counters + counter_numeric_hist + i, static_cast<ull>(hist[i]));
  }
}

struct bin_starts {
  long long start[planner::max_bins];
};

// Rows grouped by bin (bin 0, no work, is left out).
__global__ void scatter_kernel(std::int64_t rows, const unsigned char* __restrict__ bins, bin_starts starts,
                               unsigned long long* __restrict__ cursors, int* __restrict__ perm) {
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < rows;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const int bin = bins[i];
    if (bin == planner::bin_none) continue;
    const unsigned long long pos = atomicAdd(cursors + bin, 1ull);
    perm[starts.start[bin] + static_cast<long long>(pos)] = static_cast<int>(i);
  }
}

}  // namespace spgemm::hash::kernels
