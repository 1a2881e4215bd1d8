// bhSPARSE kernels (included by bhsparse.cu only).
//
// Method: Liu & Vinter, "A framework for general sparse matrix-matrix
// multiplication on GPUs and heterogeneous processors" (JPDC 2015), section
// 4.1: four stages.
//  (1) upper bound: the products u of every row (its nnz at most), a group of
//      lanes per row; the row's bin (bhsparse_tuning.hpp) and its size in the
//      temporary matrix C~ (min(u, cols of B) for bins 1 .. 36, none for the
//      long rows, which keep their lists apart);
//  (2) binning: the rows sorted by bin (bhsparse.cu, CUB's radix sort on the
//      bin byte), C~ allocated from the scan of the sizes;
//  (3) computing, per bin group: one product copied (bin 1); the heap method,
//      a thread per row (bins 2 .. 32: heap_method.hpp); bitonic ESC in
//      shared memory, a block per row (bins 33 .. 36): expand, sort, compress
//      by a scan of the run heads; the merge method for the long rows (bin
//      37): each scaled row of B, in pieces of a block's threads, binary-
//      searched in the row's sorted list in shared memory (its value added
//      where its column is there), the new columns compacted by a scan behind
//      the list and merged into it by merge path (cuda/merge_path.hpp) in
//      registers; a list that would outgrow its round's capacity is dumped to
//      global memory with a checkpoint (the entry of A and the position in
//      its row of B) and the row taken again in the next round, of twice the
//      capacity, which the host sizes from the count of such rows (hybrid
//      progressive allocation); past the largest round the list lives in
//      global memory (level 2) and a level-1 list in shared memory takes the
//      new columns until it is full and merged into it. Every kernel writes
//      its rows' nnz into C's offsets;
//  (4) arranging: C allocated exactly (scan of the nnz), rows copied from C~
//      and from the long rows' lists, a warp per row.
// Determinism: the heap and the bitonic network are fixed functions of the
// products' order (A's entries in order, each row of B in order); the merge
// method adds the products of a column in exactly that order (a column is
// in one list at a time; pieces of one row of B have distinct columns): the
// long rows equal the CPU reference bit for bit.
// Workspace: bhsparse.cu. Complexity: u log u per heap row, u log^2 u per
// ESC row, per long row its products times a binary search of its list plus
// a merge of the list per piece with new columns.
#pragma once

#include <climits>
#include <cstdint>

#include "bhsparse/bhsparse_tuning.hpp"
#include "bhsparse/heap_method.hpp"
#include "bhsparse/long_rows.hpp"
#include "cuda/merge_path.hpp"
#include "cuda/warp_primitives.cuh"
#include "spgemm/csr.hpp"

