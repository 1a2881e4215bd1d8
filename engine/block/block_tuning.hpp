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

// Scalar rows (b = 1) split across `splits` groups where the rows alone
// would leave most of the GPU idle (the coarse levels of a Galerkin pyramid:
// a few hundred rows of thousands of products each). Each group owns a
// contiguous range of the row's positions and takes, of every row of B, the
// entries in its range: every entry of C is still summed in A's order by one
// lane. Splits double while the rows' groups hold fewer threads than the GPU
// (`resident_threads`), one row's groups fit a block, and the ranges keep
// min_split_positions positions of C's mean row.
inline constexpr int max_numeric_threads = 1024;
inline constexpr int min_split_positions = 16;

inline int scalar_splits(std::int64_t rows, double mean_row_of_c, int group, std::int64_t resident_threads) {
  int s = 1;
  while (group * s * 2 <= max_numeric_threads && rows * group * s < resident_threads &&
         mean_row_of_c >= 2.0 * s * min_split_positions) {
    s *= 2;
  }
  return s;
}

// Threads of a block: numeric_threads, or one row's groups where they are more.
inline int block_threads(int group, int splits) {
  return group * splits > numeric_threads ? group * splits : numeric_threads;
}

// Rows of C a block takes.
inline int rows_per_block(int group, int splits) { return block_threads(group, splits) / (group * splits); }

// A block row of C accumulates in shared memory (b * b values and the block
// column per block) when it has at most `shared_blocks` blocks, else in C's
// values in global memory. shared_blocks: C's longest block row, capped so
// that the `rows` rows of a block take at most half the shared memory
// `max_shared` of a block (two blocks per SM at least).
inline std::size_t bytes_per_shared_block(int b, std::size_t value_bytes) {
  return static_cast<std::size_t>(b) * static_cast<std::size_t>(b) * value_bytes + sizeof(index_t);
}

inline std::int64_t shared_blocks(std::int64_t longest_block_row_of_c, int b, std::size_t value_bytes, int rows,
                                  std::size_t max_shared) {
  const std::int64_t cap =
      static_cast<std::int64_t>(max_shared / 2 / static_cast<std::size_t>(rows) / bytes_per_shared_block(b, value_bytes));
  return longest_block_row_of_c < cap ? longest_block_row_of_c : cap;
}

inline std::size_t numeric_shared_bytes(std::int64_t blocks, int b, std::size_t value_bytes, int rows) {
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(blocks) * bytes_per_shared_block(b, value_bytes);
}

}  // namespace spgemm::block
