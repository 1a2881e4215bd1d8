// Counts what passes through to an upstream resource: the bytes in use and
// the most in use at once. A device's (backend::memory) and a job's (the peak
// it held, against its estimate). Thread-safe.
#pragma once

#include <atomic>
#include <cstddef>

#include "cuda/memory_resource.hpp"

namespace spgemm::cuda {

class statistics_resource final : public memory_resource {
 public:
  explicit statistics_resource(memory_resource& upstream) : upstream_(upstream) {}

  std::size_t in_use_bytes() const { return in_use_.load(); }
  std::size_t peak_bytes() const { return peak_.load(); }
  // Starts the peak again from what is in use now.
  void reset_peak() { peak_.store(in_use_.load()); }

 private:
  void* do_allocate(std::size_t bytes, cudaStream_t stream) override {
    void* p = upstream_.allocate(bytes, stream);
    const std::size_t now = in_use_.fetch_add(bytes) + bytes;
    std::size_t peak = peak_.load();
    while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
    }
    return p;
  }
  void do_deallocate(void* p, std::size_t bytes, cudaStream_t stream) noexcept override {
    upstream_.deallocate(p, bytes, stream);
    in_use_.fetch_sub(bytes);
  }

  memory_resource& upstream_;
  std::atomic<std::size_t> in_use_{0};
  std::atomic<std::size_t> peak_{0};
};

}  // namespace spgemm::cuda
