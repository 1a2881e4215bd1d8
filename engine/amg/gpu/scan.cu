// The exclusive sums that turn the setup passes' row counts into offsets
// (gpu_passes.hpp): CUB's device scan, its temporary storage from the pass's
// memory resource.
#include <cub/device/device_scan.cuh>

#include "amg/gpu/gpu_passes.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/read_back.hpp"

namespace spgemm::amg::gpu {

std::int64_t exclusive_sum(offset_t* out, std::int64_t n, cuda::memory_resource& memory, cudaStream_t stream) {
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(out + n, 0, sizeof(offset_t), stream));
  std::size_t bytes = 0;
  SPGEMM_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, out, n + 1, stream));
  cuda::device_buffer<unsigned char> temp(memory, bytes, stream);
  SPGEMM_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.data(), bytes, out, n + 1, stream));
  return static_cast<std::int64_t>(cuda::read_back(out + n, stream));
}

}  // namespace spgemm::amg::gpu
