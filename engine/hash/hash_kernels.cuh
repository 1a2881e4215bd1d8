// Hash SpGEMM kernels (included by hash.cu only).
//
// Method (per row of A, by one warp or one block; Nagasaka et al. 2017
// "nsparse", Parger et al. 2020 "spECK", Du et al. 2022 "OpSparse" for the
// hash tables per bin; Liu & Vinter 2015 for the binning):
//  * the row's products are enumerated in row order -- A's entries in order,
//    for each the entries of the row of B -- K per thread per round: A's
//    entries are staged in shared memory with the inclusive prefix of their
//    B-row lengths, each thread finds its products by binary search over the
//    stage;
//  * symbolic: insert the column into the table (atomicCAS on int keys only
//    where the slot reads empty), count the columns inserted first, sum over
//    the group -> nnz of the row;
//  * numeric: find-or-insert the slot, then commit the products to their
//    slots in product order: within a warp, __match_any_sync groups the lanes
//    of one slot and the lowest lane adds them in lane order. The warps of a
//    block either own disjoint columns of the row (the job's column ranges,
//    column_range, or an even cut of a narrow row's own span,
//    column_window: each warp enumerates only the part of every row of B in
//    its columns, no barrier) or enumerate the row together and commit one
//    after another.
//    Each entry of C is therefore summed in the order of A's entries,
//    exactly as the sequential CPU loop does: deterministic. Then each entry
//    goes to its place in C by its rank among the row's columns (a bit per
//    column of their span, write_ranked), or, where the span is too wide for
//    the table's memory, the table is sorted by column in registers and
//    the first nnz slots are written out: keys that carry their slot where
//    the span leaves the bits for it (group_bitonic_sort_keys: the values
//    stay in the table), else (key, value) pairs (group_bitonic_sort);
//    empty keys last;
//  * short rows of the warp bins (at most 32 entries of A, a few products
//    per lane): no table at all, short_rows.cuh;
//  * dense rows (beyond the largest shared table): the same with a bitmap and
//    a dense value array of b.cols in global memory per block, the row read
//    out in column order by a block scan over the bitmap words.
// Semirings: the numeric kernels take the semiring S (semiring/semiring_ops.hpp)
// as a functor: products are S's mul, commits S's add, tables and dense
// accumulators start at S's identity. plus_times_ops is the arithmetic
// product, instantiated as it always was.
// Workspace: the per-block dense arrays and the column ranges (sized by the
// host).
// Complexity: O(products) table operations, O(S log^2 S) sort per row of
// table size S; a dense row also reads its b.cols / 32 bitmap words; column
// ranges add two loads per (warp, entry of A's row).
#pragma once

#include <cub/block/block_scan.cuh>
#include <cuda/atomic>

#include <cstdint>
#include <type_traits>

#include "cuda/warp_primitives.cuh"
#include "hash/row_output.cuh"
#include "hash/row_products.cuh"
#include "hash/short_rows.cuh"
#include "planner/row_bins.hpp"
#include "planner/statistics.hpp"
#include "semiring/semiring_ops.hpp"
#include "spgemm/csr.hpp"

namespace spgemm::hash::kernels {

using cuda::block_inclusive_scan;
using cuda::count_in_bin;
using cuda::full_mask;
using cuda::warp_inclusive_scan;
using cuda::warp_sum;

// Shared-memory hash table of a power-of-two size: home slot col * 107 mod
// size (a bijection on the low bits: no collisions at all while B has no
// more columns than the table has slots, where Fibonacci hashing collides),
// linear probing. A probe reads the key first and
// takes the atomic only on an empty slot: keys only ever go from empty to a
// column, so a non-empty key that was read is final.
template <typename T>
struct shared_table {
  index_t* keys;
  T* vals;
  unsigned mask;

