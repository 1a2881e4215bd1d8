#include "wire/populate.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace spgemm::wire {

background_populate::background_populate(std::vector<std::pair<void*, std::size_t>> ranges)
    : ranges_(std::move(ranges)) {
#ifdef MADV_POPULATE_WRITE
  thread_ = std::thread([this] { run(); });
#endif
}

background_populate::~background_populate() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void background_populate::allow(double fraction) {
  const auto n = static_cast<std::size_t>(std::ceil(std::clamp(fraction, 0.0, 1.0) * pieces));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (n <= allowed_) return;
    allowed_ = n;
  }
  changed_.notify_one();
}

void background_populate::run() {
#ifdef MADV_POPULATE_WRITE
  constexpr std::uintptr_t page = 4096;
  for (std::size_t i = 0; i < pieces; ++i) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || allowed_ > i; });
      if (stop_) return;
    }
    for (const auto& [pointer, bytes] : ranges_) {
      const auto base = reinterpret_cast<std::uintptr_t>(pointer);
      const std::uintptr_t begin = (base + bytes * i / pieces + page - 1) & ~(page - 1);
      const std::uintptr_t end = (base + bytes * (i + 1) / pieces) & ~(page - 1);
      // An error (an old kernel: EINVAL) leaves the pages to the writer.
      if (end > begin && madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE) != 0) return;
    }
  }
#endif
}

}  // namespace spgemm::wire
