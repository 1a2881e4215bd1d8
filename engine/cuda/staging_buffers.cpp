#include "cuda/staging_buffers.hpp"

#include <cuda_runtime_api.h>

#include <mutex>
#include <vector>

namespace spgemm::cuda {

namespace {

class staging_cache {
 public:
  void* acquire() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!free_.empty()) {
        void* p = free_.back();
        free_.pop_back();
        return p;
      }
    }
    void* p = nullptr;
    if (cudaHostAlloc(&p, staging_bytes, cudaHostAllocPortable) != cudaSuccess) {
      (void)cudaGetLastError();
      return nullptr;
    }
    return p;
  }
  void release(void* p) {
    if (p == nullptr) return;
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(p);
  }
  void trim(std::size_t keep) {
    std::vector<void*> spare;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      while (free_.size() > keep) {
        spare.push_back(free_.back());
        free_.pop_back();
      }
    }
    for (void* p : spare) (void)cudaFreeHost(p);
  }

 private:
  std::mutex mutex_;
  std::vector<void*> free_;
};

staging_cache& cache() {
  static auto* c = new staging_cache;  // never destroyed: pinned memory outlives static teardown order
  return *c;
}

}  // namespace

void* acquire_staging() { return cache().acquire(); }

void release_staging(void* p) { cache().release(p); }

void trim_staging(std::size_t keep) { cache().trim(keep); }

}  // namespace spgemm::cuda