namespace spgemm::bhsparse::kernels {

using cuda::block_inclusive_scan;
using cuda::full_mask;
using ull = unsigned long long;

constexpr int helper_threads = 256;
constexpr index_t empty_key = INT_MAX;  // sorts after every column

// Counters of stage (1): rows per bin, then the totals below.
namespace counter {
inline constexpr int hist = 0;                    // bin_count of them
inline constexpr int tilde = bin_count;           // entries of C~
inline constexpr int long_area = bin_count + 1;   // entries the long rows' lists may take (long_row_area_bound)
inline constexpr int bound = bin_count + 2;       // sum of min(u, cols of B): the bound of nnz(C)
inline constexpr int products = bin_count + 3;
inline constexpr int max_long = bin_count + 4;    // the largest min(u, cols of B) of a long row
inline constexpr int long_bound = bin_count + 5;  // sum of min(u, cols of B) over the long rows
inline constexpr int long_entries = bin_count + 6;  // entries of A in the long rows
inline constexpr int long_products = bin_count + 7;  // products of the long rows
inline constexpr int count = bin_count + 8;
}  // namespace counter

__device__ __forceinline__ std::int64_t global_thread() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

// Stage (1): `lanes` lanes (a power of two up to 32) per row. c_len (C's
// row offsets, before their scan) receives a long row's products u, and 0
// for the others.
__global__ void __launch_bounds__(helper_threads)
    bins_kernel(std::int64_t rows, int lanes, const offset_t* __restrict__ a_off, const index_t* __restrict__ a_col,
                const offset_t* __restrict__ b_off, std::int64_t b_cols, int capacity_max,
                unsigned char* __restrict__ bins, offset_t* __restrict__ tilde, offset_t* __restrict__ c_len,
                ull* __restrict__ counters) {
  __shared__ ull local[counter::count];
  for (int i = threadIdx.x; i < counter::count; i += blockDim.x) local[i] = 0;
  __syncthreads();
  const std::int64_t t = global_thread();
  const std::int64_t row = t / lanes;
  const int lane = static_cast<int>(t % lanes);
  std::int64_t u = 0;
  if (row < rows) {
    for (offset_t e = a_off[row] + lane; e < a_off[row + 1]; e += lanes) {
      const index_t k = a_col[e];
      u += b_off[k + 1] - b_off[k];
    }
  }
  for (int d = lanes / 2; d >= 1; d /= 2) u += __shfl_xor_sync(full_mask, u, d);
  if (row < rows && lane == 0) {
    const int bin = bin_of(u);
    const std::int64_t g = u < b_cols ? u : b_cols;
    const bool in_tilde = bin != bin_empty && bin != long_bin;
    if (bins != nullptr) {  // null: the estimate's pass, counters only
      bins[row] = static_cast<unsigned char>(bin);
      tilde[row] = in_tilde ? g : 0;
      c_len[row] = bin == long_bin ? u : 0;  // a long row's products, until it is done
    }
    atomicAdd(&local[counter::hist + bin], 1ull);
    if (in_tilde) atomicAdd(&local[counter::tilde], static_cast<ull>(g));
    if (bin == long_bin) {
      atomicAdd(&local[counter::long_area], static_cast<ull>(long_row_area_bound(g, capacity_max)));
      atomicMax(&local[counter::max_long], static_cast<ull>(g));
      atomicAdd(&local[counter::long_bound], static_cast<ull>(g));
      atomicAdd(&local[counter::long_entries], static_cast<ull>(a_off[row + 1] - a_off[row]));
      atomicAdd(&local[counter::long_products], static_cast<ull>(u));
    }
    atomicAdd(&local[counter::bound], static_cast<ull>(g));
    atomicAdd(&local[counter::products], static_cast<ull>(u));
  }
  __syncthreads();
  for (int i = threadIdx.x; i < counter::count; i += blockDim.x) {
    if (local[i] == 0) continue;
    if (i == counter::max_long) {
      atomicMax(counters + i, local[i]);
    } else {
      atomicAdd(counters + i, local[i]);
    }
  }
}

// Stage (2): the row numbers, to be sorted by bin.
__global__ void identity_kernel(std::int64_t n, int* __restrict__ out) {
  const std::int64_t i = global_thread();
  if (i < n) out[i] = static_cast<int>(i);
}

// Bin 1: the row's one product (the one entry of A whose row of B is not
// empty), into C~.
template <typename T>
__global__ void single_kernel(const int* __restrict__ rows, std::int64_t n, const offset_t* __restrict__ a_off,
                              const index_t* __restrict__ a_col, const T* __restrict__ a_val,
                              const offset_t* __restrict__ b_off, const index_t* __restrict__ b_col,
                              const T* __restrict__ b_val, const offset_t* __restrict__ tilde,
                              index_t* __restrict__ ct_col, T* __restrict__ ct_val, offset_t* __restrict__ c_len) {
  const std::int64_t i = global_thread();
  if (i >= n) return;
  const int row = rows[i];
  for (offset_t e = a_off[row]; e < a_off[row + 1]; ++e) {
    const index_t k = a_col[e];
    if (b_off[k + 1] > b_off[k]) {
      ct_col[tilde[row]] = b_col[b_off[k]];
      ct_val[tilde[row]] = a_val[e] * b_val[b_off[k]];
      break;
    }
  }
  c_len[row] = 1;
}

// A thread's heap slots in shared memory, interleaved across the block
// (slot j of thread t at j * blockDim + t: the threads' j-th slots in
// distinct banks).
template <typename V>
struct interleaved {
  V* base;
  __device__ V& operator()(int j) const { return base[j * blockDim.x + threadIdx.x]; }
};

// Bins 2 .. 32: the heap method (heap_method.hpp), a thread per row, heap_max
// slots each (dynamic shared memory: heap_block_threads x heap_max values,
// then as many columns).
template <typename T>
__global__ void __launch_bounds__(heap_block_threads)
    heap_kernel(const int* __restrict__ rows, std::int64_t n, const offset_t* __restrict__ a_off,
                const index_t* __restrict__ a_col, const T* __restrict__ a_val, const offset_t* __restrict__ b_off,
                const index_t* __restrict__ b_col, const T* __restrict__ b_val, const offset_t* __restrict__ tilde,
                index_t* __restrict__ ct_col, T* __restrict__ ct_val, offset_t* __restrict__ c_len) {
  extern __shared__ __align__(16) unsigned char smem[];
  interleaved<T> vals{reinterpret_cast<T*>(smem)};
  interleaved<index_t> keys{reinterpret_cast<index_t*>(smem + sizeof(T) * heap_max * blockDim.x)};
  const std::int64_t i = global_thread();
  if (i >= n) return;
  const int row = rows[i];
  int count = 0;
  for (offset_t e = a_off[row]; e < a_off[row + 1]; ++e) {
    const index_t k = a_col[e];
    const T av = a_val[e];
    for (offset_t j = b_off[k]; j < b_off[k + 1] && count < heap_max; ++j) {
      keys(count) = b_col[j];
      vals(count) = av * b_val[j];
      ++count;
    }
  }
  const int first = heap_merge_row(keys, vals, count);
  const offset_t at = tilde[row];
  for (int j = first; j < count; ++j) {
    ct_col[at + (j - first)] = keys(j);
    ct_val[at + (j - first)] = vals(j);
  }
  c_len[row] = count - first;
}

// Stages the block's `count` entries of A from e0 (count <= blockDim): where
// each one's row of B begins, the inclusive prefix of their lengths and A's
// values; returns the products of the staged entries. Every thread calls it.
template <typename T>
__device__ __forceinline__ long long stage_entries(offset_t e0, int count, const index_t* __restrict__ a_col,
                                                   const T* __restrict__ a_val, const offset_t* __restrict__ b_off,
                                                   offset_t* st_begin, long long* st_incl, T* st_val) {
  const int t = static_cast<int>(threadIdx.x);
  long long len = 0;
  offset_t begin = 0;
  T av = T(0);
  if (t < count) {
    const index_t k = a_col[e0 + t];
    begin = b_off[k];
    len = b_off[k + 1] - begin;
    av = a_val[e0 + t];
  }
  long long total = 0;
  const long long incl = block_inclusive_scan(len, total);
  if (t < count) {
    st_begin[t] = begin;
    st_incl[t] = incl;
    st_val[t] = av;
  }
  __syncthreads();
  return total;
}

// The staged entry that product q (0 <= q < total) belongs to.
__device__ __forceinline__ int staged_entry(const long long* st_incl, int count, long long q) {
  int lo = 0;
  int hi = count - 1;
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (st_incl[mid] > q) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

// Bins 33 .. 36: bitonic ESC, a block of size / 2 threads per row (dynamic
// shared memory: size values, size columns, then the stage of blockDim
// entries of A).
template <typename T>
__global__ void esc_kernel(const int* __restrict__ rows, int size, const offset_t* __restrict__ a_off,
                           const index_t* __restrict__ a_col, const T* __restrict__ a_val,
                           const offset_t* __restrict__ b_off, const index_t* __restrict__ b_col,
                           const T* __restrict__ b_val, const offset_t* __restrict__ tilde,
                           index_t* __restrict__ ct_col, T* __restrict__ ct_val, offset_t* __restrict__ c_len) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int threads = static_cast<int>(blockDim.x);
  T* vals = reinterpret_cast<T*>(smem);
  index_t* keys = reinterpret_cast<index_t*>(vals + size);
  offset_t* st_begin = reinterpret_cast<offset_t*>(keys + size);
  long long* st_incl = reinterpret_cast<long long*>(st_begin + threads);
  T* st_val = reinterpret_cast<T*>(st_incl + threads);
  const int t = static_cast<int>(threadIdx.x);
  const int row = rows[blockIdx.x];
  const offset_t a0 = a_off[row];
  const offset_t a1 = a_off[row + 1];

  // Expand: the row's products in order.
  long long n = 0;
  for (offset_t e0 = a0; e0 < a1; e0 += threads) {
    const int count = static_cast<int>(a1 - e0 < threads ? a1 - e0 : threads);
    const long long total = stage_entries(e0, count, a_col, a_val, b_off, st_begin, st_incl, st_val);
    for (long long q = t; q < total; q += threads) {
      const int s = staged_entry(st_incl, count, q);
      const offset_t j = st_begin[s] + (q - (s > 0 ? st_incl[s - 1] : 0));
      keys[n + q] = b_col[j];
      vals[n + q] = st_val[s] * b_val[j];
    }
    n += total;
    __syncthreads();  // the stage is read before the next entries replace it
  }
  for (long long i = n + t; i < size; i += threads) {
    keys[i] = empty_key;
    vals[i] = T(0);
  }
  __syncthreads();

  // Sort: the bitonic network, a compare-exchange per thread and step.
  for (int k = 2; k <= size; k <<= 1) {
    for (int j = k >> 1; j > 0; j >>= 1) {
      const int i = 2 * t - (t & (j - 1));
      const int l = i + j;
      const bool ascending = (i & k) == 0;
      const index_t ki = keys[i];
      const index_t kl = keys[l];
      if ((ki > kl) == ascending && ki != kl) {
        keys[i] = kl;
        keys[l] = ki;
        const T v = vals[i];
        vals[i] = vals[l];
        vals[l] = v;
      }
      __syncthreads();
    }
  }

  // Compress: each run of a column summed in sorted order by its head,
  // positions by a scan of the heads (each thread's two slots in order).
  const int i0 = 2 * t;
  const bool head0 = keys[i0] != empty_key && (i0 == 0 || keys[i0 - 1] != keys[i0]);
  const bool head1 = keys[i0 + 1] != empty_key && keys[i0] != keys[i0 + 1];
  const long long mine = (head0 ? 1 : 0) + (head1 ? 1 : 0);
  long long heads = 0;
  long long at = block_inclusive_scan(mine, heads) - mine + tilde[row];
  for (int h = 0; h < 2; ++h) {
    const int i = i0 + h;
    if (!(h == 0 ? head0 : head1)) continue;
    T sum = vals[i];
    for (int j = i + 1; j < size && keys[j] == keys[i]; ++j) sum += vals[j];
    ct_col[at] = keys[i];
    ct_val[at] = sum;
    ++at;
  }
  if (t == 0) c_len[row] = heads;
}

// A long row as the merge rounds keep it between launches.
template <typename T>
struct long_row {
  int row = 0;
  int merged = 0;          // entries of its list
  offset_t a_pos = 0;      // the next entry of A to merge
  offset_t b_pos = -1;     // where to resume in that entry's row of B (-1: at its start)
  std::int64_t bound = 0;  // min(u, cols of B): its nnz at most
  index_t* cols = nullptr;  // its list: the last dump, then the result
  T* vals = nullptr;
};

// The long rows' state at the start (rows: the bin's rows, in order; c_len:
// their products, from stage (1)).
template <typename T>
__global__ void long_rows_kernel(const int* __restrict__ rows, std::int64_t n, const offset_t* __restrict__ a_off,
                                 const offset_t* __restrict__ c_len, std::int64_t b_cols,
                                 long_row<T>* __restrict__ state, int* __restrict__ queue) {
  const std::int64_t i = global_thread();
  if (i >= n) return;
  long_row<T> s;
  s.row = rows[i];
  s.a_pos = a_off[s.row];
  s.bound = c_len[s.row] < b_cols ? c_len[s.row] : b_cols;
  state[i] = s;
  queue[i] = static_cast<int>(i);
}

// Merges the sorted runs keys[0, na) and keys[na, na + nb) in place (merge
// path: each thread its share of at most merge_items_per_thread outputs, in
// registers, then written back). Every thread calls it.
template <typename T>
__device__ __forceinline__ void merge_in_place(index_t* keys, T* vals, int na, int nb) {
  const int total = na + nb;
  const int threads = static_cast<int>(blockDim.x);
  const int per = (total + threads - 1) / threads;
  const int d0 = min(per * static_cast<int>(threadIdx.x), total);
  const int d1 = min(d0 + per, total);
  const index_t* b = keys + na;
  const std::int64_t ai = cuda::merge_path_split(keys, na, b, nb, d0);
  index_t rk[merge_items_per_thread];
  T rv[merge_items_per_thread];
  cuda::serial_merge(keys, na, b, nb, ai, d0 - ai, d1 - d0, [&](std::int64_t k, bool from_a, std::int64_t at) {
    rk[k] = from_a ? keys[at] : b[at];
    rv[k] = from_a ? vals[at] : vals[na + at];
  });
  __syncthreads();
  for (int k = 0; k < d1 - d0; ++k) {
    keys[d0 + k] = rk[k];
    vals[d0 + k] = rv[k];
  }
  __syncthreads();
}

// One piece of a scaled row of B (product positions [q0, q0 + blockDim) of
// row [q0, f) of B, scaled by av) against the list: per thread its column,
// value, where the list holds it (long_rows.hpp: a position, a level-1 code,
// or not_listed) and rank among the new columns; returns the new columns'
// count. Every thread calls it.
template <typename T, typename Find>
__device__ __forceinline__ long long piece_of(offset_t q0, offset_t f, T av, const index_t* __restrict__ b_col,
                                              const T* __restrict__ b_val, Find&& find, index_t& col, T& v,
                                              int& pos, long long& rank, bool& fresh) {
  const offset_t i = q0 + threadIdx.x;
  const bool valid = i < f;
  col = valid ? b_col[i] : 0;
  v = valid ? av * b_val[i] : T(0);
  pos = valid ? find(col) : not_listed;
  fresh = valid && is_new_column(pos);
  long long total = 0;
  rank = block_inclusive_scan(fresh ? 1 : 0, total) - (fresh ? 1 : 0);
  return total;
}

// Walks a long row's scaled rows of B from its checkpoint, a piece of
// blockDim products at a time: visit(q0, f, av) for the piece [q0, f) of the
// row of B an entry of A (value av) selects, and after it e, the entry, in
// `at` (the checkpoint). visit returns 1 to go on with the next piece, 0 to
// take the same piece again, -1 to stop; the walk returns false where it
// stopped. Every thread calls it; visit's answer is the same in all of them.
template <typename T, typename Visit>
__device__ __forceinline__ bool walk_pieces(const long_row<T>& st, const offset_t* __restrict__ a_off,
                                            const index_t* __restrict__ a_col, const T* __restrict__ a_val,
                                            const offset_t* __restrict__ b_off, offset_t& at, Visit&& visit) {
  const offset_t a_end = a_off[st.row + 1];
  offset_t resume = st.b_pos;
  for (at = st.a_pos; at < a_end; ++at) {
    const index_t k = a_col[at];
    const T av = a_val[at];
    const offset_t f = b_off[k + 1];
    offset_t q0 = resume >= 0 ? resume : b_off[k];
    resume = -1;
    while (q0 < f) {
      const int next = visit(q0, f, av);
      if (next < 0) return false;
      q0 += next > 0 ? static_cast<offset_t>(blockDim.x) : 0;
    }
  }
  return true;
}

// Copies n entries (block-wide) between lists.
template <typename T>
__device__ __forceinline__ void copy_list(const index_t* from_cols, const T* from_vals, index_t* to_cols, T* to_vals,
                                          std::int64_t n) {
  for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    to_cols[i] = from_cols[i];
    to_vals[i] = from_vals[i];
  }
}

