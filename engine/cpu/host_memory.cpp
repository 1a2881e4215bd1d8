#include "cpu/host_memory.hpp"

#include "spgemm/errors.hpp"

namespace spgemm::cpu {

void job_memory::take(std::size_t bytes) {
  std::size_t before = held_.load();
  do {
    if (bytes > limit_ || before > limit_ - bytes) {
      throw error(error_kind::does_not_fit, holder_ + ": asked for " + std::to_string(bytes) +
                                                " bytes more while holding " + std::to_string(before) +
                                                ", beyond its estimate of " + std::to_string(limit_) +
                                                " bytes (an engine error: the estimate is too small)");
    }
  } while (!held_.compare_exchange_weak(before, before + bytes));
  std::size_t peak = peak_.load();
  while (before + bytes > peak && !peak_.compare_exchange_weak(peak, before + bytes)) {
  }
  if (backend_ != nullptr) backend_->add(bytes);
}

}  // namespace spgemm::cpu
