// One value of device memory back to the host: the synchronizing read that
// sizes the next allocation (an nnz, a count of chunks or runs).
#pragma once

#include <cuda_runtime_api.h>

#include "cuda/cuda_check.hpp"

namespace spgemm::cuda {

template <typename V>
V read_back(const V* device_value, cudaStream_t stream) {
  V host{};
  SPGEMM_CUDA_CHECK(cudaMemcpyAsync(&host, device_value, sizeof(V), cudaMemcpyDeviceToHost, stream));
  SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  return host;
}

}  // namespace spgemm::cuda
