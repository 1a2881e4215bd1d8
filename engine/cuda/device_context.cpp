#include "cuda/device_context.hpp"

#include <mutex>

#include "cuda/cuda_check.hpp"

namespace spgemm::cuda {

stream_pool::~stream_pool() {
  int previous = -1;
  (void)cudaGetDevice(&previous);
  (void)cudaSetDevice(device_);
  for (const entry& e : all_) {
    (void)cudaEventDestroy(e.event);
    (void)cudaStreamDestroy(e.stream);
  }
  if (previous >= 0) (void)cudaSetDevice(previous);
}

stream_pool::lease stream_pool::acquire() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!free_.empty()) {
      const entry e = free_.back();
      free_.pop_back();
      return lease(*this, e);
    }
  }
  device_guard guard(device_);
  entry e;
  SPGEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&e.stream, cudaStreamNonBlocking));
  const cudaError_t status = cudaEventCreateWithFlags(&e.event, cudaEventDisableTiming);
  if (status != cudaSuccess) {
    (void)cudaStreamDestroy(e.stream);
    throw_cuda_error(status, "cudaEventCreateWithFlags", __FILE__, __LINE__);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  all_.push_back(e);
  return lease(*this, e);
}

void stream_pool::release(entry e) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(e);
}

device_context::device_context(int device_ordinal)
    : device(device_ordinal), pool(device_ordinal), streams(device_ordinal) {
  device_guard guard(device);
  cudaDeviceProp prop{};
  SPGEMM_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  gpu_name = prop.name;
  total_bytes = prop.totalGlobalMem;
  SPGEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&release_stream, cudaStreamNonBlocking));
}

device_context::~device_context() {
  int previous = -1;
  (void)cudaGetDevice(&previous);
  (void)cudaSetDevice(device);
  (void)cudaStreamSynchronize(release_stream);
  (void)cudaStreamDestroy(release_stream);
  if (previous >= 0) (void)cudaSetDevice(previous);
}

}  // namespace spgemm::cuda
