// Kernels of the GPU transpose (SpTRANS): CSR of A (rows x cols, nnz) -> CSR
// of A^T, each output row sorted by the original row index.
//
// Method: count, scan, unordered scatter with atomics, then a segmented sort
// of the rows of A^T -- the SpTRANS of Ji et al. 2020 (segmented merge,
// section 4.2: the nonzeros are inserted into the transpose unordered, using
// atomics; long rows are cut into pieces sorted on chip, and the sorted
// pieces are merged as the sub-segments of their row). The paper's iterative
// pairwise merge (one host round trip per tree level) becomes one co-ranking
// pass here, so no phase needs the host: nnz is known and every kernel reads
// its work sizes from device memory.
//
//   1. count_kernel: counts[c] = entries of column c (atomics). The counts,
//      the scan state and the list counters are zeroed by one memset.
//   2. scan_kernel: single-pass exclusive scan of the counts with decoupled
//      look-back (Merrill & Garland 2016). Writes A^T's row offsets and the
//      scatter cursors (over the counts), and files every row of A^T of
//      length >= 2 by its length: rows of 2..8, 9..32 and 33..128 entries
//      into three lists, longer rows as chunks of up to 512 entries into a
//      fourth (row, chunk number). Each block bumps each counter once.
//   3. scatter_kernel: entry k of A (row r, column c) goes to slot
//      atomicAdd(&cursor[c], 1) of A^T -- unordered within each row of A^T.
//      r is a binary search in A's row offsets, narrowed to the rows of the
//      block's tile.
//   4. sort_rows_kernel: each row (or chunk) is sorted in registers by a
//      bitonic network over a group of G lanes holding E slots each
//      (shuffles across lanes, compare-exchange within a lane): Hou et al.'s
//      register sort. G x E = 1 x 8, 4 x 8, 16 x 8, 32 x 16 for the four
//      lists. Rows of one chunk are sorted in place, writing back only the
//      entries that moved; the chunks of longer rows go to the workspace.
//   5. merge_chunks_kernel (the segmented merge; only where rows(A) > 512):
//      entry x of chunk i of a long row lands at row start + (its slot in
//      chunk i) + sum over the other chunks j of |{y in j : y < x}|: binary
//      searches in the row's keys staged in shared memory; a chunk entirely
//      below or above chunk i costs one comparison.
// The keys of a row of A^T are distinct rows of A, so the result does not
// depend on the order the atomics happened in: the output is bit-identical on
// every run, columns ascending, values copied, never combined.
//
// Workspace: 4 bytes per column (counts, then cursors), 8 bytes per 2048
// columns (scan state), the four lists (at most min(cols, nnz / shortest row
// of the list) entries, the chunk list also nnz / 512 more) and, where
// rows(A) > 512 (a row of A^T can exceed one chunk), 4 + sizeof(T) bytes per
// entry for the chunks of long rows.
// Work: O(nnz + cols) reads, writes and atomics for phases 1-3; O(L log^2 L)
// register operations per row or chunk of L <= 512 entries; the merge of a
// row of L > 512 entries reads L^2 / 512 keys from L2 and makes
// O(L * (L / 512) * log 512) shared-memory probes (chunks with disjoint row
// ranges: O(1) each).
#pragma once

#include <cub/block/block_scan.cuh>
#include <cuda/atomic>

#include <cstdint>

#include "spgemm/csr.hpp"

