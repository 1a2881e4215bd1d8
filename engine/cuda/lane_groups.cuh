// Rows of a matrix taken by groups of `lanes` threads (a power of two up to
// 32: planner::stats_lanes) in a grid-stride loop, and rows too long for a
// group taken by the whole warp. Device code only.
#pragma once

#include <cstdint>

#include "cuda/warp_primitives.cuh"
#include "spgemm/csr.hpp"

namespace spgemm::cuda {

// The grid-stride loop `for (i = first; i < end; i += stride)` over rows
// runs the same number of trips in every lane of a warp (rows past the last
// read as empty), so that the loop's body may shuffle and vote warp-wide.
struct lane_groups {
  int lane;             // in the warp
  int sub;              // in the group
  unsigned group_bits;  // the group's lanes, from its first lane
  std::int64_t first;
  std::int64_t stride;
  std::int64_t end;

  __device__ lane_groups(std::int64_t rows, int lanes_per_row)
      : lane(static_cast<int>(threadIdx.x & 31)),
        sub(lane & (lanes_per_row - 1)),
        group_bits(lanes_per_row == 32 ? full_mask : (1u << lanes_per_row) - 1u),
        first((static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / lanes_per_row),
        stride(static_cast<std::int64_t>(gridDim.x) * blockDim.x / lanes_per_row),
        end((rows + stride - 1) / stride * stride) {}
};

// For each group of the warp whose lanes pass `long_row`, one after another,
// every lane of the warp calls take(owner, begin, end): the group's row
// [begin, end) of entries and `owner`, the group's first lane. Every lane of
// a group holds the same row and flag.
template <typename Take>
__device__ __forceinline__ void warp_takes_long_rows(const lane_groups& g, bool long_row, offset_t begin,
                                                     offset_t end, Take&& take) {
  for (unsigned longs = __ballot_sync(full_mask, long_row); longs != 0;) {
    const int owner = __ffs(longs) - 1;
    longs &= ~(g.group_bits << owner);
    take(owner, __shfl_sync(full_mask, begin, owner), __shfl_sync(full_mask, end, owner));
  }
}

}  // namespace spgemm::cuda
