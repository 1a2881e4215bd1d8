// bhSPARSE's bins and kernel shapes (Liu & Vinter 2015, section 4.1;
// bhsparse_kernels.cuh): the 38 bins of rows by the upper bound u of their
// nnz (their products), in five groups, and the sizes of the kernels that
// compute them. Host and device (SPGEMM_HOST_DEVICE), no CUDA headers;
// unit-tested on the CPU (tests/engine/bhsparse_bins_test.cpp).
//
//  * group 1, bin 0: u = 0, an empty row;
//  * group 2, bin 1: u = 1, one product;
//  * group 3, bins 2 .. 32 (bin = u): the heap method, a thread per row with
//    its heap of u entries in shared memory;
//  * group 4, bins 33 .. 36 (u in 33-64, 65-128, 129-256, 257-512): bitonic
//    ESC in shared memory, a block per row (esc_size(bin) / 2 threads);
//  * group 5, bin 37 (u > 512): the long rows, merged into a sorted list in
//    shared memory a row of B at a time (merge path), in rounds of growing
//    capacity (256, 512, ... merge_capacity_max): a row whose list outgrows
//    its round's capacity is checkpointed, its list dumped to global memory,
//    and taken again by the next round, which the host sizes and launches
//    (the hybrid progressive allocation); beyond merge_capacity_max the list
//    lives in global memory with a level-1 list in shared memory. With
//    tuning::bhsparse_segmented_merge the long rows are computed by Ji et
//    al.'s segmented merge instead (segmerge; bhsparse.cu).
// The bounds 32 and 512 are the paper's, for 48 KB of scratchpad; the merge
// rounds continue as far as the device's shared memory allows.
#pragma once

#include <cstddef>
#include <cstdint>

#include "planner/host_device.hpp"

namespace spgemm::bhsparse {

inline constexpr int bin_empty = 0;
inline constexpr int bin_single = 1;
inline constexpr int heap_max = 32;     // bins 2 .. heap_max
inline constexpr int first_esc_bin = heap_max + 1;
inline constexpr int esc_bins = 4;      // 33-64, 65-128, 129-256, 257-512
inline constexpr int long_bin = first_esc_bin + esc_bins;
inline constexpr int bin_count = long_bin + 1;
inline constexpr std::int64_t esc_max = 512;

SPGEMM_HOST_DEVICE inline int bin_of(std::int64_t u) {
  if (u <= heap_max) return static_cast<int>(u);
  if (u > esc_max) return long_bin;
  int b = first_esc_bin;
  std::int64_t top = 64;
  while (u > top) {
    top *= 2;
    ++b;
  }
  return b;
}

// Bitonic ESC: the sorted array of a bin (a power of two) and its threads.
SPGEMM_HOST_DEVICE inline int esc_size(int bin) { return 64 << (bin - first_esc_bin); }
SPGEMM_HOST_DEVICE inline int esc_threads(int bin) { return esc_size(bin) / 2; }

// The heap method: threads per block, each with heap_max slots.
inline constexpr int heap_block_threads = 128;

// Merge rounds: the first capacity (the paper's), its threads, and items a
// thread merges at most (registers of the in-place merge path).
inline constexpr int first_merge_capacity = 256;
inline constexpr int merge_items_per_thread = 16;
inline constexpr int max_merge_capacity = 16384;

SPGEMM_HOST_DEVICE inline int merge_threads(int capacity) {
  const int t = capacity / merge_items_per_thread;
  return t < 64 ? 64 : (t > 1024 ? 1024 : t);
}

// Shared memory of a merge block: the list (keys and values) and the scan's.
inline std::size_t merge_shared_bytes(int capacity, std::size_t value_bytes) {
  return static_cast<std::size_t>(capacity) * (4 + value_bytes);
}

// The largest capacity of a shared list on a device with `max_shared` bytes
// of dynamic shared memory per block.
inline int merge_capacity_max(std::size_t max_shared, std::size_t value_bytes) {
  int c = first_merge_capacity;
  while (c < max_merge_capacity && merge_shared_bytes(2 * c, value_bytes) <= max_shared) c *= 2;
  return c;
}

// The capacities the rounds hold for a long row whose nnz is at most g
// (min(u, cols of B)): every round whose predecessor's capacity g exceeds,
// and beyond the largest round two lists of g in global memory (the
// level-2 list and its merge target). Entries, not bytes.
SPGEMM_HOST_DEVICE inline std::int64_t long_row_area_bound(std::int64_t g, int capacity_max) {
  std::int64_t area = 0;
  std::int64_t previous = 0;
  for (std::int64_t c = first_merge_capacity; c <= capacity_max; c *= 2) {
    if (previous > 0 && g <= previous) break;
    area += c;
    previous = c;
  }
  if (g > capacity_max) area += 2 * g;
  return area;
}

// The segmented merge's slice (segmerge): the products of long rows
// expanded at once. The budget (tuning::segmerge_slice_products), at least
// twice the largest long row's bound plus B's longest row (a chunk of a row
// then holds its result so far and at least one more row of B), at most 2^30;
// and never more than the long rows' products, so that a product with few
// long rows, or none (0), holds no slice larger than its long rows: the
// estimate of a product without long rows is bhsparse's.
inline std::int64_t segmerge_slice(std::int64_t budget, std::int64_t max_long, std::int64_t b_longest_row,
                                   std::int64_t long_products) {
  std::int64_t s = budget > 2 * (max_long + b_longest_row) ? budget : 2 * (max_long + b_longest_row);
  s = s < 2 ? 2 : (s > (std::int64_t{1} << 30) ? std::int64_t{1} << 30 : s);
  return long_products < s ? long_products : s;
}

}  // namespace spgemm::bhsparse