// A merge round (capacity: the list's entries at most; dynamic shared
// memory capacity values, then columns): a block per queued long row; the
// row's list goes to slot `blockIdx.x` of the round's area (capacity entries
// each), a dump with its checkpoint (and the row to next_queue) where it
// would outgrow the capacity, else the result (and its nnz to c_len).
template <typename T>
__global__ void __launch_bounds__(1024)
    merge_round_kernel(long_row<T>* __restrict__ state, const int* __restrict__ queue, int capacity,
                       index_t* __restrict__ area_cols, T* __restrict__ area_vals,
                       int* __restrict__ next_queue, unsigned* __restrict__ next_count,
                       const offset_t* __restrict__ a_off, const index_t* __restrict__ a_col,
                       const T* __restrict__ a_val, const offset_t* __restrict__ b_off,
                       const index_t* __restrict__ b_col, const T* __restrict__ b_val,
                       offset_t* __restrict__ c_len) {
  extern __shared__ __align__(16) unsigned char smem[];
  T* vals = reinterpret_cast<T*>(smem);
  index_t* keys = reinterpret_cast<index_t*>(vals + capacity);
  const int j = queue[blockIdx.x];
  long_row<T>& st = state[j];
  const int row = st.row;
  int merged = st.merged;
  index_t* my_cols = area_cols + static_cast<std::size_t>(blockIdx.x) * capacity;
  T* my_vals = area_vals + static_cast<std::size_t>(blockIdx.x) * capacity;
  copy_list(st.cols, st.vals, keys, vals, merged);
  __syncthreads();
  offset_t e = 0;
  const bool done = walk_pieces(st, a_off, a_col, a_val, b_off, e, [&](offset_t q0, offset_t f, T av) {
    index_t col;
    T v;
    int pos;
    long long rank;
    bool fresh;
    const long long added = piece_of(
        q0, f, av, b_col, b_val, [&](index_t c) { return static_cast<int>(find_sorted(keys, merged, c)); }, col, v,
        pos, rank, fresh);
    if (outgrows(merged, added, capacity)) {  // the checkpoint: nothing of this piece is in the list yet
      copy_list(keys, vals, my_cols, my_vals, merged);
      if (threadIdx.x == 0) {
        st.merged = merged;
        st.a_pos = e;
        st.b_pos = q0;
        st.cols = my_cols;
        st.vals = my_vals;
        next_queue[atomicAdd(next_count, 1u)] = j;
      }
      return -1;
    }
    if (pos >= 0) vals[pos] += v;
    if (fresh) {
      keys[merged + rank] = col;
      vals[merged + rank] = v;
    }
    __syncthreads();
    if (added > 0) {
      merge_in_place(keys, vals, merged, static_cast<int>(added));
      merged += static_cast<int>(added);
    }
    return 1;
  });
  if (!done) return;
  copy_list(keys, vals, my_cols, my_vals, merged);
  if (threadIdx.x == 0) {
    st.merged = merged;
    st.a_pos = e;
    st.cols = my_cols;
    st.vals = my_vals;
    c_len[row] = merged;
  }
}

