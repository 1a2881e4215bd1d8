// A row's table written to C in column order, for the hash method's numeric
// kernels (hash_kernels.cuh): by each entry's rank among the row's columns
// where their span fits the table's memory (write_ranked), else by a bitonic
// network over the whole table -- over keys that carry their slot where the
// span leaves the bits for it (group_bitonic_sort_keys), else over (key,
// value) pairs (group_bitonic_sort) -- and a swizzled copy through shared
// memory (swizzled).
#pragma once

#include <cstddef>
#include <cstdint>

#include "cuda/warp_primitives.cuh"
#include "hash/row_products.cuh"
#include "spgemm/csr.hpp"

namespace spgemm::hash::kernels {

constexpr index_t empty_key = 0x7fffffff;  // sorts after every column

// Sorts ITEMS (key, value) pairs per thread over the group into ascending
// keys (bitonic network; element e = rank * ITEMS + i). Strides below ITEMS
// run in registers, strides below 32 * ITEMS through warp shuffles, larger
// ones (block groups only) through the shared arrays sk / sv of
// ITEMS * group-size entries, where element rank * ITEMS + i lies at
// i * group-size + rank: a warp's 32 threads touch 32 consecutive slots, no
// bank conflicts (at rank * ITEMS + i, ITEMS threads would share a bank).
template <bool Warp, int ITEMS, typename T>
__device__ __forceinline__ void group_bitonic_sort(index_t (&k)[ITEMS], T (&v)[ITEMS], index_t* sk, T* sv) {
  using grp = group<Warp>;
  const int rank = grp::rank();
  const int n = ITEMS * grp::size();
  const int base = rank * ITEMS;
  for (int size = 2; size <= n; size <<= 1) {
    for (int stride = size >> 1; stride >= ITEMS; stride >>= 1) {
      if (!Warp && stride >= 32 * ITEMS) {
        const int g = grp::size();
        const int partner = rank ^ (stride / ITEMS);
        grp::sync();
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) {
          sk[i * g + rank] = k[i];
          sv[i * g + rank] = v[i];
        }
        grp::sync();
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) {
          const int e = base + i;
          const index_t pk = sk[i * g + partner];
          const bool keep_min = ((e & size) == 0) == ((e & stride) == 0);
          if (keep_min ? pk < k[i] : pk > k[i]) {
            k[i] = pk;
            v[i] = sv[i * g + partner];
          }
        }
      } else {
        const int lanes = stride / ITEMS;
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) {
          const int e = base + i;
          const index_t pk = __shfl_xor_sync(full_mask, k[i], lanes);
          const T pv = __shfl_xor_sync(full_mask, v[i], lanes);
          const bool keep_min = ((e & size) == 0) == ((e & stride) == 0);
          if (keep_min ? pk < k[i] : pk > k[i]) {
            k[i] = pk;
            v[i] = pv;
          }
        }
      }
    }
#pragma unroll
    for (int s = ITEMS / 2; s > 0; s >>= 1) {
      if (s < size) {
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) {
          if ((i & s) == 0) {
            const int j = i | s;
            const bool up = ((base + i) & size) == 0;
            if ((k[i] > k[j]) == up && k[i] != k[j]) {
              const index_t tk = k[i];
              k[i] = k[j];
              k[j] = tk;
              const T tv = v[i];
              v[i] = v[j];
              v[j] = tv;
            }
          }
        }
      }
    }
  }
}

// The same network over keys alone (one 32-bit word per element: a
// compare-exchange is a min and a max, a step across lanes one shuffle), for
// keys that carry their slot in the table (pack_slot_keys): a third of the
// shuffles and selects of a (key, 8-byte value) pair, the values staying in
// the table. sk: ITEMS * group-size words of shared memory (block groups).
template <bool Warp, int ITEMS>
__device__ __forceinline__ void group_bitonic_sort_keys(unsigned (&k)[ITEMS], unsigned* sk) {
  using grp = group<Warp>;
  const int rank = grp::rank();
  const int n = ITEMS * grp::size();
  const int base = rank * ITEMS;
  for (int size = 2; size <= n; size <<= 1) {
    for (int stride = size >> 1; stride >= ITEMS; stride >>= 1) {
      if (!Warp && stride >= 32 * ITEMS) {
        const int g = grp::size();
        const int partner = rank ^ (stride / ITEMS);
        grp::sync();
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) sk[i * g + rank] = k[i];
        grp::sync();
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) {
          const int e = base + i;
          const unsigned pk = sk[i * g + partner];
          const bool keep_min = ((e & size) == 0) == ((e & stride) == 0);
          k[i] = keep_min ? min(k[i], pk) : max(k[i], pk);
        }
      } else {
        const int lanes = stride / ITEMS;
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) {
          const int e = base + i;
          const unsigned pk = __shfl_xor_sync(full_mask, k[i], lanes);
          const bool keep_min = ((e & size) == 0) == ((e & stride) == 0);
          k[i] = keep_min ? min(k[i], pk) : max(k[i], pk);
        }
      }
    }