  __device__ void clear(int rank, int size, T empty_value) {
    for (unsigned i = rank; i <= mask; i += size) {
      keys[i] = empty_key;
      vals[i] = empty_value;
    }
  }
  __device__ unsigned home(index_t col) const { return (static_cast<unsigned>(col) * 107u) & mask; }
  __device__ int insert(index_t col, bool& inserted) {
    const volatile index_t* seen = keys;
    unsigned s = home(col);
    for (;;) {
      index_t k = seen[s];
      if (k == empty_key) k = atomicCAS(&keys[s], empty_key, col);
      if (k == empty_key) {
        inserted = true;
        return static_cast<int>(s);
      }
      if (k == col) {
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
template <typename T, typename S>
__device__ __forceinline__ void warp_commit(int slot, index_t col, T p, T* vals, T* scratch, S ring) {
  const int lane = threadIdx.x & 31;
  // Columns strictly rising across the lanes (a round inside one row of B,
  // or rows of B that follow each other): one product per slot, no order to
  // keep. Lanes without a product (slot < 0) are the last ones.
  const index_t before = __shfl_up_sync(full_mask, col, 1);
  if (__all_sync(full_mask, lane == 0 || slot < 0 || before < col)) {
    if (slot >= 0) vals[slot] = ring.add(vals[slot], p);
    __syncwarp();  // the next round reads what this one wrote
    return;
  }
  scratch[lane] = p;
  __syncwarp();
  const unsigned peers = __match_any_sync(full_mask, slot);
  if (slot >= 0 && lane == __ffs(peers) - 1) {
    T acc = vals[slot];
    unsigned m = peers;
    while (m != 0) {
      acc = ring.add(acc, scratch[__ffs(m) - 1]);
      m &= m - 1;
    }
    vals[slot] = acc;
  }
  __syncwarp();
}

// Inserts the valid columns of one round; returns how many were new.
template <int K, typename Table>
__device__ __forceinline__ int insert_all(Table& t, const bool (&valid)[K], const index_t (&col)[K]) {
  int added = 0;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    if (valid[k]) {
      bool inserted = false;
      (void)t.insert(col[k], inserted);
      added += inserted ? 1 : 0;
    }
  }
  return added;
}

// Symbolic warp rows try the short-row path (short_rows.cuh) in tables up
// to this size: rows of at most 102 products where B has more columns
// (symbolic_bin), short unless they have more than 32 entries.
constexpr int short_row_max_symbolic_table = 128;

// Shared memory of one group's symbolic table of `table` slots: staging and keys.
__host__ __device__ constexpr std::size_t symbolic_group_bytes(int group_threads, int table) {
  return static_cast<std::size_t>(group_threads) * 16 + 4 * static_cast<std::size_t>(table);
}

// Symbolic pass of one row with a shared table of `table` slots at `base`
// (symbolic_group_bytes): the row's nnz into row_nnz.
template <bool Warp>
__device__ __forceinline__ void symbolic_table_row(std::int64_t row, unsigned char* base, int table,
                                                   const offset_t* __restrict__ a_off,
                                                   const index_t* __restrict__ a_col,
                                                   const offset_t* __restrict__ b_off,
                                                   const index_t* __restrict__ b_col, offset_t* __restrict__ row_nnz) {
  if constexpr (Warp) {
    if (table <= short_row_max_symbolic_table &&
        symbolic_short_row(row, a_off, a_col, b_off, b_col, reinterpret_cast<index_t*>(base), row_nnz)) {
      return;
    }
  }
  using grp = group<Warp>;
  const int g = grp::size();
  stage<float> st{reinterpret_cast<offset_t*>(base), reinterpret_cast<long long*>(base + 8 * g), nullptr, nullptr};
  shared_table<float> t{reinterpret_cast<index_t*>(base + 16 * g), nullptr, static_cast<unsigned>(table - 1)};
  const int rank = grp::rank();
  for (unsigned i = rank; i < static_cast<unsigned>(table); i += g) t.keys[i] = empty_key;
  grp::sync();
  long long count = 0;
  for_each_product_chunk<Warp, false, symbolic_batch, float>(row, a_off, a_col, static_cast<const float*>(nullptr),
                                                             b_off, b_col, static_cast<const float*>(nullptr), st, whole_rows{},
                                                             [&](const auto& valid, const auto& col, const auto&, const auto&) {
                                                               count += insert_all(t, valid, col);
                                                             });
  count = grp::sum(count);
  if (rank == 0) row_nnz[row] = count;
}

// Symbolic pass, shared tables of `table` slots (one bin): nnz of each row
// into row_nnz. Warps: a row per warp; blocks: a row per block.
template <bool Warp>
__global__ void symbolic_shared_kernel(const int* __restrict__ rows, std::int64_t n, int table,
                                       const offset_t* __restrict__ a_off, const index_t* __restrict__ a_col,
                                       const offset_t* __restrict__ b_off, const index_t* __restrict__ b_col,
                                       offset_t* __restrict__ row_nnz) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int groups = Warp ? static_cast<int>(blockDim.x >> 5) : 1;
  const int gi = Warp ? static_cast<int>(threadIdx.x >> 5) : 0;
  const std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * groups + gi;
  if (r >= n) return;  // warp groups only: a block group has r < n
  const int g = Warp ? 32 : static_cast<int>(blockDim.x);
  symbolic_table_row<Warp>(rows[r], smem + static_cast<std::size_t>(gi) * symbolic_group_bytes(g, table), table,
                           a_off, a_col, b_off, b_col, row_nnz);
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
    for_each_product_chunk<false, false, symbolic_batch, float>(
        row, a_off, a_col, static_cast<const float*>(nullptr), b_off, b_col, static_cast<const float*>(nullptr), st,
        whole_rows{},
        [&](const auto& valid, const auto& col, const auto&, const auto&) { count += insert_all(t, valid, col); });
    count = grp::sum(count);  // synchronizes the block
    if (threadIdx.x == 0) row_nnz[row] = count;
    for (std::int64_t w = threadIdx.x; w < words; w += g) bits[w] = 0;
    __syncthreads();
  }
}

// The slot of every valid column of one round (inserted where new); -1
// for the invalid ones.
template <int K, typename Table>
__device__ __forceinline__ void find_slots(Table& t, const bool (&valid)[K], const index_t (&col)[K], int (&slot)[K]) {
#pragma unroll
  for (int k = 0; k < K; ++k) {
    slot[k] = -1;
    if (valid[k]) {
      bool inserted = false;
      slot[k] = t.insert(col[k], inserted);
    }
  }
}

// Finds (or inserts) the slot of every valid product of one round of a
// warp, then commits the products in product order: round k before round
// k + 1 (for_each_product_chunk's layout), lanes in order (warp_commit).
template <int K, typename T, typename Table, typename S>
__device__ __forceinline__ void accumulate_round(Table& t, const bool (&valid)[K], const index_t (&col)[K],
                                                 const T (&p)[K], T* scratch, S ring) {
  int slot[K];
  find_slots(t, valid, col, slot);
#pragma unroll
  for (int k = 0; k < K; ++k) warp_commit(slot[k], col[k], p[k], t.vals, scratch, ring);
}

// The same for the warps of a block enumerating whole rows together
// (for_each_product_chunk<false>): every warp finds its slots at once, then
// the warps commit one after another, so each entry of C is still summed in
// product order.
template <int K, typename T, typename Table, typename S>
__device__ __forceinline__ void accumulate_block_round(Table& t, const bool (&valid)[K], const index_t (&col)[K],
                                                       const T (&p)[K], T* scratch, S ring) {
  const int warp = static_cast<int>(threadIdx.x >> 5);
  int slot[K];
  find_slots(t, valid, col, slot);
  // Warps past the last product of the round have nothing to commit; the
  // first lane of a warp holds its first product.
  const int active = __syncthreads_count(valid[0] && (threadIdx.x & 31) == 0);
  for (int w = 0; w < active; ++w) {
    if (warp == w) {
#pragma unroll
      for (int k = 0; k < K; ++k) warp_commit(slot[k], col[k], p[k], t.vals, scratch + 32 * w, ring);
    }
    __syncthreads();
  }
}

// Shared memory of one group's numeric table of `table` slots: staging,
// commit scratch, keys and values.
template <typename T>
__host__ __device__ constexpr std::size_t numeric_group_bytes(int group_threads, int table) {
  return static_cast<std::size_t>(group_threads) * (16 + 2 * sizeof(T)) +
         static_cast<std::size_t>(table) * (4 + sizeof(T));
}

// The dynamic shared memory of the launch, in bytes.
__device__ __forceinline__ std::size_t dynamic_shared_bytes() {
  unsigned bytes = 0;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
  return bytes;
}

// Numeric pass of one row with a shared table of ITEMS * group-size slots at
// `base` (numeric_group_bytes): products, sort, write-out.
template <bool Warp, int ITEMS, typename T, typename S>
__device__ __forceinline__ void numeric_table_row(std::int64_t row, unsigned char* base, block_split split,
                                                  const offset_t* __restrict__ a_off,
                                                  const index_t* __restrict__ a_col, const T* __restrict__ a_val,
                                                  const offset_t* __restrict__ b_off,
                                                  const index_t* __restrict__ b_col, const T* __restrict__ b_val,
                                                  const offset_t* __restrict__ c_off, index_t* __restrict__ c_col,
                                                  T* __restrict__ c_val, S ring) {
  if constexpr (Warp) {
    constexpr int P = short_row_items<T>(numeric_group_bytes<T>(32, 32 * ITEMS));
    if constexpr (P > 0 && ITEMS <= 4) {
      if (numeric_short_row<P, T>(row, split.b_cols, a_off, a_col, a_val, b_off, b_col, b_val, base, c_off, c_col,
                                  c_val, ring)) {
        return;
      }
    }
  }
  using grp = group<Warp>;
  constexpr int K = Warp ? warp_numeric_batch : ranged_numeric_batch;
  const int g = grp::size();
  const int table = ITEMS * g;
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
  t.clear(rank, g, ring.template identity<T>());
  grp::sync();
  const auto visit = [&](const stage<T>& wst) {
    return [&t, wst, ring](const auto& valid, const auto& col, const auto& p, const auto&) {
      accumulate_round<K, T>(t, valid, col, p, wst.scratch, ring);
    };
  };
  if constexpr (Warp) {
    for_each_product_chunk<true, true, K, T>(row, a_off, a_col, a_val, b_off, b_col, b_val, st, whole_rows{}, visit(st),
                                             ring);
  } else if (split.pos != nullptr) {
    const int warp = static_cast<int>(threadIdx.x >> 5);
    const int warps = static_cast<int>(blockDim.x >> 5);
    const stage<T> wst = st.warp_slice(warp);
    index_t lo = 0;
    index_t hi = 0;
    row_column_span(row, a_off, a_col, b_off, b_col, reinterpret_cast<int*>(st.scratch), lo, hi);
    const std::int64_t span = static_cast<std::int64_t>(hi) - lo + 1;
    if (planner::split_by_row_span(span, split.b_cols)) {
      const column_window mine{b_col, static_cast<index_t>(lo + span * warp / warps),
                               static_cast<index_t>(lo + span * (warp + 1) / warps)};
      for_each_product_chunk<true, true, K, T>(row, a_off, a_col, a_val, b_off, b_col, b_val, wst, mine, visit(wst),
                                               ring);
    } else {
      for_each_product_chunk<true, true, K, T>(row, a_off, a_col, a_val, b_off, b_col, b_val, wst,
                                               warp_column_range(split.pos, warp, warps), visit(wst), ring);
    }
  } else {
    for_each_product_chunk<false, true, K, T>(
        row, a_off, a_col, a_val, b_off, b_col, b_val, st, whole_rows{},
        [&](const auto& valid, const auto& col, const auto& p, const auto&) {
          accumulate_block_round<K, T>(t, valid, col, p, st.scratch, ring);
        },
        ring);
  }
  grp::sync();
  // Place each entry by its rank among the row's columns where their span
  // is narrow enough, else sort the whole table by key (empty keys last) in
  // registers and write the first nnz entries out through shared memory
  // (coalesced).
  index_t keys[ITEMS];
  T vals[ITEMS];
  int lo = 0x7fffffff;
  int hi = -1;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {  // any slot order will do: read conflict-free
    keys[i] = t.keys[i * g + rank];
    vals[i] = t.vals[i * g + rank];
    if (keys[i] != empty_key) {
      lo = min(lo, keys[i]);
      hi = max(hi, keys[i]);
    }
  }
  group_min_max<Warp>(lo, hi, reinterpret_cast<int*>(st.incl));
  unsigned char* const table_storage = reinterpret_cast<unsigned char*>(t.vals);
  // A block's row owns the block's shared memory from the table on, which
  // may hold more than the table (planner::config_for_table).
  const std::size_t table_bytes = Warp ? reinterpret_cast<unsigned char*>(t.keys + table) - table_storage
                                       : dynamic_shared_bytes() - static_cast<std::size_t>(table_storage - base);
  if (write_ranked<Warp, ITEMS, T>(keys, vals, lo, hi, table_storage, table_bytes, c_off[row], c_col, c_val)) return;
  const offset_t out = c_off[row];
  const int nnz = static_cast<int>(c_off[row + 1] - out);
  const int slot_bits = __ffs(table) - 1;
  if (slot_keys_fit(static_cast<long long>(hi) - lo, slot_bits)) {
    // Sort the keys with their slots; the values stay in the table.
    unsigned packed[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      packed[i] = keys[i] == empty_key ? empty_slot_key
                                       : (static_cast<unsigned>(keys[i] - lo) << slot_bits) | static_cast<unsigned>(i * g + rank);
    }
    group_bitonic_sort_keys<Warp, ITEMS>(packed, reinterpret_cast<unsigned*>(t.keys));
    grp::sync();
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) t.keys[swizzled<index_t>(rank * ITEMS + i)] = static_cast<index_t>(packed[i]);
    grp::sync();
    const unsigned slot_mask = static_cast<unsigned>(table - 1);
    for (int i = rank; i < nnz; i += g) {
      const unsigned p = static_cast<unsigned>(t.keys[swizzled<index_t>(i)]);
      c_col[out + i] = static_cast<index_t>(p >> slot_bits) + lo;
      c_val[out + i] = t.vals[p & slot_mask];
    }
    return;
  }
  group_bitonic_sort<Warp, ITEMS, T>(keys, vals, t.keys, t.vals);
  grp::sync();
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int e = rank * ITEMS + i;
    t.keys[swizzled<index_t>(e)] = keys[i];
    t.vals[swizzled<T>(e)] = vals[i];
  }
  grp::sync();
  for (int i = rank; i < nnz; i += g) {
    c_col[out + i] = t.keys[swizzled<index_t>(i)];
    c_val[out + i] = t.vals[swizzled<T>(i)];
  }
}

