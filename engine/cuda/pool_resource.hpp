// One device's stream-ordered pool as a memory resource: its default
// cudaMemPool through cudaMallocFromPoolAsync / cudaFreeAsync. The release
// threshold is UINT64_MAX, so freed memory stays cached in the pool (no
// cudaMalloc per call, no trimming between jobs) until trim_to. Thread-safe.
#pragma once

#include <cuda_runtime_api.h>

#include "cuda/memory_resource.hpp"

namespace spgemm::cuda {

class pool_resource final : public memory_resource {
 public:
  explicit pool_resource(int device);

  // Freed memory the pool holds beyond what is allocated from it.
  std::size_t cached_bytes() const;
  // Gives freed memory back to the driver until the pool holds at most
  // keep_bytes beyond what is allocated from it.
  void trim_to(std::size_t keep_bytes);

 private:
  // Throws error(does_not_fit) when the pool can not grow by `bytes`.
  void* do_allocate(std::size_t bytes, cudaStream_t stream) override;
  void do_deallocate(void* p, std::size_t bytes, cudaStream_t stream) noexcept override;

  cudaMemPool_t pool_ = nullptr;
};

}  // namespace spgemm::cuda
