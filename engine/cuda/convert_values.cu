#include "cuda/convert_values.hpp"

#include <algorithm>
#include <cstdint>

#include "cuda/cuda_check.hpp"

namespace spgemm::cuda {
namespace {

constexpr int threads_per_block = 256;

unsigned blocks_for(std::int64_t n) {
  const std::int64_t b = (n + threads_per_block - 1) / threads_per_block;
  return static_cast<unsigned>(std::min<std::int64_t>(std::max<std::int64_t>(b, 1), 1 << 20));
}

template <typename To, typename From>
__global__ void convert_kernel(const From* __restrict__ in, To* __restrict__ out, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    out[i] = static_cast<To>(in[i]);
  }
}

}  // namespace

template <typename To, typename From>
device_buffer<To> convert_values(const From* in, std::size_t n, memory_resource& memory, cudaStream_t stream) {
  device_buffer<To> out(memory, n, stream);
  if (n > 0) {
    convert_kernel<To, From><<<blocks_for(static_cast<std::int64_t>(n)), threads_per_block, 0, stream>>>(
        in, out.data(), static_cast<std::int64_t>(n));
    SPGEMM_CUDA_CHECK_LAUNCH();
  }
  return out;
}

template device_buffer<float> convert_values(const double*, std::size_t, memory_resource&, cudaStream_t);
template device_buffer<double> convert_values(const float*, std::size_t, memory_resource&, cudaStream_t);

}  // namespace spgemm::cuda