// Calls run(std::integral_constant<int, I>) with I = items (a power of two,
// 1 .. MaxItems): a kernel instantiates the sorts of its largest tables only.
template <int MaxItems, typename Run>
__device__ __forceinline__ void with_items(int items, Run&& run) {
  if constexpr (MaxItems >= 16) {
    if (items >= 16) return run(std::integral_constant<int, 16>{});
  }
  if constexpr (MaxItems >= 8) {
    if (items >= 8) return run(std::integral_constant<int, 8>{});
  }
  if constexpr (MaxItems >= 4) {
    if (items >= 4) return run(std::integral_constant<int, 4>{});
  }
  if constexpr (MaxItems >= 2) {
    if (items >= 2) return run(std::integral_constant<int, 2>{});
  }
  run(std::integral_constant<int, 1>{});
}

// Numeric pass, one warp table bin: one warp per row, eight per block, a
// table of ITEMS * 32 slots each. A kernel per table size: the registers of
// the largest table's sort (ITEMS keys and values a lane) would otherwise
// hold the small tables' kernels to three blocks an SM.
template <int ITEMS, typename T, typename S>
__global__ void __launch_bounds__(256)
    numeric_warp_tables_kernel(const int* __restrict__ rows, std::int64_t n, std::int64_t b_cols,
                               const offset_t* __restrict__ a_off, const index_t* __restrict__ a_col,
                               const T* __restrict__ a_val, const offset_t* __restrict__ b_off,
                               const index_t* __restrict__ b_col, const T* __restrict__ b_val,
                               const offset_t* __restrict__ c_off, index_t* __restrict__ c_col,
                               T* __restrict__ c_val, S ring) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int gi = static_cast<int>(threadIdx.x >> 5);
  const std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * (blockDim.x >> 5) + gi;
  if (r >= n) return;
  numeric_table_row<true, ITEMS, T>(rows[r], smem + static_cast<std::size_t>(gi) * numeric_group_bytes<T>(32, 32 * ITEMS),
                                    block_split{nullptr, b_cols}, a_off, a_col, a_val, b_off, b_col, b_val, c_off, c_col,
                                    c_val, ring);
}

