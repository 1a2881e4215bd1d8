// Vector kernels' dispatch (gpu_passes.hpp; vector_kernels.cuh).
#include <algorithm>

#include "amg/gpu/gpu_passes.hpp"
#include "amg/gpu/vector_kernels.cuh"
#include "cuda/cuda_check.hpp"
#include "cuda/read_back.hpp"

namespace spgemm::amg::gpu {
namespace {

unsigned blocks_for(std::int64_t n, std::int64_t per_thread_items = 1) {
  const std::int64_t b = (n / per_thread_items + kernels::threads - 1) / kernels::threads;
  return static_cast<unsigned>(std::clamp<std::int64_t>(b, 1, 1 << 16));
}

template <int G>
void launch_spmv(const cuda::csr_view<double>& a, const double* x, double alpha, double beta, double* y,
                 cudaStream_t stream) {
  kernels::spmv_kernel<G><<<blocks_for(a.rows * G), kernels::threads, 0, stream>>>(
      a.rows, a.row_offsets, a.col_indices, a.values, x, alpha, beta, y);
  SPGEMM_CUDA_CHECK_LAUNCH();
}

template <int G>
void launch_inverse_diagonal(const cuda::csr_view<double>& a, double* inverse, double* inverse_sqrt,
                             unsigned long long* first_bad, cudaStream_t stream) {
  kernels::inverse_diagonal_kernel<G><<<blocks_for(a.rows * G), kernels::threads, 0, stream>>>(
      a.rows, a.row_offsets, a.col_indices, a.values, inverse, inverse_sqrt, first_bad);
  SPGEMM_CUDA_CHECK_LAUNCH();
}

}  // namespace

void hashed(std::int64_t n, double* out, cudaStream_t stream) {
  if (n == 0) return;
  kernels::hashed_kernel<<<blocks_for(n), kernels::threads, 0, stream>>>(n, out);
  SPGEMM_CUDA_CHECK_LAUNCH();
}

void axpby(std::int64_t n, double a, const double* x, double b, double* y, cudaStream_t stream) {
  if (n == 0) return;
  kernels::axpby_kernel<<<blocks_for(n), kernels::threads, 0, stream>>>(n, a, x, b, y);
  SPGEMM_CUDA_CHECK_LAUNCH();
}

void scaled_axpby(std::int64_t n, double a, const double* d, const double* x, double b, double* y,
                  cudaStream_t stream) {
  if (n == 0) return;
  kernels::scaled_axpby_kernel<<<blocks_for(n), kernels::threads, 0, stream>>>(n, a, d, x, b, y);
  SPGEMM_CUDA_CHECK_LAUNCH();
}

double dot(std::int64_t n, const double* x, const double* y, cuda::memory_resource& memory, cudaStream_t stream) {
  if (n == 0) return 0;
  const int parts = static_cast<int>(std::min<std::int64_t>(kernels::dot_blocks, blocks_for(n)));
  cuda::device_buffer<double> partial(memory, static_cast<std::size_t>(parts), stream);
  kernels::dot_partial_kernel<<<parts, kernels::threads, 0, stream>>>(n, x, y, partial.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  kernels::dot_final_kernel<<<1, kernels::threads, 0, stream>>>(parts, partial.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  return cuda::read_back(partial.data(), stream);
}

void spmv(const cuda::csr_view<double>& a, const double* x, double alpha, double beta, double* y,
          cudaStream_t stream) {
  if (a.rows == 0) return;
  switch (group_width(a.nnz / a.rows)) {
    case 2: return launch_spmv<2>(a, x, alpha, beta, y, stream);
    case 4: return launch_spmv<4>(a, x, alpha, beta, y, stream);
    case 8: return launch_spmv<8>(a, x, alpha, beta, y, stream);
    case 16: return launch_spmv<16>(a, x, alpha, beta, y, stream);
    default: return launch_spmv<32>(a, x, alpha, beta, y, stream);
  }
}

std::int64_t inverse_diagonals(const cuda::csr_view<double>& a, double* inverse, double* inverse_sqrt,
                               cuda::memory_resource& memory, cudaStream_t stream) {
  if (a.rows == 0) return -1;
  cuda::device_buffer<unsigned long long> first_bad(memory, 1, stream);
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(first_bad.data(), 0xff, sizeof(unsigned long long), stream));
  switch (group_width(a.nnz / a.rows)) {
    case 2: launch_inverse_diagonal<2>(a, inverse, inverse_sqrt, first_bad.data(), stream); break;
    case 4: launch_inverse_diagonal<4>(a, inverse, inverse_sqrt, first_bad.data(), stream); break;
    case 8: launch_inverse_diagonal<8>(a, inverse, inverse_sqrt, first_bad.data(), stream); break;
    case 16: launch_inverse_diagonal<16>(a, inverse, inverse_sqrt, first_bad.data(), stream); break;
    default: launch_inverse_diagonal<32>(a, inverse, inverse_sqrt, first_bad.data(), stream); break;
  }
  const unsigned long long bad = cuda::read_back(first_bad.data(), stream);
  return bad == ~0ull ? -1 : static_cast<std::int64_t>(bad);
}

}  // namespace spgemm::amg::gpu
