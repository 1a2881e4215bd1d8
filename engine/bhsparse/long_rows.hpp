// bhSPARSE's long rows (bin 37; bhsparse_kernels.cuh): the decisions the
// merge rounds and the global round take per product and per piece of a row
// of B, host and device (SPGEMM_HOST_DEVICE), no CUDA headers, so that the
// CPU tests run a long row through the rounds exactly as the kernels decide
// (tests/engine/bhsparse_bins_test.cpp).
//
// A long row's products are merged a piece of a scaled row of B at a time
// (a block's threads, one product each; the columns of a piece are
// distinct) into the row's sorted list: a product whose column the list
// holds is added there, the others ("new" columns) are compacted behind the
// list and merged into it. In the global round the list has two levels, the
// level-2 list in global memory and a level-1 list in shared memory that
// takes the new columns until it is full and is then merged into level 2;
// a column is new only where neither level holds it.
#pragma once

#include <cstdint>

#include "planner/host_device.hpp"

namespace spgemm::bhsparse {

// Where a product's column is in the row's lists, in one int: its position
// p >= 0 in the merge round's list or the global round's level 2; -2 - p
// for position p of level 1; not_listed where neither holds it (a new
// column). Level 1 is encoded below -1, so "negative" is not "new".
inline constexpr int not_listed = -1;
SPGEMM_HOST_DEVICE inline int level1_code(int p) { return -2 - p; }
SPGEMM_HOST_DEVICE inline bool in_level2(int code) { return code >= 0; }
SPGEMM_HOST_DEVICE inline bool in_level1(int code) { return code <= -2; }
SPGEMM_HOST_DEVICE inline int level1_position(int code) { return -2 - code; }
SPGEMM_HOST_DEVICE inline bool is_new_column(int code) { return code == not_listed; }

// The position of `col` in the sorted keys[0, n), or not_listed. `keys` is
// indexable (an array in any memory).
template <typename Keys, typename Col>
SPGEMM_HOST_DEVICE inline std::int64_t find_sorted(const Keys& keys, std::int64_t n, Col col) {
  std::int64_t lo = 0;
  std::int64_t hi = n;
  while (lo < hi) {
    const std::int64_t mid = (lo + hi) >> 1;
    if (keys[mid] < col) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo < n && keys[lo] == col ? lo : not_listed;
}

// The global round's lookup: level 2 first (n2 entries; positions below
// 2^31: a row's bound is at most the columns of B), then level 1.
template <typename L2, typename L1, typename Col>
SPGEMM_HOST_DEVICE inline int find_in_levels(const L2& level2, std::int64_t n2, const L1& level1, int n1, Col col) {
  const std::int64_t p2 = find_sorted(level2, n2, col);
  if (p2 >= 0) return static_cast<int>(p2);
  const std::int64_t p1 = find_sorted(level1, n1, col);
  return p1 >= 0 ? level1_code(static_cast<int>(p1)) : not_listed;
}

// A merge round's checkpoint: a piece with `added` new columns outgrows the
// list of `merged` entries and `capacity` slots. Nothing of the piece is in
// the list then; the row is dumped and takes the piece again in the next
// round. The new columns are entries of the result, so a row whose bound
// (min(products, columns of B)) is at most the capacity never outgrows it.
SPGEMM_HOST_DEVICE inline bool outgrows(std::int64_t merged, std::int64_t added, std::int64_t capacity) {
  return merged + added > capacity;
}

}  // namespace spgemm::bhsparse
