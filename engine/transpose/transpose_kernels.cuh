// Kernels of the GPU transpose (SpTRANS): CSR of A (rows x cols, nnz) -> CSR
// of A^T, each output row sorted by the original row index.
//
// Method: count, scan, unordered scatter, then a segmented sort of the rows
// of A^T -- the SpTRANS of Ji et al. 2020 (segmented merge, section 4.2: the
// nonzeros are inserted into the transpose unordered, using atomics; long
// rows are cut into pieces sorted on chip, and the sorted pieces are merged
// as the sub-segments of their row). The paper's iterative pairwise merge
// (one host round trip per tree level) becomes one co-ranking pass here, so
// no phase needs the host: nnz is known and every kernel reads its work
// sizes from device memory. The atomics are taken once per column of a tile
// of 2048 entries, not once per entry: a tile's entries of one column form a
// run of consecutive slots of A^T, written together.
//
//   1. rank_kernel: per tile, a shared-memory hash table of the tile's
//      columns (8 neighbouring columns to 8 neighbouring cells) counts each
//      column's entries and gives each entry its index in its column's run
//      (shared atomics, any order). One global atomicAdd per run reserves
//      the run's slots: place = the run's first place in its column (the
//      count returned) + the entry's index in the run; a warp reserves 32
//      neighbouring cells at once, so neighbouring columns share sectors.
//      The runs are laid out one after another in the tile in cell order
//      (group = the run's first position + the index). The counts, the scan
//      state and the list counters are zeroed by one memset.
//   2. scan_kernel: single-pass exclusive scan of the counts with decoupled
//      look-back (Merrill & Garland 2016). Writes A^T's row offsets and the
//      row starts (over the counts; reads and writes coalesced through
//      shared memory), and files every row of A^T of length >= 2 by its
//      length: rows of 2..8, 9..32 and 33..128 entries into three lists,
//      longer rows as chunks of up to 512 entries into a fourth (row, chunk
//      number). Each block bumps each counter once.
//   3. scatter_kernel: entry k of A (row r, column c) goes to slot
//      start[c] + place[k] of A^T, unordered within its row of A^T. The tile
//      is staged in shared memory by group, so the slots of a run (and of
//      runs of neighbouring columns) are written by consecutive threads.
//      The rows of the tile's entries come from one pass over its rows
//      (each marks its first entry) and a max-scan.
//   4. sort_rows_kernel: each row (or chunk) is sorted in registers by a
//      bitonic network over a group of G lanes holding E slots each
//      (shuffles across lanes, compare-exchange within a lane): Hou et al.'s
//      register sort. G x E = 1 x 8, 4 x 8, 16 x 8, 32 x 16 for the four
//      lists. The network moves keys only -- (row of A << 9) | slot, 32 bits
//      where rows(A) <= 2^23, else 64 -- and each sorted slot then takes the
//      value of the slot its key names (G = 1: from the lane's registers,
//      else from memory). Rows of one chunk are sorted in place, writing
//      back only the entries that moved; the chunks of longer rows go to the
//      workspace.
//   5. merge_chunks_kernel (the segmented merge; only where rows(A) > 512):
//      entry x of chunk i of a long row lands at row start + (its slot in
//      chunk i) + sum over the other chunks j of |{y in j : y < x}|: binary
//      searches in the row's keys staged in shared memory; a chunk entirely
//      below or above chunk i costs one comparison.
// The keys of a row of A^T are distinct rows of A, so the result does not
// depend on the order the atomics happened in: the output is bit-identical on
// every run, columns ascending, values copied, never combined.
//
// Workspace: 4 bytes per column (counts, then row starts), 8 bytes per 2048
// columns (scan state), 6 bytes per entry (place, group), the four lists (at
// most min(cols, nnz / shortest row of the list) entries, the chunk list
// also nnz / 512 more) and, where rows(A) > 512 (a row of A^T can exceed one
// chunk), 4 + sizeof(T) bytes per entry for the chunks of long rows.
// Work: O(nnz + cols) reads and writes for phases 1-3, one global atomic per
// run (at most one per entry), O(1) expected shared-memory probes per entry;
// O(L log^2 L) register operations per row or chunk of L <= 512 entries; the
// merge of a row of L > 512 entries reads L^2 / 512 keys from L2 and makes
// O(L * (L / 512) * log 512) shared-memory probes (chunks with disjoint row
// ranges: O(1) each).
#pragma once

#include <cub/block/block_scan.cuh>
#include <cuda/atomic>
#include <cuda/functional>

#include <cstdint>

#include "cuda/dependent_launch.cuh"
#include "spgemm/csr.hpp"

