// The coarsest level's direct solve on the GPU (gpu_passes.hpp; dense_kernels.cuh).
#include <algorithm>

#include "amg/gpu/dense_kernels.cuh"
#include "amg/gpu/gpu_passes.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/dependent_launch.cuh"
#include "cuda/read_back.hpp"

namespace spgemm::amg::gpu {
namespace {

unsigned dense_blocks(std::int64_t items) {
  return static_cast<unsigned>(
      std::clamp<std::int64_t>((items + kernels::dense_threads - 1) / kernels::dense_threads, 1, 1 << 16));
}

}  // namespace

bool invert(const cuda::csr_view<double>& a, double* inverse, cuda::memory_resource& memory, cudaStream_t stream) {
  using namespace kernels;
  const std::int64_t n = a.rows;
  if (n == 0) return true;
  const auto panel = static_cast<std::size_t>(n * pivot_block);
  cuda::device_buffer<double> row_panel(memory, panel, stream);
  cuda::device_buffer<double> column_panel(memory, panel, stream);
  cuda::device_buffer<int> singular(memory, 1, stream);
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(singular.data(), 0, sizeof(int), stream));
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(inverse, 0, static_cast<std::size_t>(n * n) * sizeof(double), stream));
  densify_kernel<<<dense_blocks(n * 32), dense_threads, 0, stream>>>(n, a.row_offsets, a.col_indices, a.values, inverse);
  SPGEMM_CUDA_CHECK_LAUNCH();
  const auto tiles = static_cast<unsigned>((n + pivot_block - 1) / pivot_block);
  for (std::int64_t first = 0; first < n; first += pivot_block) {
    const int kb = static_cast<int>(std::min<std::int64_t>(pivot_block, n - first));
    cuda::launch_dependent(&pivot_panels_kernel, dim3(tiles), dim3(pivot_block * tile_rows), stream, n, first, kb,
                           inverse, row_panel.data(), column_panel.data(), singular.data());
    cuda::launch_dependent(&pivot_update_kernel, dim3(tiles, tiles), dim3(pivot_block * tile_rows), stream, n, first,
                           kb, inverse, row_panel.data(), column_panel.data());
  }
  return cuda::read_back(singular.data(), stream) == 0;
}

void dense_multiply(std::int64_t n, const double* m, const double* x, double* y, cudaStream_t stream) {
  if (n == 0) return;
  kernels::dense_multiply_kernel<<<dense_blocks(n * 32), kernels::dense_threads, 0, stream>>>(n, m, x, y);
  SPGEMM_CUDA_CHECK_LAUNCH();
}

}  // namespace spgemm::amg::gpu
