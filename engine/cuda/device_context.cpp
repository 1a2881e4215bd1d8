#include "cuda/device_context.hpp"

#include <cstdint>

#include "cuda/cuda_check.hpp"

namespace spgemm::cuda {

device_guard::device_guard(int device) : device_(device) {
  SPGEMM_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ != device_) SPGEMM_CUDA_CHECK(cudaSetDevice(device_));
}

device_guard::~device_guard() {
  if (previous_ != device_ && previous_ >= 0) (void)cudaSetDevice(previous_);
}

device_allocator::device_allocator(int device) : device_(device) {
  device_guard guard(device_);
  SPGEMM_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool_, device_));
  std::uint64_t threshold = UINT64_MAX;
  SPGEMM_CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &threshold));
}

void* device_allocator::allocate(std::size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return nullptr;
  void* p = nullptr;
  const cudaError_t status = cudaMallocFromPoolAsync(&p, bytes, pool_, stream);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    if (status == cudaErrorMemoryAllocation) {
      throw_cuda_error(status, ("cudaMallocFromPoolAsync(" + std::to_string(bytes) + " bytes)").c_str(),
                       __FILE__, __LINE__);
    }
    throw_cuda_error(status, "cudaMallocFromPoolAsync", __FILE__, __LINE__);
  }
  const std::size_t now = in_use_.fetch_add(bytes) + bytes;
  std::size_t peak = peak_.load();
  while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
  }
  return p;
}

void device_allocator::deallocate(void* p, std::size_t bytes, cudaStream_t stream) noexcept {
  if (p == nullptr) return;
  (void)cudaFreeAsync(p, stream);
  in_use_.fetch_sub(bytes);
}

stream_pool::~stream_pool() {
  int previous = -1;
  (void)cudaGetDevice(&previous);
  (void)cudaSetDevice(device_);
  for (cudaStream_t s : all_) (void)cudaStreamDestroy(s);
  if (previous >= 0) (void)cudaSetDevice(previous);
}

stream_pool::lease stream_pool::acquire() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!free_.empty()) {
      cudaStream_t s = free_.back();
      free_.pop_back();
      return lease(*this, s);
    }
  }
  device_guard guard(device_);
  cudaStream_t s = nullptr;
  SPGEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::lock_guard<std::mutex> lock(mutex_);
  all_.push_back(s);
  return lease(*this, s);
}

void stream_pool::release(cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(stream);
}

device_context::device_context(int device_ordinal)
    : device(device_ordinal), allocator(device_ordinal), streams(device_ordinal) {
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
