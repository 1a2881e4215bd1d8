// A hard cap around an upstream resource: an allocation that would take the
// bytes held through it beyond `limit` (a job's estimate) is refused with
// error(does_not_fit) naming the holder and both numbers, before the upstream
// is asked. The GPU backend caps every job at its estimate with it: an
// estimate that is too small fails the job loudly instead of overrunning the
// scheduler's budget. Thread-safe.
#pragma once

#include <atomic>
#include <cstddef>
#include <string>

#include "cuda/memory_resource.hpp"

namespace spgemm::cuda {

class limiting_resource final : public memory_resource {
 public:
  // `holder` names what the cap is for in the error, e.g. "hash".
  limiting_resource(memory_resource& upstream, std::size_t limit, std::string holder)
      : upstream_(upstream), limit_(limit), holder_(std::move(holder)) {}

  std::size_t limit() const { return limit_; }
  std::size_t in_use_bytes() const { return held_.load(); }

 private:
  void* do_allocate(std::size_t bytes, cudaStream_t stream) override;
  void do_deallocate(void* p, std::size_t bytes, cudaStream_t stream) noexcept override {
    upstream_.deallocate(p, bytes, stream);
    held_.fetch_sub(bytes);
  }

  memory_resource& upstream_;
  const std::size_t limit_;
  const std::string holder_;
  std::atomic<std::size_t> held_{0};
};

}  // namespace spgemm::cuda
