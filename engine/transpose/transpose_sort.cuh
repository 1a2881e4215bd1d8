// Phases 4 and 5 of the GPU transpose (the method: transpose_kernels.cuh):
// the register sort of the rows and chunks of A^T, and the segmented merge
// of the chunks of long rows.
#pragma once

#include <cstdint>

#include "transpose/transpose_kernels.cuh"

namespace spgemm::transpose::kernels {

// --- 4. rows and chunks of up to 512 entries: bitonic sort in registers --

// Sort keys: (row of A << slot_bits) | the entry's slot in its row or chunk,
// K = unsigned where rows(A) <= 2^23, else ull. The pad (all ones) sorts
// last; a real key equals it only in slot 511, in a full chunk, which has no
// pads.
constexpr int slot_bits = 9;
constexpr std::int64_t narrow_key_rows = std::int64_t{1} << (32 - slot_bits);

template <typename K>
__device__ __forceinline__ K sort_key(index_t row, unsigned slot) {
  return (static_cast<K>(row) << slot_bits) | slot;
}
template <typename K>
__device__ __forceinline__ unsigned slot_of(K key) {
  return static_cast<unsigned>(key) & ((1u << slot_bits) - 1);
}
template <typename K>
__device__ __forceinline__ index_t row_of_key(K key) {
  return static_cast<index_t>(key >> slot_bits);
}

// Sorts n = G * E keys ascending: slot s is register s / G of lane s % G of
// the group of G lanes (aligned groups; the whole warp calls).
template <int G, int E, typename K>
__device__ __forceinline__ void bitonic_sort(K (&key)[E], unsigned g_lane) {
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
          if ((e & jj) == 0) {
            const K lo = min(key[e], key[e | jj]);
            const K hi = max(key[e], key[e | jj]);
            const bool ascending = (e & kk) == 0;
            key[e] = ascending ? lo : hi;
            key[e | jj] = ascending ? hi : lo;
          }
        }
      } else {  // partner slot in lane g_lane ^ j of the group, same register
#pragma unroll
        for (int e = 0; e < E; ++e) {
          const K other = __shfl_xor_sync(0xffffffffu, key[e], j);
          const bool ascending = ((e * G + g_lane) & k) == 0;
          const bool lower = (g_lane & j) == 0;  // keeps the min when ascending
          key[e] = lower == ascending ? min(key[e], other) : max(key[e], other);
        }
      }
    }
  }
}

// Loads the `length` entries at `start` as sort keys (slot s: register s / G
// of group lane s % G), pads after them.
template <int G, int E, typename K>
__device__ __forceinline__ void load_keys(const index_t* __restrict__ t_col, std::int64_t start, unsigned length,
                                          unsigned g_lane, K (&key)[E]) {
#pragma unroll
  for (int e = 0; e < E; ++e) {
    const unsigned s = e * G + g_lane;
    key[e] = s < length ? sort_key<K>(t_col[start + s], s) : ~K(0);
  }
}

// Writes the sorted entries to dst at `start`: each slot takes the value
// value_of(the slot its key names). All values are read before any is
// written, so dst may be the source (then only the entries that moved are
// written).
template <int G, int E, typename K, typename T, typename Values>
__device__ __forceinline__ void store_sorted(const K (&key)[E], Values value_of, std::int64_t start, unsigned length,
                                             unsigned g_lane, index_t* dst_col, T* dst_val, bool in_place) {
  T val[E];
#pragma unroll
  for (int e = 0; e < E; ++e) {
    if (e * G + g_lane < length) val[e] = value_of(slot_of(key[e]));
  }
  __syncwarp();
#pragma unroll
  for (int e = 0; e < E; ++e) {
    const unsigned s = e * G + g_lane;
    if (s < length && !(in_place && slot_of(key[e]) == s)) {
      dst_col[start + s] = row_of_key(key[e]);
      dst_val[start + s] = val[e];
    }
  }
}

