#include "planner/row_work.hpp"

#include <algorithm>

#include "cuda/cuda_check.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/warp_primitives.cuh"

namespace spgemm::planner {
namespace {

constexpr int threads_per_block = 256;
constexpr int warps_per_block = threads_per_block / 32;

// A warp per row: its lanes read the row's columns in turn and sum the
// lengths of the rows of B they name.
__global__ void row_work_kernel(cuda::structure_view a, const offset_t* __restrict__ b_offsets,
                                std::int64_t* __restrict__ entries, std::int64_t* __restrict__ products) {
  const int lane = threadIdx.x & 31;
  const std::int64_t first_warp = blockIdx.x * static_cast<std::int64_t>(warps_per_block) + (threadIdx.x >> 5);
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * warps_per_block;
  for (std::int64_t row = first_warp; row < a.rows; row += warps) {
    const offset_t begin = a.row_offsets[row], end = a.row_offsets[row + 1];
    long long sum = 0;
    for (offset_t k = begin + lane; k < end; k += 32) {
      const index_t j = a.col_indices[k];
      sum += b_offsets[j + 1] - b_offsets[j];
    }
    sum = cuda::warp_sum(sum);
    if (lane == 0) {
      entries[row] = end - begin;
      products[row] = sum;
    }
  }
}

}  // namespace

row_work compute_row_work(const cuda::structure_view& a, const cuda::structure_view& b,
                          cuda::memory_resource& memory, cudaStream_t stream) {
  row_work w;
  const auto rows = static_cast<std::size_t>(a.rows);
  w.entries.resize(rows);
  w.products.resize(rows);
  if (rows == 0) return w;
  cuda::device_buffer<std::int64_t> out(memory, 2 * rows, stream);
  const std::int64_t blocks =
      std::min<std::int64_t>((a.rows + warps_per_block - 1) / warps_per_block, std::int64_t{1} << 20);
  row_work_kernel<<<static_cast<unsigned>(blocks), threads_per_block, 0, stream>>>(a, b.row_offsets, out.data(),
                                                                                  out.data() + rows);
  SPGEMM_CUDA_CHECK_LAUNCH();
  SPGEMM_CUDA_CHECK(cudaMemcpyAsync(w.entries.data(), out.data(), rows * sizeof(std::int64_t),
                                    cudaMemcpyDeviceToHost, stream));
  SPGEMM_CUDA_CHECK(cudaMemcpyAsync(w.products.data(), out.data() + rows, rows * sizeof(std::int64_t),
                                    cudaMemcpyDeviceToHost, stream));
  SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  return w;
}

}  // namespace spgemm::planner
