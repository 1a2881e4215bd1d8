// One CUDA device as the engine uses it: a stream-ordered memory pool with
// byte counters, a small pool of streams, and a guard that makes the device
// current on the calling thread.
//
// Memory comes from the device's default cudaMemPool through cudaMallocAsync /
// cudaFreeAsync; its release threshold is UINT64_MAX so freed memory stays
// cached in the pool (no cudaMalloc per call, no trimming between jobs).
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace spgemm::cuda {

// Makes `device` current for the lifetime of the guard, restoring the previous one.
class device_guard {
 public:
  explicit device_guard(int device);
  ~device_guard();
  device_guard(const device_guard&) = delete;
  device_guard& operator=(const device_guard&) = delete;

 private:
  int previous_ = -1;
  int device_ = -1;
};

// Bytes allocated by one job, to check that it keeps its estimate.
struct job_meter {
  std::size_t in_use = 0;
  std::size_t peak = 0;
  void add(std::size_t bytes) {
    in_use += bytes;
    if (in_use > peak) peak = in_use;
  }
  void remove(std::size_t bytes) { in_use -= bytes; }
};

// Stream-ordered allocations from one device's pool, counted. Thread-safe.
class device_allocator {
 public:
  explicit device_allocator(int device);
  device_allocator(const device_allocator&) = delete;
  device_allocator& operator=(const device_allocator&) = delete;

  // Throws error(does_not_fit) when the pool cannot grow by `bytes`. Zero bytes: nullptr.
  void* allocate(std::size_t bytes, cudaStream_t stream);
  void deallocate(void* p, std::size_t bytes, cudaStream_t stream) noexcept;

  int device() const { return device_; }
  std::size_t in_use_bytes() const { return in_use_.load(); }
  std::size_t peak_bytes() const { return peak_.load(); }
  void reset_peak() { peak_.store(in_use_.load()); }

 private:
  int device_;
  cudaMemPool_t pool_ = nullptr;
  std::atomic<std::size_t> in_use_{0};
  std::atomic<std::size_t> peak_{0};
};

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

// What the kernels' launch configurations read of the current device: its
// SMs, the dynamic shared memory a block may opt in to (less 1 KB for the
// kernels' static shared memory) and whether a kernel may launch while the
// one before it in its stream finishes (programmatic dependent launch,
// Hopper on). Queried once per device, then cached.
struct device_facts {
  int sm_count = 132;
  std::size_t max_shared = 48 * 1024;
  bool dependent_launch = false;
};
device_facts current_device_facts();

// Lets `kernel` launch with `bytes` of dynamic shared memory. Called before
// every launch that uses any: static shared memory counts against the 48 KB
// default too.
void allow_dynamic_shared(const void* kernel, std::size_t bytes);

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
  device_allocator allocator;
  stream_pool streams;
  // Frees of stored matrices go here; all work on them finished before their
  // last reference went (every backend call synchronizes before it returns).
  cudaStream_t release_stream = nullptr;
};

}  // namespace spgemm::cuda
