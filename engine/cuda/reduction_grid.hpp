// The grid of a pass that sums over a matrix in grid-stride loops and ends in
// one atomic per block and counter (the planner's statistics, RMerge's
// bounds): enough blocks to fill the device, no more. Tens of thousands of
// blocks' atomics on a few counters serialize in L2: RMerge's bounds of a
// million rows a warp each took 0.50 ms in 65,536 blocks against 0.18 with a
// thread a row in 3,907 (H200).
#pragma once

#include <algorithm>
#include <cstdint>

#include "cuda/device_facts.hpp"

namespace spgemm::cuda {

inline constexpr int reduction_blocks_per_sm = 8;

// Blocks of `block_threads` for a pass of `threads` threads.
inline unsigned reduction_blocks(std::int64_t threads, int block_threads) {
  const std::int64_t needed = (threads + block_threads - 1) / block_threads;
  const std::int64_t most = std::int64_t{reduction_blocks_per_sm} * std::max(current_device_facts().sm_count, 1);
  return static_cast<unsigned>(std::clamp<std::int64_t>(needed, 1, most));
}

}  // namespace spgemm::cuda
