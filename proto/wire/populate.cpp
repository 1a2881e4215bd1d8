#include "wire/populate.hpp"

#include <sys/mman.h>

#include <cstdint>

namespace spgemm::wire {

background_populate::background_populate(std::vector<std::pair<void*, std::size_t>> ranges)
    : ranges_(std::move(ranges)) {
#ifdef MADV_POPULATE_WRITE
  thread_ = std::thread([this] { run(); });
#endif
}

background_populate::~background_populate() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void background_populate::run() {
#ifdef MADV_POPULATE_WRITE
  // Pieces of about 1/64 of each range: a stop waits for one piece at most,
  // and the ranges advance together.
  constexpr std::size_t pieces = 64;
  constexpr std::uintptr_t page = 4096;
  for (std::size_t i = 0; i < pieces && !stop_; ++i) {
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