// Numeric pass, block tables of ITEMS * block-size slots: one block per row.
template <int ITEMS, typename T, typename S>
__global__ void __launch_bounds__(1024)
    numeric_block_table_kernel(const int* __restrict__ rows, block_split split,
                               const offset_t* __restrict__ a_off, const index_t* __restrict__ a_col,
                               const T* __restrict__ a_val, const offset_t* __restrict__ b_off,
                               const index_t* __restrict__ b_col, const T* __restrict__ b_val,
                               const offset_t* __restrict__ c_off, index_t* __restrict__ c_col,
                               T* __restrict__ c_val, S ring) {
  extern __shared__ __align__(16) unsigned char smem[];
  numeric_table_row<false, ITEMS, T>(rows[blockIdx.x], smem, split, a_off, a_col, a_val, b_off, b_col, b_val, c_off,
                                     c_col, c_val, ring);
}

// Numeric pass, dense rows: bitmap + dense values of b.cols in global memory
// per block (values at the semiring's identity between rows).
template <typename T, typename S>
__global__ void numeric_dense_kernel(const int* __restrict__ rows, std::int64_t n, std::int64_t b_cols,
                                     const int* __restrict__ pos, unsigned* __restrict__ bitmaps,
                                     T* __restrict__ dense_vals,
                                     const offset_t* __restrict__ a_off, const index_t* __restrict__ a_col,
                                     const T* __restrict__ a_val, const offset_t* __restrict__ b_off,
                                     const index_t* __restrict__ b_col, const T* __restrict__ b_val,
                                     const offset_t* __restrict__ c_off, index_t* __restrict__ c_col,
                                     T* __restrict__ c_val, S ring) {
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
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const stage<T> wst = st.warp_slice(warp);
  for (std::int64_t r = blockIdx.x; r < n; r += gridDim.x) {
    const std::int64_t row = rows[r];
    if (pos != nullptr) {
      for_each_product_chunk<true, true, ranged_numeric_batch, T>(
          row, a_off, a_col, a_val, b_off, b_col, b_val, wst,
          warp_column_range(pos, warp, static_cast<int>(blockDim.x >> 5)),
          [&](const auto& valid, const auto& col, const auto& p, const auto&) {
            accumulate_round<ranged_numeric_batch, T>(t, valid, col, p, wst.scratch, ring);
          },
          ring);
    } else {
      for_each_product_chunk<false, true, ranged_numeric_batch, T>(
          row, a_off, a_col, a_val, b_off, b_col, b_val, st, whole_rows{},
          [&](const auto& valid, const auto& col, const auto& p, const auto&) {
            accumulate_block_round<ranged_numeric_batch, T>(t, valid, col, p, st.scratch, ring);
          },
          ring);
    }
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
        t.vals[col] = ring.template identity<T>();
        ++pos;
        word &= word - 1;
      }
      if (w < words) t.bits[w] = 0;
      out += total;
    }
    __syncthreads();
  }
}

