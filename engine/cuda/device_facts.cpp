#include "cuda/device_facts.hpp"

#include <cuda_runtime_api.h>

#include <array>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <utility>

#include "cuda/cuda_check.hpp"

namespace spgemm::cuda {

device_facts current_device_facts() {
  static std::mutex mutex;
  static std::array<device_facts, 64> cache;
  static std::array<bool, 64> known{};
  int device = 0;
  SPGEMM_CUDA_CHECK(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mutex);
  if (device >= 0 && device < 64 && known[device]) return cache[device];
  device_facts f;
  int v = 0;
  SPGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, device));
  f.sm_count = v;
  SPGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  f.max_threads_per_sm = v;
  SPGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  f.max_shared = static_cast<std::size_t>(v) - 1024;  // room for the kernels' static shared memory
  SPGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMajor, device));
  f.dependent_launch = v >= 9;
  SPGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrL2CacheSize, device));
  f.l2_bytes = static_cast<std::size_t>(v);
  if (device >= 0 && device < 64) {
    cache[device] = f;
    known[device] = true;
  }
  return f;
}

void allow_max_dynamic_shared(const void* kernel) {
  static std::shared_mutex mutex;
  static std::set<std::pair<int, const void*>> allowed;  // (device, kernel)
  int device = 0;
  SPGEMM_CUDA_CHECK(cudaGetDevice(&device));
  const auto key = std::make_pair(device, kernel);
  {
    std::shared_lock<std::shared_mutex> lock(mutex);
    if (allowed.count(key) != 0) return;
  }
  std::unique_lock<std::shared_mutex> lock(mutex);
  if (allowed.count(key) != 0) return;
  cudaFuncAttributes attributes{};
  SPGEMM_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  int optin = 0;
  SPGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const int largest = optin - static_cast<int>(attributes.sharedSizeBytes);
  SPGEMM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, largest));
  allowed.insert(key);
}

}  // namespace spgemm::cuda
