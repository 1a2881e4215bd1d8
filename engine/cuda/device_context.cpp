#include "cuda/device_context.hpp"

#include <array>
#include <cstdint>
#include <mutex>

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
  SPGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  f.max_shared = static_cast<std::size_t>(v) - 1024;  // room for the kernels' static shared memory
  SPGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMajor, device));
  f.dependent_launch = v >= 9;
  if (device >= 0 && device < 64) {
    cache[device] = f;
    known[device] = true;
  }
  return f;
}

void allow_dynamic_shared(const void* kernel, std::size_t bytes) {
  if (bytes > 0) {
    SPGEMM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(bytes)));
  }
}

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
