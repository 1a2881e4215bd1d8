// One CUDA device as the engine uses it: its stream-ordered pool counted by
// a statistics resource and a small pool of streams.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

#include "cuda/device_guard.hpp"
#include "cuda/pool_resource.hpp"
#include "cuda/statistics_resource.hpp"

namespace spgemm::cuda {

// Non-blocking streams, reused: acquire() hands one out (creating it when none
// is free), the lease gives it back. Each stream comes with an event, reused
// with it, for ordering streams (record, then wait): creating events per use
// cost more host time than the launches they ordered. Thread-safe.
class stream_pool {
 public:
  explicit stream_pool(int device) : device_(device) {}
  ~stream_pool();
  stream_pool(const stream_pool&) = delete;
  stream_pool& operator=(const stream_pool&) = delete;

  struct entry {
    cudaStream_t stream = nullptr;
    cudaEvent_t event = nullptr;
  };

  class lease {
   public:
    lease(stream_pool& pool, entry e) : pool_(&pool), entry_(e) {}
    ~lease() { pool_->release(entry_); }
    lease(const lease&) = delete;
    lease& operator=(const lease&) = delete;
    cudaStream_t get() const { return entry_.stream; }
    cudaEvent_t event() const { return entry_.event; }

   private:
    stream_pool* pool_;
    entry entry_;
  };

  lease acquire();

 private:
  void release(entry e);

  int device_;
  std::mutex mutex_;
  std::vector<entry> free_;
  std::vector<entry> all_;
};

// Everything a backend and its stored matrices share; stored matrices hold it
// by shared_ptr so that their memory can be freed after the backend is gone.
struct device_context {
  explicit device_context(int device);
  ~device_context();
  device_context(const device_context&) = delete;
  device_context& operator=(const device_context&) = delete;

  int device;
  std::string gpu_name;
  std::size_t total_bytes = 0;
  pool_resource pool;
  // Every allocation on the device goes through it (backend::memory()).
  statistics_resource memory{pool};
  stream_pool streams;
  // Frees of stored matrices go here; all work on them finished before their
  // last reference went (every backend call synchronizes before it returns).
  cudaStream_t release_stream = nullptr;
};

}  // namespace spgemm::cuda