// A row whose A row holds one entry, by one warp: C's row is a scaled copy
// of B's row.
template <typename T, typename S>
__device__ __forceinline__ void copy_row(std::int64_t row, const offset_t* __restrict__ a_off,
                                         const index_t* __restrict__ a_col, const T* __restrict__ a_val,
                                         const offset_t* __restrict__ b_off, const index_t* __restrict__ b_col,
                                         const T* __restrict__ b_val, const offset_t* __restrict__ c_off,
                                         index_t* __restrict__ c_col, T* __restrict__ c_val, S ring) {
  const int lane = threadIdx.x & 31;
  const offset_t e = a_off[row];
  const index_t k = a_col[e];
  const T av = a_val[e];
  const offset_t b0 = b_off[k];
  const offset_t b1 = b_off[k + 1];
  const offset_t out = c_off[row] - b0;
  for (offset_t j = b0 + lane; j < b1; j += 32) {
    c_col[out + j] = b_col[j];
    c_val[out + j] = ring.add(ring.template identity<T>(), ring.mul(av, b_val[j]));
  }
}

// The copy rows: a warp per row.
template <typename T, typename S>
__global__ void copy_rows_kernel(const int* __restrict__ rows, std::int64_t n, const offset_t* __restrict__ a_off,
                                 const index_t* __restrict__ a_col, const T* __restrict__ a_val,
                                 const offset_t* __restrict__ b_off, const index_t* __restrict__ b_col,
                                 const T* __restrict__ b_val, const offset_t* __restrict__ c_off,
                                 index_t* __restrict__ c_col, T* __restrict__ c_val, S ring) {
  const std::int64_t r = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  if (r >= n) return;
  copy_row(rows[r], a_off, a_col, a_val, b_off, b_col, b_val, c_off, c_col, c_val, ring);
}

// --- Fused launches (small products, planner::fuse_table_bins) ---------------
// The table bins of a pass (and, numeric, the copy rows) in one launch of
// planner::fused_block_threads threads: consecutive runs of blocks, one run
// per bin, each block taking a row per warp, a row for the whole block, or
// a copied row per warp. Dynamic shared memory: the largest of the bins'.
enum class fused_mode : int { warp_rows, block_rows, copy_rows };
constexpr int max_fused_bins = 8;
struct fused_bins {
  int count = 0;
  unsigned first_block[max_fused_bins + 1] = {};  // bin j: blocks [first_block[j], first_block[j + 1])
  const int* rows[max_fused_bins] = {};
  long long n[max_fused_bins] = {};
  int table[max_fused_bins] = {};
  fused_mode mode[max_fused_bins] = {};
};