// The global round's level-2 lists: 2 x bound entries per queued row
// (sizes[n] = 0; an exclusive scan follows).
template <typename T>
__global__ void l2_sizes_kernel(const long_row<T>* __restrict__ state, const int* __restrict__ queue, std::int64_t n,
                                std::int64_t* __restrict__ sizes) {
  const std::int64_t i = global_thread();
  if (i < n) sizes[i] = 2 * state[queue[i]].bound;
  if (i == n) sizes[i] = 0;
}

// The global round, for the rows past the largest capacity: a block per
// queued row; its level-2 list in global memory (two lists of st.bound
// entries from `l2_at[blockIdx.x]`: the list and its merge target), a
// level-1 list of `capacity` entries in shared memory taking the new
// columns until it is full, then merged into level 2 by merge path.
template <typename T>
__global__ void __launch_bounds__(1024)
    merge_global_kernel(long_row<T>* __restrict__ state, const int* __restrict__ queue, int capacity,
                        const std::int64_t* __restrict__ l2_at, index_t* __restrict__ l2_cols,
                        T* __restrict__ l2_vals, const offset_t* __restrict__ a_off,
                        const index_t* __restrict__ a_col, const T* __restrict__ a_val,
                        const offset_t* __restrict__ b_off, const index_t* __restrict__ b_col,
                        const T* __restrict__ b_val, offset_t* __restrict__ c_len) {
  extern __shared__ __align__(16) unsigned char smem[];
  T* vals = reinterpret_cast<T*>(smem);
  index_t* keys = reinterpret_cast<index_t*>(vals + capacity);
  long_row<T>& st = state[queue[blockIdx.x]];
  const int row = st.row;
  const std::int64_t g = st.bound;
  index_t* x_cols = l2_cols + l2_at[blockIdx.x];
  T* x_vals = l2_vals + l2_at[blockIdx.x];
  index_t* y_cols = x_cols + g;
  T* y_vals = x_vals + g;
  std::int64_t n2 = st.merged;
  int n1 = 0;
  copy_list(st.cols, st.vals, x_cols, x_vals, n2);
  __syncthreads();
  // Level 1 into level 2: out-of-place into the other list, then swapped.
  auto flush = [&]() {
    const std::int64_t total = n2 + n1;
    const std::int64_t per = (total + blockDim.x - 1) / blockDim.x;
    const std::int64_t mine = per * static_cast<std::int64_t>(threadIdx.x);
    const std::int64_t d0 = mine < total ? mine : total;
    const std::int64_t d1 = d0 + per < total ? d0 + per : total;
    const std::int64_t ai = cuda::merge_path_split(x_cols, n2, keys, n1, d0);
    cuda::serial_merge(x_cols, n2, keys, n1, ai, d0 - ai, d1 - d0, [&](std::int64_t k, bool from_a, std::int64_t at) {
      y_cols[d0 + k] = from_a ? x_cols[at] : keys[at];
      y_vals[d0 + k] = from_a ? x_vals[at] : vals[at];
    });
    __syncthreads();
    index_t* c = x_cols;
    x_cols = y_cols;
    y_cols = c;
    T* w = x_vals;
    x_vals = y_vals;
    y_vals = w;
    n2 = total;
    n1 = 0;
  };
  offset_t e = 0;
  walk_pieces(st, a_off, a_col, a_val, b_off, e, [&](offset_t q0, offset_t f, T av) {
    index_t col;
    T v;
    int pos;
    long long rank;
    bool fresh;
    // Level 2, level 1 or new (long_rows.hpp): a column of level 1 is not new.
    const long long added = piece_of(
        q0, f, av, b_col, b_val, [&](index_t c) { return find_in_levels(x_cols, n2, keys, n1, c); }, col, v, pos,
        rank, fresh);
    if (outgrows(n1, added, capacity)) {  // level 1 is full: merge it into level 2, then take the piece again
      flush();
      return 0;
    }
    if (in_level2(pos)) x_vals[pos] += v;
    if (in_level1(pos)) vals[level1_position(pos)] += v;
    if (fresh) {
      keys[n1 + rank] = col;
      vals[n1 + rank] = v;
    }
    __syncthreads();
    if (added > 0) {
      merge_in_place(keys, vals, n1, static_cast<int>(added));
      n1 += static_cast<int>(added);
    }
    return 1;
  });
  if (n1 > 0) flush();
  if (threadIdx.x == 0) {
    st.merged = static_cast<int>(n2);
    st.a_pos = e;
    st.cols = x_cols;
    st.vals = x_vals;
    c_len[row] = n2;
  }
}

