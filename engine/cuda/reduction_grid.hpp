// The grid of a pass that sums over a matrix in grid-stride loops and ends in
// one atomic per block and counter (the planner's statistics, RMerge's
// bounds): one wave of blocks, as many as the device holds at once, no more.
// Tens of thousands of blocks' atomics on a few counters serialize in L2
// (RMerge's bounds of a million rows a warp each took 0.50 ms in 65,536
// blocks against 0.18 with a thread a row in 3,907, H200); and since the loop
// gives every block the same share of rows, blocks beyond what the SMs hold
// run after the rest, at a fraction of the occupancy.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

#include "cuda/cuda_check.hpp"
#include "cuda/device_facts.hpp"

namespace spgemm::cuda {

// Blocks of `block_threads` for a pass of `threads` threads of `kernel`.
template <typename Kernel>
unsigned reduction_blocks(Kernel kernel, std::int64_t threads, int block_threads) {
  int per_sm = 0;
  SPGEMM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block_threads, 0));
  const std::int64_t needed = (threads + block_threads - 1) / block_threads;
  const std::int64_t most = std::int64_t{std::max(per_sm, 1)} * std::max(current_device_facts().sm_count, 1);
  return static_cast<unsigned>(std::clamp<std::int64_t>(needed, 1, most));
}

}  // namespace spgemm::cuda
