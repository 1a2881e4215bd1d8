// find_row_repeats (row_repeats.hpp): a group of lanes a row, each lane
// comparing its entries with the same positions of the row before.
#include "planner/row_repeats.hpp"

#include "cuda/cuda_check.hpp"
#include "cuda/lane_groups.cuh"
#include "cuda/reduction_grid.hpp"
#include "planner/statistics.hpp"

namespace spgemm::planner {
namespace {

constexpr int threads = 256;

__global__ void __launch_bounds__(threads)
    row_repeats_kernel(std::int64_t rows, int lanes, const offset_t* __restrict__ off,
                       const index_t* __restrict__ col, unsigned char* __restrict__ flags) {
  const cuda::lane_groups g(rows, lanes);
  for (std::int64_t i = g.first; i < g.end; i += g.stride) {
    int same = 0;
    int shifted = 0;
    if (i > 0 && i < rows) {
      const offset_t begin = off[i];
      const offset_t before = off[i - 1];
      const offset_t len = off[i + 1] - begin;
      same = shifted = begin - before == len ? 1 : 0;
      for (offset_t k = g.sub; (same | shifted) != 0 && k < len; k += lanes) {
        const index_t c = col[begin + k];
        const index_t p = col[before + k];
        same &= c == p ? 1 : 0;
        shifted &= c == p + 1 ? 1 : 0;
      }
    }
    // Every lane of the group: the row repeats where no lane found otherwise.
    for (int d = lanes / 2; d > 0; d >>= 1) {
      same &= __shfl_xor_sync(cuda::full_mask, same, d);
      shifted &= __shfl_xor_sync(cuda::full_mask, shifted, d);
    }
    if (g.sub == 0 && i < rows) {
      flags[i] = static_cast<unsigned char>((same != 0 ? repeat_same : 0) | (shifted != 0 ? repeat_shifted : 0));
    }
  }
}

}  // namespace

void find_row_repeats(const cuda::structure_view& m, unsigned char* flags, cudaStream_t stream) {
  if (m.rows == 0) return;
  const int lanes = stats_lanes(m.rows, m.nnz);
  const unsigned blocks = cuda::reduction_blocks(row_repeats_kernel, m.rows * lanes, threads);
  row_repeats_kernel<<<blocks, threads, 0, stream>>>(m.rows, lanes, m.row_offsets, m.col_indices, flags);
  SPGEMM_CUDA_CHECK_LAUNCH();
}

}  // namespace spgemm::planner
