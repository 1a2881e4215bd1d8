// Fresh memory, mapped ahead of its writer on a thread of its own. Writing
// fresh memory costs a page fault and a zeroed page per page, more than the
// copy that fills it; madvise(MADV_POPULATE_WRITE) (Linux 5.14 and later)
// does that work here instead, piece by piece across the ranges, so the
// thread that assembles a matrix into them mostly finds its pages present.
// It never changes what the memory holds. Where the call is missing it does
// nothing.
#pragma once

#include <atomic>
#include <cstddef>
#include <thread>
#include <utility>
#include <vector>

namespace spgemm::wire {

class background_populate {
 public:
  // Populates the ranges [pointer, pointer + bytes) front to back, all of
  // them in step (they are written in step). They must stay mapped until
  // this object is destroyed.
  explicit background_populate(std::vector<std::pair<void*, std::size_t>> ranges);
  ~background_populate();  // stops after the current piece and waits
  background_populate(const background_populate&) = delete;
  background_populate& operator=(const background_populate&) = delete;

 private:
  void run();

  std::vector<std::pair<void*, std::size_t>> ranges_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace spgemm::wire