// This block's bin, and the block's index within it.
__device__ __forceinline__ int fused_bin_of(const fused_bins& f, std::int64_t& local) {
  int j = 0;
  while (j + 1 < f.count && blockIdx.x >= f.first_block[j + 1]) ++j;
  local = blockIdx.x - f.first_block[j];
  return j;
}

__global__ void __launch_bounds__(planner::fused_block_threads)
    symbolic_fused_kernel(fused_bins f, const offset_t* __restrict__ a_off, const index_t* __restrict__ a_col,
                          const offset_t* __restrict__ b_off, const index_t* __restrict__ b_col,
                          offset_t* __restrict__ row_nnz) {
  extern __shared__ __align__(16) unsigned char smem[];
  std::int64_t local = 0;
  const int j = fused_bin_of(f, local);
  const int table = f.table[j];
  if (f.mode[j] == fused_mode::block_rows) {
    symbolic_table_row<false>(f.rows[j][local], smem, table, a_off, a_col, b_off, b_col, row_nnz);
    return;
  }
  const int gi = static_cast<int>(threadIdx.x >> 5);
  const std::int64_t r = local * (blockDim.x >> 5) + gi;
  if (r >= f.n[j]) return;
  symbolic_table_row<true>(f.rows[j][r], smem + static_cast<std::size_t>(gi) * symbolic_group_bytes(32, table), table,
                           a_off, a_col, b_off, b_col, row_nnz);
}

// MaxItems: the most slots per thread (warp rows: table / 32, block rows:
// table / fused_block_threads) of the launch's bins. At least three blocks an
// SM: left free, ptxas gives the sorts of 16 slots a lane 128 registers (two).
template <int MaxItems, typename T, typename S>
__global__ void __launch_bounds__(planner::fused_block_threads, 3)
    numeric_fused_kernel(fused_bins f, std::int64_t b_cols, const offset_t* __restrict__ a_off,
                         const index_t* __restrict__ a_col, const T* __restrict__ a_val,
                         const offset_t* __restrict__ b_off, const index_t* __restrict__ b_col,
                         const T* __restrict__ b_val,
                         const offset_t* __restrict__ c_off, index_t* __restrict__ c_col, T* __restrict__ c_val,
                         S ring) {
  extern __shared__ __align__(16) unsigned char smem[];
  std::int64_t local = 0;
  const int j = fused_bin_of(f, local);
  const int table = f.table[j];
  if (f.mode[j] == fused_mode::block_rows) {
    with_items<MaxItems>(table / static_cast<int>(blockDim.x), [&](auto items) {
      numeric_table_row<false, decltype(items)::value, T>(f.rows[j][local], smem, block_split{}, a_off, a_col, a_val,
                                                          b_off, b_col, b_val, c_off, c_col, c_val, ring);
    });
    return;
  }
  const int gi = static_cast<int>(threadIdx.x >> 5);
  const std::int64_t r = local * (blockDim.x >> 5) + gi;
  if (r >= f.n[j]) return;
  if (f.mode[j] == fused_mode::copy_rows) {
    copy_row(f.rows[j][r], a_off, a_col, a_val, b_off, b_col, b_val, c_off, c_col, c_val, ring);
    return;
  }
  unsigned char* const base = smem + static_cast<std::size_t>(gi) * numeric_group_bytes<T>(32, table);
  with_items<MaxItems>(table / 32, [&](auto items) {
    numeric_table_row<true, decltype(items)::value, T>(f.rows[j][r], base, block_split{nullptr, b_cols}, a_off, a_col,
                                                       a_val, b_off, b_col, b_val, c_off, c_col, c_val, ring);
  });
}

using ull = unsigned long long;

// The job's counters: the statistics pass's (planner::stats_counter), then
// the scan's tile tickets, nnz(C), the segment items taken and the numeric
// histogram.
constexpr int counter_scan_ticket = planner::stats_counter::count;
constexpr int counter_nnz = counter_scan_ticket + 1;
constexpr int counter_segment_item = counter_scan_ticket + 2;
constexpr int counter_numeric_hist = counter_scan_ticket + 3;
constexpr int counter_count = counter_numeric_hist + planner::max_bins;

// Numeric bins and C's row offsets in one pass (single-pass scan with
// decoupled look-back, Merrill & Garland 2016: one launch where a bins kernel
// and a device-wide scan took three): per row its numeric bin from its exact
// nnz (segment rows keep their symbolic bin) into bins and the numeric
// histogram; the row nnz in c_off
// (rows + 1 entries, the last ignored) scanned in place to the exclusive
// offsets; nnz(C) into counters[counter_nnz]. tile_state: scan_tiles(rows + 1)
// zeroes; tiles are numbered by a ticket (counters[counter_scan_ticket],
// zero at launch) in the order blocks start, so every tile looked back on
// is running or done.
constexpr int scan_threads = 256;
constexpr int scan_items = 8;
constexpr int scan_tile = scan_threads * scan_items;
__host__ __device__ constexpr std::int64_t scan_tiles(std::int64_t items) {
  return (items + scan_tile - 1) / scan_tile;
}
// Tile state: flag (bits 62-63; 1: the tile's own sum, 2: inclusive prefix) | value.
constexpr ull scan_flag_aggregate = 1ull << 62;
constexpr ull scan_flag_inclusive = 2ull << 62;
constexpr ull scan_value_mask = scan_flag_aggregate - 1;