// Stage (4): rows of C~ into C, a warp per row (rows: the bins 1 .. 36,
// consecutive in the sorted order).
template <typename T>
__global__ void copy_tilde_kernel(const int* __restrict__ rows, std::int64_t n, const offset_t* __restrict__ tilde,
                                  const index_t* __restrict__ ct_col, const T* __restrict__ ct_val,
                                  const offset_t* __restrict__ c_off, index_t* __restrict__ c_col,
                                  T* __restrict__ c_val) {
  const std::int64_t w = global_thread() >> 5;
  const int lane = static_cast<int>(threadIdx.x & 31);
  if (w >= n) return;
  const int row = rows[w];
  const offset_t from = tilde[row];
  const offset_t to = c_off[row];
  const offset_t len = c_off[row + 1] - to;
  for (offset_t i = lane; i < len; i += 32) {
    c_col[to + i] = ct_col[from + i];
    c_val[to + i] = ct_val[from + i];
  }
}

// Stage (4): the long rows' lists into C, a warp per row.
template <typename T>
__global__ void copy_long_kernel(const long_row<T>* __restrict__ state, std::int64_t n,
                                 const offset_t* __restrict__ c_off, index_t* __restrict__ c_col,
                                 T* __restrict__ c_val) {
  const std::int64_t w = global_thread() >> 5;
  const int lane = static_cast<int>(threadIdx.x & 31);
  if (w >= n) return;
  const long_row<T> s = state[w];
  const offset_t to = c_off[s.row];
  for (offset_t i = lane; i < s.merged; i += 32) {
    c_col[to + i] = s.cols[i];
    c_val[to + i] = s.vals[i];
  }
}

}  // namespace spgemm::bhsparse::kernels
