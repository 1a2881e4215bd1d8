#include "cuda/pool_resource.hpp"

#include <cstdint>
#include <string>

#include "cuda/cuda_check.hpp"
#include "cuda/device_guard.hpp"

namespace spgemm::cuda {

pool_resource::pool_resource(int device) {
  device_guard guard(device);
  SPGEMM_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool_, device));
  std::uint64_t threshold = UINT64_MAX;
  SPGEMM_CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &threshold));
}

std::size_t pool_resource::cached_bytes() const {
  std::uint64_t reserved = 0;
  std::uint64_t used = 0;
  SPGEMM_CUDA_CHECK(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReservedMemCurrent, &reserved));
  SPGEMM_CUDA_CHECK(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrUsedMemCurrent, &used));
  return reserved > used ? static_cast<std::size_t>(reserved - used) : 0;
}

void pool_resource::trim_to(std::size_t keep_bytes) {
  std::uint64_t used = 0;
  SPGEMM_CUDA_CHECK(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrUsedMemCurrent, &used));
  SPGEMM_CUDA_CHECK(cudaMemPoolTrimTo(pool_, static_cast<std::size_t>(used) + keep_bytes));
}

void* pool_resource::do_allocate(std::size_t bytes, cudaStream_t stream) {
  void* p = nullptr;
  const cudaError_t status = cudaMallocFromPoolAsync(&p, bytes, pool_, stream);
  if (status != cudaSuccess) {
    throw_cuda_error(status, ("cudaMallocFromPoolAsync(" + std::to_string(bytes) + " bytes)").c_str(), __FILE__,
                     __LINE__);
  }
  return p;
}

void pool_resource::do_deallocate(void* p, std::size_t, cudaStream_t stream) noexcept {
  (void)cudaFreeAsync(p, stream);
}

}  // namespace spgemm::cuda