namespace spgemm::cuda::transpose_kernels {

constexpr int block_threads = 256;
constexpr int warps_per_block = block_threads / 32;
constexpr int entry_items = 8;  // entries per thread in count and scatter
constexpr int entry_tile = block_threads * entry_items;
constexpr int scan_items = 8;  // columns per thread in the scan
constexpr int scan_tile = block_threads * scan_items;

// Rows of A^T by length: lists 0..2 hold rows of at most list_max[l] entries
// (sorted by groups of 1, 4, 16 lanes), list 3 the chunks of longer rows.
constexpr int short_lists = 3;
constexpr unsigned list_min[short_lists + 1] = {2, 9, 33, 129};
constexpr unsigned list_max[short_lists] = {8, 32, 128};
constexpr int chunk = 512;  // entries per chunk (a warp, 16 slots per lane)
constexpr int merge_threads_items = chunk / block_threads;
constexpr int merge_keys = 8192;  // keys of a long row staged at once (32 KiB)

// -1: nothing to sort (0 or 1 entry); 0..2: a short list; 3: chunks.
__host__ __device__ constexpr int list_of(unsigned length) {
  return length <= 1 ? -1 : length <= 8 ? 0 : length <= 32 ? 1 : length <= 128 ? 2 : 3;
}
__host__ __device__ constexpr unsigned chunks_of(unsigned length) { return (length + chunk - 1) / chunk; }

// Counters after the scan state: scan tickets, rows per short list, chunks.
constexpr int counter_ticket = 0;
constexpr int counter_lists = 1;
constexpr int counter_chunks = counter_lists + short_lists;
constexpr int counters = 8;

using ull = unsigned long long;
constexpr unsigned key_pad = 0xffffffffu;  // above every row index (rows < 2^31)

// The lists the scan fills and the sorts read.
struct lists_view {
  unsigned* counters = nullptr;
  index_t* rows[short_lists] = {};  // rows of A^T per short list
  int2* chunks = nullptr;           // (row of A^T, chunk number)
};

// --- 1. column counts ----------------------------------------------------

__global__ void __launch_bounds__(block_threads)
    count_kernel(const index_t* __restrict__ col, std::int64_t nnz, unsigned* __restrict__ counts) {
  const std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * entry_tile + threadIdx.x;
  index_t c[entry_items];
#pragma unroll
  for (int i = 0; i < entry_items; ++i) {
    const std::int64_t k = base + i * block_threads;
    c[i] = k < nnz ? col[k] : -1;
  }
#pragma unroll
  for (int i = 0; i < entry_items; ++i) {
    if (c[i] >= 0) atomicAdd(&counts[c[i]], 1u);
  }
}

// --- 2. scan with decoupled look-back, lists -----------------------------

// Tile state: (flag << 32) | value; flag 1: the tile's own sum, 2: inclusive prefix.
constexpr ull flag_aggregate = 1ull << 32;
constexpr ull flag_inclusive = 2ull << 32;

__device__ __forceinline__ ull load_state(ull* p) {
  return ::cuda::atomic_ref<ull, ::cuda::thread_scope_device>(*p).load(::cuda::memory_order_relaxed);
}
__device__ __forceinline__ void store_state(ull* p, ull v) {
  ::cuda::atomic_ref<ull, ::cuda::thread_scope_device>(*p).store(v, ::cuda::memory_order_relaxed);
}

// What one thread contributes to the block scan: entries, chunks, and rows
// per short list (16-bit fields; a block holds at most scan_tile rows).
struct scan_item {
  unsigned entries;
  unsigned chunks;
  ull rows;
};
struct scan_sum {
  __device__ scan_item operator()(const scan_item& a, const scan_item& b) const {
    return {a.entries + b.entries, a.chunks + b.chunks, a.rows + b.rows};
  }
};

// counts_cursor: in, the counts; out, the first slot of each row of A^T.
__global__ void __launch_bounds__(block_threads)
    scan_kernel(unsigned* __restrict__ counts_cursor, std::int64_t cols, offset_t* __restrict__ t_off,
                ull* __restrict__ state, lists_view lists) {
  using block_scan = cub::BlockScan<scan_item, block_threads>;
  __shared__ typename block_scan::TempStorage scan_storage;
  __shared__ unsigned s_tile;
  __shared__ unsigned s_prefix;
  __shared__ unsigned s_base[short_lists + 1];

  // Tiles in the order blocks start, so every tile looked back on is running or done.
  if (threadIdx.x == 0) s_tile = atomicAdd(&lists.counters[counter_ticket], 1u);
  __syncthreads();
  const unsigned tile = s_tile;
  const std::int64_t first = static_cast<std::int64_t>(tile) * scan_tile + threadIdx.x * scan_items;

  unsigned length[scan_items];
  scan_item mine{0u, 0u, 0ull};
#pragma unroll
  for (int i = 0; i < scan_items; ++i) {
    length[i] = first + i < cols ? counts_cursor[first + i] : 0u;
    mine.entries += length[i];
    const int l = list_of(length[i]);
    if (l == short_lists) mine.chunks += chunks_of(length[i]);
    if (l >= 0 && l < short_lists) mine.rows += 1ull << (16 * l);
  }
  scan_item before;
  scan_item total;
  block_scan(scan_storage).ExclusiveScan(mine, before, scan_item{0u, 0u, 0ull}, scan_sum{}, total);

  if (threadIdx.x < 32) {
    const unsigned lane = threadIdx.x;
    // List space for this block (lanes 0..3), then the look-back (warp 0).
    if (lane < short_lists) {
      const unsigned n = static_cast<unsigned>((total.rows >> (16 * lane)) & 0xffffu);
      s_base[lane] = n > 0 ? atomicAdd(&lists.counters[counter_lists + lane], n) : 0u;
    } else if (lane == short_lists) {
      s_base[lane] = total.chunks > 0 ? atomicAdd(&lists.counters[counter_chunks], total.chunks) : 0u;
    }
    if (tile == 0) {
      if (lane == 0) {
        store_state(&state[0], flag_inclusive | total.entries);
        s_prefix = 0;
      }
    } else {
      if (lane == 0) store_state(&state[tile], flag_aggregate | total.entries);
      unsigned exclusive = 0;
      std::int64_t window_end = tile;  // lane l looks at tile window_end - 32 + l
      while (true) {
        const std::int64_t pred = window_end - 32 + lane;
        ull s = flag_inclusive;  // before tile 0: an inclusive prefix of 0
        if (pred >= 0) {
          do {
            s = load_state(&state[pred]);
          } while ((s >> 32) == 0);
        }
        // Sum from the nearest inclusive prefix (or the whole window) up.
        const unsigned inclusive = __ballot_sync(0xffffffffu, (s >> 32) == 2);
        const unsigned from = inclusive != 0 ? 31u - static_cast<unsigned>(__clz(inclusive)) : 0u;
        exclusive += __reduce_add_sync(0xffffffffu, lane >= from ? static_cast<unsigned>(s) : 0u);
        if (inclusive != 0) break;
        window_end -= 32;
      }
      if (lane == 0) {
        store_state(&state[tile], flag_inclusive | (exclusive + total.entries));
        s_prefix = exclusive;
      }
    }
  }
  __syncthreads();

  unsigned start = s_prefix + before.entries;
  ull row_slot = before.rows;
  unsigned chunk_slot = s_base[short_lists] + before.chunks;
#pragma unroll
  for (int i = 0; i < scan_items; ++i) {
    const std::int64_t c = first + i;
    if (c < cols) {
      t_off[c] = start;
      counts_cursor[c] = start;
      if (c == cols - 1) t_off[cols] = static_cast<offset_t>(start) + length[i];
      const int l = list_of(length[i]);
      if (l >= 0 && l < short_lists) {
        index_t* list = l == 0 ? lists.rows[0] : l == 1 ? lists.rows[1] : lists.rows[2];
        list[s_base[l] + static_cast<unsigned>((row_slot >> (16 * l)) & 0xffffu)] = static_cast<index_t>(c);
        row_slot += 1ull << (16 * l);
      } else if (l == short_lists) {
        const unsigned n = chunks_of(length[i]);
        for (unsigned q = 0; q < n; ++q) lists.chunks[chunk_slot + q] = make_int2(static_cast<int>(c), static_cast<int>(q));
        chunk_slot += n;
      }
      start += length[i];
    }
  }
}

// --- 3. unordered scatter ------------------------------------------------

// The last row r in [lo, hi] with a_off[r] <= k: the row holding entry k.
__device__ __forceinline__ std::int64_t row_of(const offset_t* __restrict__ a_off, std::int64_t lo, std::int64_t hi,
                                               std::int64_t k) {
  while (lo < hi) {
    const std::int64_t mid = (lo + hi + 1) >> 1;
    if (a_off[mid] <= k) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

template <typename T>
__global__ void __launch_bounds__(block_threads)
    scatter_kernel(const offset_t* __restrict__ a_off, std::int64_t a_rows, const index_t* __restrict__ a_col,
                   const T* __restrict__ a_val, std::int64_t nnz, unsigned* __restrict__ cursor,
                   index_t* __restrict__ t_col, T* __restrict__ t_val) {
  __shared__ std::int64_t s_rows[2];
  const std::int64_t tile = static_cast<std::int64_t>(blockIdx.x) * entry_tile;
  const std::int64_t last = (tile + entry_tile < nnz ? tile + entry_tile : nnz) - 1;
  if (threadIdx.x == 0) s_rows[0] = row_of(a_off, 0, a_rows - 1, tile);
  if (threadIdx.x == 32) s_rows[1] = row_of(a_off, 0, a_rows - 1, last);
  __syncthreads();
  const std::int64_t lo = s_rows[0];
  const std::int64_t hi = s_rows[1];

  index_t c[entry_items];
  T v[entry_items];
#pragma unroll
  for (int i = 0; i < entry_items; ++i) {
    const std::int64_t k = tile + i * block_threads + threadIdx.x;
    c[i] = -1;
    v[i] = T(0);
    if (k <= last) {
      c[i] = a_col[k];
      v[i] = a_val[k];
    }
  }
#pragma unroll
  for (int i = 0; i < entry_items; ++i) {
    const std::int64_t k = tile + i * block_threads + threadIdx.x;
    if (c[i] >= 0) {
      const unsigned slot = atomicAdd(&cursor[c[i]], 1u);
      t_col[slot] = static_cast<index_t>(row_of(a_off, lo, hi, k));
      t_val[slot] = v[i];
    }
  }
}

// --- 4. rows and chunks of up to 512 entries: bitonic sort in registers --

template <typename T>
__device__ __forceinline__ void compare_exchange(unsigned& ka, T& va, unsigned& kb, T& vb, bool ascending) {
  const bool swap = ascending ? kb < ka : ka < kb;
  const unsigned k = swap ? kb : ka;
  const T v = swap ? vb : va;
  kb = swap ? ka : kb;
  vb = swap ? va : vb;
  ka = k;
  va = v;
}

__host__ __device__ constexpr int log2_of(int n) {
  int log = 0;
  while ((1 << log) < n) ++log;
  return log;
}

// Sorts n = G * E keys with their values ascending: slot s is register s / G
// of lane s % G of the group of G lanes (aligned groups; the whole warp calls).
template <int G, int E, typename T>
__device__ __forceinline__ void bitonic_sort(unsigned (&key)[E], T (&val)[E], unsigned g_lane) {
  constexpr int log_n = log2_of(G * E);
  static_assert((1 << log_n) == G * E && G <= 32 && 32 % G == 0, "G * E a power of two, G divides 32");
#pragma unroll
  for (int lk = 1; lk <= log_n; ++lk) {
    const unsigned k = 1u << lk;
#pragma unroll
    for (int lj = lk - 1; lj >= 0; --lj) {
      const unsigned j = 1u << lj;
      if (j >= static_cast<unsigned>(G)) {  // partner slots in this lane: registers e, e ^ (j / G)
        const unsigned jj = j / G;
        const unsigned kk = k / G;
#pragma unroll
        for (int e = 0; e < E; ++e) {
          if ((e & jj) == 0) compare_exchange(key[e], val[e], key[e | jj], val[e | jj], (e & kk) == 0);
        }
      } else {  // partner slot in lane g_lane ^ j of the group, same register
#pragma unroll
        for (int e = 0; e < E; ++e) {
          const unsigned other_key = __shfl_xor_sync(0xffffffffu, key[e], j);
          const T other_val = __shfl_xor_sync(0xffffffffu, val[e], j);
          const bool ascending = ((e * G + g_lane) & k) == 0;
          const bool lower = (g_lane & j) == 0;  // keeps the min when ascending
          if (lower == ascending ? other_key < key[e] : other_key > key[e]) {
            key[e] = other_key;
            val[e] = other_val;
          }
        }
      }
    }
  }
}

// Sorts the rows list[task * (32 / G) + group] (at most G * E entries each),
// in place; writes back only the entries that moved.
template <int G, int E, typename T>
__device__ __forceinline__ void sort_short_rows(const offset_t* __restrict__ t_off, index_t* __restrict__ t_col,
                                                T* __restrict__ t_val, const index_t* __restrict__ list,
                                                unsigned rows, unsigned task) {
  const unsigned lane = threadIdx.x & 31u;
  const unsigned g_lane = lane % G;
  const unsigned index = task * (32 / G) + lane / G;
  std::int64_t start = 0;
  unsigned length = 0;
  if (index < rows) {
    const index_t r = list[index];
    start = t_off[r];
    length = static_cast<unsigned>(t_off[r + 1] - start);
  }
  unsigned key[E];
  unsigned loaded[E];
  T val[E];
#pragma unroll
  for (int e = 0; e < E; ++e) {
    const unsigned s = e * G + g_lane;
    key[e] = key_pad;
    val[e] = T(0);
    if (s < length) {
      key[e] = static_cast<unsigned>(t_col[start + s]);
      val[e] = t_val[start + s];
    }
    loaded[e] = key[e];
  }
  bitonic_sort<G, E>(key, val, g_lane);
#pragma unroll
  for (int e = 0; e < E; ++e) {
    const unsigned s = e * G + g_lane;
    if (s < length && key[e] != loaded[e]) {
      t_col[start + s] = static_cast<index_t>(key[e]);
      t_val[start + s] = val[e];
    }
  }
}

// Sorts one chunk of 512 entries (a whole warp): in place for a row of one
// chunk, else into the workspace at the same offsets.
template <typename T>
__device__ __forceinline__ void sort_chunk(const offset_t* __restrict__ t_off, index_t* __restrict__ t_col,
                                           T* __restrict__ t_val, int2 item, index_t* __restrict__ work_col,
                                           T* __restrict__ work_val) {
  constexpr int E = chunk / 32;
  const unsigned lane = threadIdx.x & 31u;
  const std::int64_t row_start = t_off[item.x];
  const std::int64_t row_end = t_off[item.x + 1];
  const std::int64_t start = row_start + static_cast<std::int64_t>(item.y) * chunk;
  const unsigned length = static_cast<unsigned>(row_end - start < chunk ? row_end - start : chunk);
  unsigned key[E];
  T val[E];
#pragma unroll
  for (int e = 0; e < E; ++e) {
    const unsigned s = e * 32 + lane;
    key[e] = key_pad;
    val[e] = T(0);
    if (s < length) {
      key[e] = static_cast<unsigned>(t_col[start + s]);
      val[e] = t_val[start + s];
    }
  }
  bitonic_sort<32, E>(key, val, lane);
  const bool whole = row_end - row_start <= chunk;
  index_t* dst_col = whole ? t_col : work_col;
  T* dst_val = whole ? t_val : work_val;
#pragma unroll
  for (int e = 0; e < E; ++e) {
    const unsigned s = e * 32 + lane;
    if (s < length) {
      dst_col[start + s] = static_cast<index_t>(key[e]);
      dst_val[start + s] = val[e];
    }
  }
}

// Warp tasks, chunks first (the largest), then lists 2, 1, 0; warp w takes
// tasks w, w + warps, ... (every lane of a warp the same task).
template <typename T>
__global__ void __launch_bounds__(block_threads, 3)
    sort_rows_kernel(const offset_t* __restrict__ t_off, index_t* __restrict__ t_col, T* __restrict__ t_val,
                     lists_view lists, index_t* __restrict__ work_col, T* __restrict__ work_val) {
  const unsigned rows0 = lists.counters[counter_lists + 0];
  const unsigned rows1 = lists.counters[counter_lists + 1];
  const unsigned rows2 = lists.counters[counter_lists + 2];
  const unsigned tasks3 = lists.counters[counter_chunks];
  const unsigned tasks2 = (rows2 + 1) / 2;
  const unsigned tasks1 = (rows1 + 7) / 8;
  const unsigned tasks0 = (rows0 + 31) / 32;
  const unsigned total = tasks3 + tasks2 + tasks1 + tasks0;
  const unsigned warps = gridDim.x * warps_per_block;
  for (unsigned t = blockIdx.x * warps_per_block + threadIdx.x / 32; t < total; t += warps) {
    if (t < tasks3) {
      sort_chunk(t_off, t_col, t_val, lists.chunks[t], work_col, work_val);
    } else if (t < tasks3 + tasks2) {
      sort_short_rows<16, 8>(t_off, t_col, t_val, lists.rows[2], rows2, t - tasks3);
    } else if (t < tasks3 + tasks2 + tasks1) {
      sort_short_rows<4, 8>(t_off, t_col, t_val, lists.rows[1], rows1, t - tasks3 - tasks2);
    } else {
      sort_short_rows<1, 8>(t_off, t_col, t_val, lists.rows[0], rows0, t - tasks3 - tasks2 - tasks1);
    }
  }
}

// --- 5. segmented merge of the chunks of long rows -----------------------

// Block b places the entries of chunks b, b + blocks, ... of rows longer than
// one chunk (chunks of shorter rows are skipped: sorted in place already).
template <typename T>
__global__ void __launch_bounds__(block_threads)
    merge_chunks_kernel(const offset_t* __restrict__ t_off, lists_view lists, const index_t* __restrict__ work_col,
                        const T* __restrict__ work_val, index_t* __restrict__ t_col, T* __restrict__ t_val) {
  constexpr int items = merge_threads_items;
  constexpr int staged_chunks = merge_keys / chunk;
  __shared__ unsigned s_keys[merge_keys];
  const unsigned chunks = lists.counters[counter_chunks];
  for (unsigned p = blockIdx.x; p < chunks; p += gridDim.x) {
    const int2 item = lists.chunks[p];
    const std::int64_t start = t_off[item.x];
    const std::int64_t end = t_off[item.x + 1];
    if (end - start <= chunk) continue;  // block-uniform
    const unsigned count = chunks_of(static_cast<unsigned>(end - start));
    const std::int64_t first = start + static_cast<std::int64_t>(item.y) * chunk;
    const unsigned n = static_cast<unsigned>(end - first < chunk ? end - first : chunk);
    unsigned key[items];
    unsigned rank[items];
#pragma unroll
    for (int i = 0; i < items; ++i) {
      const unsigned s = i * block_threads + threadIdx.x;
      key[i] = s < n ? static_cast<unsigned>(work_col[first + s]) : key_pad;
      rank[i] = s;
    }
    const unsigned lowest = static_cast<unsigned>(work_col[first]);
    const unsigned highest = static_cast<unsigned>(work_col[first + n - 1]);
    for (unsigned batch = 0; batch < count; batch += staged_chunks) {
      // Stage the keys of chunks [batch, batch + staged_chunks) of the row.
      const std::int64_t from = start + static_cast<std::int64_t>(batch) * chunk;
      const std::int64_t to = end - from < merge_keys ? end : from + merge_keys;
      __syncthreads();  // the previous batch's searches are done
      for (std::int64_t s = from + threadIdx.x; s < to; s += block_threads) {
        s_keys[s - from] = static_cast<unsigned>(work_col[s]);
      }
      __syncthreads();
      const unsigned batch_end = count < batch + staged_chunks ? count : batch + staged_chunks;
      for (unsigned q = batch; q < batch_end; ++q) {
        if (q == static_cast<unsigned>(item.y)) continue;
        const unsigned* other = s_keys + (q - batch) * chunk;
        const unsigned m = static_cast<unsigned>(end - (start + static_cast<std::int64_t>(q) * chunk) < chunk
                                                     ? end - (start + static_cast<std::int64_t>(q) * chunk)
                                                     : chunk);
        if (other[m - 1] < lowest) {  // all of chunk q below this chunk
#pragma unroll
          for (int i = 0; i < items; ++i) rank[i] += m;
          continue;
        }
        if (other[0] > highest) continue;  // all above
#pragma unroll
        for (int i = 0; i < items; ++i) {
          unsigned lo = 0;
          unsigned hi = m;  // the first slot with a key >= key[i]
          while (lo < hi) {
            const unsigned mid = (lo + hi) >> 1;
            if (other[mid] < key[i]) {
              lo = mid + 1;
            } else {
              hi = mid;
            }
          }
          rank[i] += lo;
        }
      }
    }
#pragma unroll
    for (int i = 0; i < items; ++i) {
      const unsigned s = i * block_threads + threadIdx.x;
      if (s < n) {
        t_col[start + rank[i]] = static_cast<index_t>(key[i]);
        t_val[start + rank[i]] = work_val[first + s];
      }
    }
  }
}

}  // namespace spgemm::cuda::transpose_kernels