namespace spgemm::transpose::kernels {

__host__ __device__ constexpr int log2_of(int n) {
  int log = 0;
  while ((1 << log) < n) ++log;
  return log;
}

constexpr int block_threads = 256;
constexpr int warps_per_block = block_threads / 32;
constexpr int entry_items = 8;  // entries per thread in rank and scatter
constexpr int entry_tile = block_threads * entry_items;
constexpr int table_cells = 2 * entry_tile;  // a tile's columns fill at most half the table
constexpr int cells_per_thread = table_cells / block_threads;
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

// Phases 2-5 are launched to start while the phase before them finishes
// (cuda/dependent_launch.cuh, transpose.cu): each waits for that grid to
// complete before it reads what the grid wrote, then lets the next phase
// launch.
using cuda::release_next_grid;
using cuda::wait_for_previous_grid;

// --- 1. runs: per-tile column counts, places and groups ------------------

constexpr unsigned empty_column = 0xffffffffu;
constexpr int index_bits = log2_of(entry_tile);  // an entry's index in its run, below its cell

// The cell of column c in a tile's table (inserted if absent). Columns go
// by groups of 8 neighbours (one sector of counts) to 8 neighbouring cells
// from the group's home, a Fibonacci hash of c / 8 (every bit counts: R-MAT
// columns share their low bits) onto any cell: homes only at multiples of 8
// would give a graph's scattered columns (one per group) 512 homes for up to
// 2048 columns, and long probe runs. A taken cell sends the column on by its
// group's step, an odd multiple of 8 from other bits of the hash (double
// hashing over the cells of the column's residue mod 8): linear probing
// clusters the groups' blocks of 8 cells. Keys only go from empty to a
// column, so a column read is final.
constexpr int neighbour_bits = 3;
__device__ __forceinline__ unsigned table_cell(unsigned* keys, unsigned c) {
  const volatile unsigned* seen = keys;
  constexpr int cell_bits = log2_of(table_cells);
  const unsigned hash = (c >> neighbour_bits) * 2654435769u;
  const unsigned step = ((hash >> neighbour_bits) | 1u) << neighbour_bits;
  unsigned s = ((hash >> (32 - cell_bits)) + (c & ((1u << neighbour_bits) - 1))) & (table_cells - 1);
  for (;;) {
    unsigned k = seen[s];
    if (k == empty_column) k = atomicCAS(&keys[s], empty_column, c);
    if (k == empty_column || k == c) return s;
    s = (s + step) & (table_cells - 1);
  }
}

// Counts are kept one word apart every cells_per_thread cells, so that a
// thread's cells_per_thread neighbouring counts lie in distinct banks from
// its lanes' (no bank conflicts, whether a warp reads 32 neighbouring cells
// or 32 threads' runs of cells).
__device__ __forceinline__ unsigned padded(unsigned cell) { return cell + cell / cells_per_thread; }
constexpr int padded_cells = table_cells + table_cells / cells_per_thread;

__global__ void __launch_bounds__(block_threads)
    rank_kernel(const index_t* __restrict__ col, std::int64_t nnz, unsigned* __restrict__ counts,
                unsigned* __restrict__ place, unsigned short* __restrict__ group) {
  using block_scan = cub::BlockScan<unsigned, block_threads>;
  __shared__ unsigned s_key[table_cells];     // column, then the run's first place in it
  __shared__ unsigned s_count[padded_cells];  // entries, then the run's first position in the tile
  __shared__ typename block_scan::TempStorage scan_storage;
  release_next_grid();
  const std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * entry_tile + threadIdx.x;
  unsigned c[entry_items];
#pragma unroll
  for (int i = 0; i < entry_items; ++i) {
    const std::int64_t k = base + i * block_threads;
    c[i] = k < nnz ? static_cast<unsigned>(col[k]) : empty_column;
  }
#pragma unroll
  for (int j = 0; j < cells_per_thread; ++j) {
    s_key[j * block_threads + threadIdx.x] = empty_column;
    s_count[padded(j * block_threads + threadIdx.x)] = 0;
  }
  __syncthreads();

  unsigned entry[entry_items];  // (cell << index_bits) | index in the run
#pragma unroll
  for (int i = 0; i < entry_items; ++i) {
    if (c[i] != empty_column) {
      const unsigned cell = table_cell(s_key, c[i]);
      entry[i] = (cell << index_bits) | atomicAdd(&s_count[padded(cell)], 1u);
    }
  }
  __syncthreads();

  // The runs' places: a warp takes 32 neighbouring cells at a time (the
  // atomics of neighbouring columns share sectors). All of a thread's
  // atomics are issued before any result is stored: stored one by one, each
  // waited a round trip to L2 (a scattered graph's tile: 16 in a row, most
  // of the rank pass).
  unsigned run_place[cells_per_thread];
#pragma unroll
  for (int j = 0; j < cells_per_thread; ++j) {
    const int s = j * block_threads + threadIdx.x;
    const unsigned length = s_count[padded(s)];
    run_place[j] = length > 0 ? atomicAdd(&counts[s_key[s]], length) : 0u;
  }
#pragma unroll
  for (int j = 0; j < cells_per_thread; ++j) s_key[j * block_threads + threadIdx.x] = run_place[j];
  // The runs' positions in the tile, in cell order (neighbouring columns
  // next to each other): thread t lays out cells t * cells_per_thread, ...
  unsigned* own = s_count + padded(threadIdx.x * cells_per_thread);
  unsigned owned = 0;
#pragma unroll
  for (int j = 0; j < cells_per_thread; ++j) owned += own[j];
  unsigned first;
  block_scan(scan_storage).ExclusiveSum(owned, first);  // after every thread's atomics loop
#pragma unroll
  for (int j = 0; j < cells_per_thread; ++j) {
    const unsigned length = own[j];
    own[j] = first;
    first += length;
  }
  __syncthreads();

#pragma unroll
  for (int i = 0; i < entry_items; ++i) {
    if (c[i] != empty_column) {
      const unsigned cell = entry[i] >> index_bits;
      const unsigned index = entry[i] & ((1u << index_bits) - 1);
      const std::int64_t k = base + i * block_threads;
      place[k] = s_key[cell] + index;
      group[k] = static_cast<unsigned short>(s_count[padded(cell)] + index);
    }
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

// counts_start: in, the counts; out, the first slot of each row of A^T.
__global__ void __launch_bounds__(block_threads)
    scan_kernel(unsigned* __restrict__ counts_start, std::int64_t cols, offset_t* __restrict__ t_off,
                ull* __restrict__ state, lists_view lists) {
  using block_scan = cub::BlockScan<scan_item, block_threads>;
  __shared__ typename block_scan::TempStorage scan_storage;
  __shared__ unsigned s_tile;
  __shared__ unsigned s_prefix;
  __shared__ unsigned s_base[short_lists + 1];
  __shared__ unsigned s_columns[scan_tile];  // the tile's counts, then its row starts

  wait_for_previous_grid();
  release_next_grid();
  // Tiles in the order blocks start, so every tile looked back on is running or done.
  if (threadIdx.x == 0) s_tile = atomicAdd(&lists.counters[counter_ticket], 1u);
  __syncthreads();
  const unsigned tile = s_tile;
  const std::int64_t tile_first = static_cast<std::int64_t>(tile) * scan_tile;
  const std::int64_t first = tile_first + threadIdx.x * scan_items;
  // The tile's counts, read coalesced; thread t scans columns first .. first + scan_items - 1.
#pragma unroll
  for (int i = 0; i < scan_items; ++i) {
    const std::int64_t c = tile_first + i * block_threads + threadIdx.x;
    s_columns[i * block_threads + threadIdx.x] = c < cols ? counts_start[c] : 0u;
  }
  __syncthreads();

  unsigned length[scan_items];
  scan_item mine{0u, 0u, 0ull};
#pragma unroll
  for (int i = 0; i < scan_items; ++i) {
    length[i] = s_columns[threadIdx.x * scan_items + i];
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
      s_columns[threadIdx.x * scan_items + i] = start;
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
  __syncthreads();
  // The row starts, written coalesced.
#pragma unroll
  for (int i = 0; i < scan_items; ++i) {
    const std::int64_t c = tile_first + i * block_threads + threadIdx.x;
    if (c < cols) {
      const unsigned row_start = s_columns[i * block_threads + threadIdx.x];
      t_off[c] = row_start;
      counts_start[c] = row_start;
    }
  }
}

// --- 3. scatter by runs ----------------------------------------------------

// The last row r with a_off[r] <= k (the row holding entry k), found by a
// whole warp: each step probes 32 evenly spaced rows of the range left, so
// log32(rows) dependent loads. The answer stays in [lo, hi], a_off[lo] <= k.
__device__ __forceinline__ std::int64_t row_holding(const offset_t* __restrict__ a_off, std::int64_t rows,
                                                    std::int64_t k) {
  const unsigned lane = threadIdx.x & 31u;
  std::int64_t lo = 0;
  std::int64_t hi = rows - 1;
  while (lo < hi) {
    const std::int64_t step = (hi - lo + 32) / 32;
    const std::int64_t probe = lo + lane * step;
    const unsigned below = __ballot_sync(0xffffffffu, probe <= hi && a_off[probe] <= k);  // lane 0: lo
    lo += (31 - __clz(below)) * step;
    hi = lo + step - 1 < hi ? lo + step - 1 : hi;
  }
  return lo;
}

// rows[i] = the row of entry tile + i, minus lo (the row of entry tile): each
// row r in (lo, hi] marks its first entry with r - lo (the largest such r:
// empty rows share the mark), then an inclusive max-scan carries the marks.
// rows has entry_tile elements; the whole block calls.
template <typename Scan>
__device__ __forceinline__ void tile_rows(const offset_t* __restrict__ a_off, std::int64_t tile, std::int64_t lo,
                                          std::int64_t hi, unsigned* rows, typename Scan::TempStorage& storage) {
#pragma unroll
  for (int i = 0; i < entry_items; ++i) rows[i * block_threads + threadIdx.x] = 0;
  __syncthreads();
  for (std::int64_t r = lo + 1 + threadIdx.x; r <= hi; r += block_threads) {
    atomicMax(&rows[a_off[r] - tile], static_cast<unsigned>(r - lo));
  }
  __syncthreads();
  unsigned mark[entry_items];
#pragma unroll
  for (int i = 0; i < entry_items; ++i) mark[i] = rows[threadIdx.x * entry_items + i];
  Scan(storage).InclusiveScan(mark, mark, ::cuda::maximum<unsigned>{});
#pragma unroll
  for (int i = 0; i < entry_items; ++i) rows[threadIdx.x * entry_items + i] = mark[i];
  __syncthreads();
}

// start: the first slot of each row of A^T (from the scan).
template <typename T>
__global__ void __launch_bounds__(block_threads)
    scatter_kernel(const offset_t* __restrict__ a_off, std::int64_t a_rows, const index_t* __restrict__ a_col,
                   const T* __restrict__ a_val, std::int64_t nnz, const unsigned* __restrict__ start,
                   const unsigned* __restrict__ place, const unsigned short* __restrict__ group,
                   index_t* __restrict__ t_col, T* __restrict__ t_val) {
  using row_scan = cub::BlockScan<unsigned, block_threads>;
  __shared__ typename row_scan::TempStorage scan_storage;
  __shared__ std::int64_t s_rows[2];
  __shared__ unsigned s_slot[entry_tile];  // the tile's rows (less lo), then by group: the slot of A^T
  __shared__ index_t s_row[entry_tile];    // by group: the row of A
  __shared__ T s_val[entry_tile];          // by group: the value
  const std::int64_t tile = static_cast<std::int64_t>(blockIdx.x) * entry_tile;
  const std::int64_t last = (tile + entry_tile < nnz ? tile + entry_tile : nnz) - 1;
  // The entries are loaded first, so that their round trips to memory
  // overlap the search for the tile's rows; what A holds, before the wait
  // for the scan (and the rank before it).
  index_t column[entry_items];
  T val[entry_items];
#pragma unroll
  for (int i = 0; i < entry_items; ++i) {
    const std::int64_t k = tile + i * block_threads + threadIdx.x;
    if (k <= last) {
      column[i] = a_col[k];
      val[i] = a_val[k];
    }
  }
  if (threadIdx.x < 64) {  // warp 0: the row of the tile's first entry, warp 1: of its last
    const std::int64_t row = row_holding(a_off, a_rows, threadIdx.x < 32 ? tile : last);
    if (threadIdx.x % 32 == 0) s_rows[threadIdx.x / 32] = row;
  }
  wait_for_previous_grid();
  release_next_grid();
  unsigned by_group[entry_items];
  unsigned slot[entry_items];
#pragma unroll
  for (int i = 0; i < entry_items; ++i) {
    const std::int64_t k = tile + i * block_threads + threadIdx.x;
    if (k <= last) {
      by_group[i] = group[k];
      slot[i] = start[column[i]] + place[k];
    }
  }
  __syncthreads();
  const std::int64_t lo = s_rows[0];
  tile_rows<row_scan>(a_off, tile, lo, s_rows[1], s_slot, scan_storage);
  unsigned row[entry_items];
#pragma unroll
  for (int i = 0; i < entry_items; ++i) row[i] = s_slot[i * block_threads + threadIdx.x];
  __syncthreads();

#pragma unroll
  for (int i = 0; i < entry_items; ++i) {
    const std::int64_t k = tile + i * block_threads + threadIdx.x;
    if (k <= last) {
      s_slot[by_group[i]] = slot[i];
      s_val[by_group[i]] = val[i];
      s_row[by_group[i]] = static_cast<index_t>(lo + row[i]);
    }
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < entry_items; ++i) {
    const std::int64_t g = i * block_threads + threadIdx.x;
    if (tile + g <= last) {
      t_col[s_slot[g]] = s_row[g];
      t_val[s_slot[g]] = s_val[g];
    }
  }
}

}  // namespace spgemm::transpose::kernels
