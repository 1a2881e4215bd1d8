#include "cpu/host_memory.hpp"

#include <cstdint>

#include "spgemm/errors.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#endif

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

void advise_huge_pages(void* p, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t first = (begin + huge - 1) & ~(huge - 1);
  const std::uintptr_t last = (begin + bytes) & ~(huge - 1);
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

}  // namespace spgemm::cpu