#pragma unroll
    for (int s = ITEMS / 2; s > 0; s >>= 1) {
      if (s < size) {
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) {
          if ((i & s) == 0) {
            const int j = i | s;
            const bool up = ((base + i) & size) == 0;
            const unsigned a = min(k[i], k[j]);
            const unsigned b = max(k[i], k[j]);
            k[i] = up ? a : b;
            k[j] = up ? b : a;
          }
        }
      }
    }
  }
}

// Keys that carry their slot: (column - lo) above the slot's slot_bits bits,
// empty slots all ones (last). Possible where the row's span needs at most
// 32 - slot_bits bits less one, so that no key reads as empty.
__host__ __device__ constexpr bool slot_keys_fit(long long span, int slot_bits) {
  return slot_bits < 31 && (span >> (31 - slot_bits)) == 0;
}
constexpr unsigned empty_slot_key = 0xffffffffu;

// Where element e of a sorted table lies in shared memory between the sort
// and the write-out: threads store their ITEMS consecutive elements (e =
// rank * ITEMS + i) and then read consecutive ones (e = i * group + rank).
// XOR-ing the low bits with the next ones spreads both over the banks: 32
// banks of 4-byte words, 16 of 8-byte words (a 64-bit access is served a
// half-warp at a time). Stays within the table (a multiple of 32 slots).
template <typename V>
__device__ __forceinline__ int swizzled(int e) {
  if constexpr (sizeof(V) == 8) {
    return e ^ ((e >> 4) & 15);
  } else {
    return e ^ ((e >> 5) & 31);
  }
}

// Writes a row's entries, held ITEMS per thread (empty keys among them), to
// C in column order without sorting them, where a bit per column of their
// span fits `free_bytes` of shared memory at `free` (the table's storage,
// dead once loaded) with its counts: the bits set before each run of 32
// words (4 bytes a run) and before each word within its run (2 bytes a word;
// at most 1024), 6.125 bytes per 32 columns in all. Each entry's place is the
// number of bits set before its own. O(entries + span / 32) against the
// bitonic network's O(table log^2 table); returns false (nothing written)
// where the span does not fit. lo / hi: the least and greatest key.
template <bool Warp, int ITEMS, typename T>
__device__ __forceinline__ bool write_ranked(const index_t (&keys)[ITEMS], const T (&vals)[ITEMS], int lo, int hi,
                                             unsigned char* free, std::size_t free_bytes, offset_t out,
                                             index_t* __restrict__ c_col, T* __restrict__ c_val) {
  using grp = group<Warp>;
  const int rank = grp::rank();
  const int g = grp::size();
  const std::int64_t words = (static_cast<std::int64_t>(hi) - lo + 32) / 32;
  const std::int64_t runs = (words + 31) / 32;
  if (hi < lo || static_cast<std::size_t>(words * 6 + runs * 4) > free_bytes) return false;
  const int n = static_cast<int>(words);
  unsigned* bits = reinterpret_cast<unsigned*>(free);
  unsigned* run_before = bits + n;  // bits set before each run of 32 words
  auto* word_before = reinterpret_cast<unsigned short*>(run_before + runs);  // ... and each word in its run
  grp::sync();  // every thread holds its entries: the table's storage is free
  for (int w = rank; w < n; w += g) bits[w] = 0;
  grp::sync();
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    if (keys[i] != empty_key) {
      const int d = keys[i] - lo;
      atomicOr(&bits[d >> 5], 1u << (d & 31));
    }
  }
  grp::sync();
  // Each warp counts a stretch of whole runs, its lanes on consecutive words.
  const int lane = static_cast<int>(threadIdx.x & 31);
  const int warps = g / 32;
  const int stretch = (n + 32 * warps - 1) / (32 * warps) * 32;
  const int w0 = min(n, (rank / 32) * stretch);
  const int w1 = min(n, w0 + stretch);
  long long mine = 0;
  for (int w = w0 + lane; w < w1; w += 32) mine += __popc(bits[w]);
  const long long warp_total = warp_sum(mine);
  long long total = 0;
  const long long contribution = lane == 0 ? warp_total : 0;
  long long at = __shfl_sync(full_mask, grp::inclusive_scan(contribution, total) - contribution, 0);
  for (int base = w0; base < w1; base += 32) {  // one run
    const int w = base + lane;
    const long long count = w < w1 ? __popc(bits[w]) : 0;
    const long long incl = warp_inclusive_scan(count);
    if (lane == 0) run_before[base / 32] = static_cast<unsigned>(at);
    if (w < w1) word_before[w] = static_cast<unsigned short>(incl - count);
    at += __shfl_sync(full_mask, incl, 31);
  }
  grp::sync();
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    if (keys[i] != empty_key) {
      const int d = keys[i] - lo;
      const int w = d >> 5;
      const offset_t place = out + run_before[w >> 5] + word_before[w] + __popc(bits[w] & ((1u << (d & 31)) - 1u));
      c_col[place] = keys[i];
      c_val[place] = vals[i];
    }
  }
  return true;
}

}  // namespace spgemm::hash::kernels
