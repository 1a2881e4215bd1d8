// Values of device memory back to the host: the synchronizing reads that size
// the next allocations (an nnz, a count of chunks or runs, a job's counters).
// They go through pinned memory, one buffer per thread: a read into pageable
// memory takes the driver's slower staging path, on every job.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstring>

#include "cuda/cuda_check.hpp"

namespace spgemm::cuda {

// The calling thread's pinned buffer, grown to at least `bytes`.
void* pinned_staging(std::size_t bytes);

// Copies n values from device memory to host, then synchronizes the stream.
template <typename V>
void read_back(const V* device_values, std::size_t n, V* host, cudaStream_t stream) {
  void* staging = pinned_staging(n * sizeof(V));
  SPGEMM_CUDA_CHECK(cudaMemcpyAsync(staging, device_values, n * sizeof(V), cudaMemcpyDeviceToHost, stream));
  SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::memcpy(host, staging, n * sizeof(V));
}

template <typename V>
V read_back(const V* device_value, cudaStream_t stream) {
  V host{};
  read_back(device_value, 1, &host, stream);
  return host;
}

}  // namespace spgemm::cuda