// Sorts the rows list[task * (32 / G) + group] (at most G * E entries each),
// in place. With G = 1 a lane holds its whole row: its values are loaded
// beside the keys and picked from registers (no second, dependent load).
template <int G, int E, typename K, typename T>
__device__ __forceinline__ void sort_short_rows(const offset_t* __restrict__ t_off, index_t* t_col, T* t_val,
                                                const index_t* __restrict__ list, unsigned rows, unsigned task) {
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
  K key[E];
  load_keys<G, E>(t_col, start, length, g_lane, key);
  if constexpr (G == 1) {
    T loaded[E];
#pragma unroll
    for (int e = 0; e < E; ++e) loaded[e] = static_cast<unsigned>(e) < length ? t_val[start + e] : T(0);
    bitonic_sort<G, E>(key, g_lane);
    const auto in_lane = [&](unsigned slot) {
      T v = loaded[0];
#pragma unroll
      for (int e = 1; e < E; ++e) v = slot == static_cast<unsigned>(e) ? loaded[e] : v;
      return v;
    };
    store_sorted<G, E>(key, in_lane, start, length, g_lane, t_col, t_val, true);
  } else {
    bitonic_sort<G, E>(key, g_lane);
    const auto in_memory = [&](unsigned slot) { return t_val[start + slot]; };
    store_sorted<G, E>(key, in_memory, start, length, g_lane, t_col, t_val, true);
  }
}

// Sorts one chunk of 512 entries (a whole warp): in place for a row of one
// chunk, else into the workspace at the same offsets.
template <typename K, typename T>
__device__ __forceinline__ void sort_chunk(const offset_t* __restrict__ t_off, index_t* t_col, T* t_val, int2 item,
                                           index_t* __restrict__ work_col, T* __restrict__ work_val) {
  constexpr int E = chunk / 32;
  const unsigned lane = threadIdx.x & 31u;
  const std::int64_t row_start = t_off[item.x];
  const std::int64_t row_end = t_off[item.x + 1];
  const std::int64_t start = row_start + static_cast<std::int64_t>(item.y) * chunk;
  const unsigned length = static_cast<unsigned>(row_end - start < chunk ? row_end - start : chunk);
  K key[E];
  load_keys<32, E>(t_col, start, length, lane, key);
  bitonic_sort<32, E>(key, lane);
  const bool whole = row_end - row_start <= chunk;
  const auto in_memory = [&](unsigned slot) { return t_val[start + slot]; };
  store_sorted<32, E>(key, in_memory, start, length, lane, whole ? t_col : work_col, whole ? t_val : work_val, whole);
}

// Warp tasks, chunks first (the largest), then lists 2, 1, 0; warp w takes
// tasks w, w + warps, ... (every lane of a warp the same task).
template <typename K, typename T>
__global__ void __launch_bounds__(block_threads, 3)
    sort_rows_kernel(const offset_t* __restrict__ t_off, index_t* t_col, T* t_val, lists_view lists,
                     index_t* __restrict__ work_col, T* __restrict__ work_val) {
  wait_for_previous_grid();
  release_next_grid();
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
      sort_chunk<K>(t_off, t_col, t_val, lists.chunks[t], work_col, work_val);
    } else if (t < tasks3 + tasks2) {
      sort_short_rows<16, 8, K>(t_off, t_col, t_val, lists.rows[2], rows2, t - tasks3);
    } else if (t < tasks3 + tasks2 + tasks1) {
      sort_short_rows<4, 8, K>(t_off, t_col, t_val, lists.rows[1], rows1, t - tasks3 - tasks2);
    } else {
      sort_short_rows<1, 8, K>(t_off, t_col, t_val, lists.rows[0], rows0, t - tasks3 - tasks2 - tasks1);
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
  wait_for_previous_grid();
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

}  // namespace spgemm::transpose::kernels