__global__ void __launch_bounds__(scan_threads)
    numeric_scan_kernel(std::int64_t rows, std::int64_t b_cols, const offset_t* __restrict__ a_off,
                        offset_t* __restrict__ c_off, planner::limits lim, unsigned char* __restrict__ bins,
                        ull* __restrict__ counters, ull* __restrict__ tile_state) {
  using block_scan = cub::BlockScan<long long, scan_threads>;
  __shared__ typename block_scan::TempStorage scan_storage;
  __shared__ long long s_rows[scan_tile];  // the tile's nnz, then its offsets
  __shared__ unsigned hist[planner::max_bins];
  __shared__ unsigned long long s_tile;
  __shared__ long long s_prefix;
  for (int i = threadIdx.x; i < planner::max_bins; i += blockDim.x) hist[i] = 0;
  if (threadIdx.x == 0) s_tile = atomicAdd(&counters[counter_scan_ticket], 1ull);
  __syncthreads();
  const auto tile = static_cast<std::int64_t>(s_tile);
  const std::int64_t first = tile * scan_tile;
  // The rows' bins, coalesced (row first + i * scan_threads + t), every load
  // issued before any is used, so that a thread's rows do not wait on their
  // loads one after another.
  long long row_nnz[scan_items];
  offset_t a_begin[scan_items];
  offset_t a_end[scan_items];
  int previous[scan_items];
#pragma unroll
  for (int i = 0; i < scan_items; ++i) {
    const std::int64_t r = first + i * scan_threads + threadIdx.x;
    const bool row = r < rows;
    row_nnz[i] = row ? c_off[r] : 0;
    a_begin[i] = row ? a_off[r] : 0;
    a_end[i] = row ? a_off[r + 1] : 0;
    previous[i] = row ? bins[r] : planner::bin_none;
  }
#pragma unroll
  for (int i = 0; i < scan_items; ++i) {
    const std::int64_t r = first + i * scan_threads + threadIdx.x;
    s_rows[i * scan_threads + threadIdx.x] = row_nnz[i];
    int bin = planner::bin_none;
    if (r < rows) {
      bin = planner::numeric_bin(previous[i], a_end[i] - a_begin[i], row_nnz[i], b_cols, lim);
      bins[r] = static_cast<unsigned char>(bin);
    }
    (void)count_in_bin(hist, bin, r < rows);
  }
  __syncthreads();
  // Thread t sums rows first + t * scan_items ...
  long long nnz[scan_items];
  long long sum = 0;
#pragma unroll
  for (int i = 0; i < scan_items; ++i) {
    nnz[i] = s_rows[threadIdx.x * scan_items + i];
    sum += nnz[i];
  }
  long long before = 0;
  long long total = 0;
  block_scan(scan_storage).ExclusiveSum(sum, before, total);

  if (threadIdx.x < 32) {
    const int lane = static_cast<int>(threadIdx.x);
    ::cuda::atomic_ref<ull, ::cuda::thread_scope_device> own(tile_state[tile]);
    if (tile == 0) {
      if (lane == 0) {
        own.store(scan_flag_inclusive | static_cast<ull>(total), ::cuda::memory_order_relaxed);
        s_prefix = 0;
      }
    } else {
      if (lane == 0) own.store(scan_flag_aggregate | static_cast<ull>(total), ::cuda::memory_order_relaxed);
      long long exclusive = 0;
      std::int64_t window_end = tile;  // lane l looks at tile window_end - 32 + l
      for (;;) {
        const std::int64_t pred = window_end - 32 + lane;
        ull state = scan_flag_inclusive;  // before tile 0: an inclusive prefix of 0
        if (pred >= 0) {
          ::cuda::atomic_ref<ull, ::cuda::thread_scope_device> other(tile_state[pred]);
          do {
            state = other.load(::cuda::memory_order_relaxed);
          } while ((state >> 62) == 0);
        }
        // Sum from the nearest inclusive prefix (or the whole window) up.
        const unsigned inclusive = __ballot_sync(full_mask, (state >> 62) == 2);
        const int from = inclusive != 0 ? 31 - __clz(inclusive) : 0;
        exclusive += warp_sum(lane >= from ? static_cast<long long>(state & scan_value_mask) : 0);
        if (inclusive != 0) break;
        window_end -= 32;
      }
      if (lane == 0) {
        own.store(scan_flag_inclusive | static_cast<ull>(exclusive + total), ::cuda::memory_order_relaxed);
        s_prefix = exclusive;
      }
    }
  }
  __syncthreads();
  long long at = s_prefix + before;
#pragma unroll
  for (int i = 0; i < scan_items; ++i) {
    s_rows[threadIdx.x * scan_items + i] = at;
    at += nnz[i];
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < scan_items; ++i) {
    const std::int64_t r = first + i * scan_threads + threadIdx.x;
    const long long offset = s_rows[i * scan_threads + threadIdx.x];
    if (r <= rows) c_off[r] = offset;
    if (r == rows) counters[counter_nnz] = static_cast<ull>(offset);
  }
  for (int i = threadIdx.x; i < planner::max_bins; i += blockDim.x) {
    if (hist[i] != 0) atomicAdd(counters + counter_numeric_hist + i, static_cast<ull>(hist[i]));
  }
}

struct bin_starts {
  long long start[planner::max_bins];
};

