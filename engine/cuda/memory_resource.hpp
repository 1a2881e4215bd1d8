// Device memory as the engine draws it: a resource with the stream explicit
// on every call (the shape of RMM's device_memory_resource), and adaptors
// that compose one feature each around an upstream resource: counts
// (statistics_resource.hpp), a hard cap (limiting_resource.hpp). The device's
// pool is one resource (pool_resource.hpp). The GPU backend counts a device's
// bytes with a statistics resource around its pool, and runs each job on a
// statistics resource around a limiting resource capped at the job's
// estimate: the estimate is a promise the engine keeps.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace spgemm::cuda {

class memory_resource {
 public:
  memory_resource() = default;
  virtual ~memory_resource() = default;
  memory_resource(const memory_resource&) = delete;
  memory_resource& operator=(const memory_resource&) = delete;

  // `bytes` of device memory, usable in stream order on `stream`; nullptr
  // for 0 bytes. Throws error(does_not_fit) where the resource can not give them.
  void* allocate(std::size_t bytes, cudaStream_t stream) { return bytes == 0 ? nullptr : do_allocate(bytes, stream); }
  // Frees `p`, allocated with `bytes`, in stream order on `stream`.
  void deallocate(void* p, std::size_t bytes, cudaStream_t stream) noexcept {
    if (p != nullptr) do_deallocate(p, bytes, stream);
  }

 private:
  virtual void* do_allocate(std::size_t bytes, cudaStream_t stream) = 0;
  virtual void do_deallocate(void* p, std::size_t bytes, cudaStream_t stream) noexcept = 0;
};

}  // namespace spgemm::cuda
