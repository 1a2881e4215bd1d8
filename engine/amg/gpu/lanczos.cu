// The Lanczos steps on the device (gpu_passes.hpp; lanczos_kernels.cuh).
#include <algorithm>
#include <cstring>
#include <vector>

#include "amg/gpu/gpu_passes.hpp"
#include "amg/gpu/lanczos_kernels.cuh"
#include "cuda/cuda_check.hpp"
#include "cuda/dependent_launch.cuh"
#include "cuda/read_back.hpp"

namespace spgemm::amg::gpu {
namespace {

unsigned fixed_grid(std::int64_t items, int most) {
  const std::int64_t b = (items + kernels::lanczos_threads - 1) / kernels::lanczos_threads;
  return static_cast<unsigned>(std::clamp<std::int64_t>(b, 1, most));
}

template <int G>
void apply(const cuda::csr_view<double>& a, const double* s, const double* u, const double* v, double* w,
           unsigned grid, int k, const kernels::lanczos_state& st, cudaStream_t stream) {
  cuda::launch_dependent(&kernels::lanczos_apply_kernel<G>, dim3(grid), dim3(kernels::lanczos_threads), stream, a.rows,
                         a.row_offsets, a.col_indices, a.values, s, u, v, w, k, st);
}

}  // namespace

void lanczos(const cuda::csr_view<double>& a, const double* s, double* v, double* u, double* w, double* prev,
             int steps, std::vector<double>& alpha, std::vector<double>& beta, cuda::memory_resource& memory,
             cudaStream_t stream) {
  alpha.clear();
  beta.clear();
  const std::int64_t n = a.rows;
  if (n == 0 || steps < 1) return;
  // alpha, beta, then `stopped` and `arrived` in one word, then the partial sums.
  const auto words = static_cast<std::size_t>(2 * steps + 1 + kernels::lanczos_parts);
  cuda::device_buffer<double> storage(memory, words, stream);
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(storage.data(), 0, storage.bytes(), stream));
  auto* flags = reinterpret_cast<int*>(storage.data() + 2 * steps);
  const kernels::lanczos_state st{storage.data(), storage.data() + steps, flags,
                                  reinterpret_cast<unsigned*>(flags + 1), storage.data() + 2 * steps + 1};
  const int lanes = group_width(a.nnz / n);
  const unsigned apply_grid = fixed_grid(n * lanes, kernels::lanczos_parts);
  const unsigned vector_grid = fixed_grid(n, kernels::lanczos_vector_blocks);
  for (int k = 0; k < steps; ++k) {
    switch (lanes) {
      case 2: apply<2>(a, s, u, v, w, apply_grid, k, st, stream); break;
      case 4: apply<4>(a, s, u, v, w, apply_grid, k, st, stream); break;
      case 8: apply<8>(a, s, u, v, w, apply_grid, k, st, stream); break;
      case 16: apply<16>(a, s, u, v, w, apply_grid, k, st, stream); break;
      default: apply<32>(a, s, u, v, w, apply_grid, k, st, stream); break;
    }
    if (k + 1 == steps) break;
    cuda::launch_dependent(&kernels::lanczos_orthogonalize_kernel, dim3(vector_grid), dim3(kernels::lanczos_threads),
                           stream, n, k, v, prev, w, st);
    cuda::launch_dependent(&kernels::lanczos_next_kernel, dim3(vector_grid), dim3(kernels::lanczos_threads), stream, n, k,
                           s, w, prev, u, st);
    std::swap(prev, v);  // the old v is the next prev; the next v was written over the old prev
  }
  std::vector<double> host(static_cast<std::size_t>(2 * steps + 1));
  cuda::read_back(storage.data(), host.size(), host.data(), stream);
  int stopped = 0;
  std::memcpy(&stopped, &host[static_cast<std::size_t>(2 * steps)], sizeof stopped);
  const int taken = stopped > 0 ? stopped : steps;
  alpha.assign(host.begin(), host.begin() + taken);
  beta.assign(host.begin() + steps, host.begin() + steps + taken - 1);
}

}  // namespace spgemm::amg::gpu