// Rows grouped by bin (bin 0, no work, is left out). A block claims room for
// its rows of each bin with one atomic per bin (an atomic per row would
// serialize on the cursor of the bin most rows share); the order within a
// bin does not matter.
__global__ void scatter_kernel(std::int64_t rows, const unsigned char* __restrict__ bins, bin_starts starts,
                               unsigned long long* __restrict__ cursors, int* __restrict__ perm) {
  __shared__ unsigned count[planner::max_bins];
  __shared__ unsigned long long base[planner::max_bins];
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x; first < rows; first += stride) {
    for (int i = threadIdx.x; i < planner::max_bins; i += blockDim.x) count[i] = 0;
    __syncthreads();
    const std::int64_t i = first + threadIdx.x;
    const int bin = i < rows ? bins[i] : planner::bin_none;
    const unsigned rank = count_in_bin(count, bin, bin != planner::bin_none);
    __syncthreads();
    for (int b = threadIdx.x; b < planner::max_bins; b += blockDim.x) {
      if (count[b] != 0) base[b] = atomicAdd(cursors + b, static_cast<unsigned long long>(count[b]));
    }
    __syncthreads();
    if (bin != planner::bin_none) perm[starts.start[bin] + static_cast<long long>(base[bin] + rank)] = static_cast<int>(i);
    __syncthreads();
  }
}

// Column ranges of the ranged numeric kernels: split_buckets equal-width
// buckets of B's columns are counted, and range r starts at the bucket that
// holds the (r / column_ranges)-th entry of B in column order, so every range
// carries about the same share of B's entries (a proxy for the products).
constexpr int split_buckets = 4096;

__host__ __device__ inline std::int64_t bucket_first_column(std::int64_t bucket, std::int64_t b_cols) {
  return (bucket * b_cols + split_buckets - 1) / split_buckets;
}

__global__ void column_histogram_kernel(std::int64_t nnz, const index_t* __restrict__ b_col, std::int64_t b_cols,
                                        ull* __restrict__ hist) {
  __shared__ unsigned h[split_buckets];
  for (int i = threadIdx.x; i < split_buckets; i += blockDim.x) h[i] = 0;
  __syncthreads();
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < nnz;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    atomicAdd(&h[static_cast<std::int64_t>(b_col[e]) * split_buckets / b_cols], 1u);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < split_buckets; i += blockDim.x) {
    if (h[i] != 0) atomicAdd(hist + i, static_cast<ull>(h[i]));
  }
}

// One block of split_buckets / 4 threads: splits[0 .. column_ranges].
__global__ void choose_splits_kernel(const ull* __restrict__ hist, std::int64_t b_cols, index_t* __restrict__ splits) {
  constexpr int per = 4;
  const int first = static_cast<int>(threadIdx.x) * per;
  long long mine = 0;
  for (int i = 0; i < per; ++i) mine += static_cast<long long>(hist[first + i]);
  long long total = 0;
  long long before = block_inclusive_scan(mine, total) - mine;
  if (threadIdx.x == 0) {
    splits[0] = 0;
    splits[column_ranges] = static_cast<index_t>(b_cols);
  }
  // Range r starts at entry total * r / column_ranges: at the bucket that
  // holds it. A bucket visits only its own ranges (a loop over all ranges per
  // bucket keeps the one block busy).
  for (int i = 0; i < per && total > 0; ++i) {
    const long long after = before + static_cast<long long>(hist[first + i]);
    const long long from = before * column_ranges / total;  // no range before it starts in this bucket
    for (long long r = from > 1 ? from : 1; r < column_ranges; ++r) {
      const long long target = total * r / column_ranges;
      if (target >= after) break;
      if (target >= before) splits[r] = static_cast<index_t>(bucket_first_column(first + i, b_cols));
    }
    before = after;
  }
  if (total == 0 && threadIdx.x == 0) {  // no entries: any split will do
    for (int r = 1; r < column_ranges; ++r) splits[r] = static_cast<index_t>(b_cols * r / column_ranges);
  }
}

// The first column of each range: a table of column_ranges + 1 splits ...
struct split_table {
  const index_t* splits;
  __device__ index_t operator()(int r) const { return splits[r]; }
};
// ... or every `width` columns (the job's segments).
struct split_segments {
  int width;
  __device__ index_t operator()(int r) const { return static_cast<index_t>(r) * width; }
};

// pos[k * stride + r]: where range r (first column split(r)) starts within
// row k of B, r = 0 .. stride - 1.
template <typename Split>
__global__ void range_positions_kernel(std::int64_t b_rows, const offset_t* __restrict__ b_off,
                                       const index_t* __restrict__ b_col, int stride, Split split,
                                       int* __restrict__ pos) {
  const std::int64_t items = b_rows * stride;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < items;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t k = i / stride;
    const int r = static_cast<int>(i - k * stride);
    const index_t first_column = split(r);
    offset_t lo = b_off[k];
    offset_t hi = b_off[k + 1];
    const offset_t start = lo;
    while (lo < hi) {  // first entry with column >= split
      const offset_t mid = lo + (hi - lo) / 2;
      if (b_col[mid] < first_column) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    pos[i] = static_cast<int>(lo - start);
  }
}

// The dense accumulators at a semiring's identity (where it is not zero bits).
template <typename T>
__global__ void fill_kernel(T* __restrict__ out, std::int64_t n, T value) {
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    out[i] = value;
  }
}

}  // namespace spgemm::hash::kernels
