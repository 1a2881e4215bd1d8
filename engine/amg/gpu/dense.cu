// The coarsest level's direct solve on the GPU (gpu_passes.hpp; dense_kernels.cuh).
#include <algorithm>

#include "amg/gpu/dense_kernels.cuh"
#include "amg/gpu/gpu_passes.hpp"
#include "cuda/cuda_check.hpp"
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
  const std::size_t bytes = static_cast<std::size_t>(n * n) * sizeof(double);
  cuda::device_buffer<double> other(memory, static_cast<std::size_t>(n * n), stream);
  cuda::device_buffer<int> singular(memory, 1, stream);
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(singular.data(), 0, sizeof(int), stream));
  // The pivots alternate between the buffers; the last writes `inverse`.
  double* buffers[2] = {n % 2 == 0 ? inverse : other.data(), n % 2 == 0 ? other.data() : inverse};
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(buffers[0], 0, bytes, stream));
  densify_kernel<<<dense_blocks(n), dense_threads, 0, stream>>>(n, a.row_offsets, a.col_indices, a.values, buffers[0]);
  SPGEMM_CUDA_CHECK_LAUNCH();
  for (std::int64_t k = 0; k < n; ++k) {
    pivot_kernel<<<dense_blocks(n * n), dense_threads, 0, stream>>>(n, k, buffers[k % 2], buffers[(k + 1) % 2],
                                                                    singular.data());
    SPGEMM_CUDA_CHECK_LAUNCH();
  }
  return cuda::read_back(singular.data(), stream) == 0;
}

void dense_multiply(std::int64_t n, const double* m, const double* x, double* y, cudaStream_t stream) {
  if (n == 0) return;
  kernels::dense_multiply_kernel<<<dense_blocks(n * 32), kernels::dense_threads, 0, stream>>>(n, m, x, y);
  SPGEMM_CUDA_CHECK_LAUNCH();
}

}  // namespace spgemm::amg::gpu
