// The block method's numeric kernel (block_kernels.cuh): its group of lanes
// per block row of C and its shared accumulators. Host-only (no CUDA headers).
#pragma once

#include <cstddef>
#include <cstdint>

#include "spgemm/csr.hpp"

namespace spgemm::block {

// Numeric kernel (block_kernels.cuh): a group of lanes per block row of C,
// the lanes taking the blocks of one row of B at a time. The group is the
// smallest power of two at or above B's longest block row, between
// min_group and 32 (a warp); blocks of numeric_threads threads.
inline constexpr int numeric_threads = 128;
inline constexpr int min_group = 8;

inline int group_lanes(std::int64_t longest_block_row_of_b) {
  int g = min_group;
  while (g < 32 && g < longest_block_row_of_b) g *= 2;
  return g;
}

// Scalar rows (b = 1): the power of two at or above B's mean row, from a
// lane up (a row of B longer than the group takes several turns): rows of B
// of one entry (A T of an AMG setup) would leave seven of eight lanes idle.
inline int scalar_group_lanes(double mean_row_of_b) {
  int g = 1;
  while (g < 32 && g < mean_row_of_b) g *= 2;
  return g;
}

// A block row of C accumulates in shared memory (b * b values and the block
// column per block) when it has at most `shared_blocks` blocks, else in C's
// values in global memory. shared_blocks: C's longest block row, capped so
// that a block of numeric_threads threads takes at most half the shared
// memory `max_shared` of a block (two blocks per SM at least).
inline std::size_t bytes_per_shared_block(int b, std::size_t value_bytes) {
  return static_cast<std::size_t>(b) * static_cast<std::size_t>(b) * value_bytes + sizeof(index_t);
}

inline std::int64_t shared_blocks(std::int64_t longest_block_row_of_c, int b, std::size_t value_bytes, int group,
                                  std::size_t max_shared) {
  const std::int64_t groups = numeric_threads / group;
  const std::int64_t cap =
      static_cast<std::int64_t>(max_shared / 2 / static_cast<std::size_t>(groups) / bytes_per_shared_block(b, value_bytes));
  return longest_block_row_of_c < cap ? longest_block_row_of_c : cap;
}

inline std::size_t numeric_shared_bytes(std::int64_t blocks, int b, std::size_t value_bytes, int group) {
  return static_cast<std::size_t>(numeric_threads / group) * static_cast<std::size_t>(blocks) *
         bytes_per_shared_block(b, value_bytes);
}

}  // namespace spgemm::block
