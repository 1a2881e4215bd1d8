// Fresh memory, mapped ahead of its writer on a thread of its own. Writing
// fresh memory costs a page fault and a zeroed page per page, more than the
// copy that fills it; madvise(MADV_POPULATE_WRITE) (Linux 5.14 and later)
// does that work here instead, piece by piece across the ranges, so the
// thread that assembles a matrix into them mostly finds its pages present.
// It maps only as far as the writer lets it (allow): memory is committed as
// the data for it arrives, never for what a header merely claims. It never
// changes what the memory holds. Where the call is missing it does nothing.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace spgemm::wire {

class background_populate {
 public:
  // Populates the ranges [pointer, pointer + bytes) front to back, all of
  // them in step (they are written in step), as far as allow() says. They
  // must stay mapped until this object is destroyed.
  explicit background_populate(std::vector<std::pair<void*, std::size_t>> ranges);
  ~background_populate();  // stops after the current piece and waits
  background_populate(const background_populate&) = delete;
  background_populate& operator=(const background_populate&) = delete;

  // Lets it map the first `fraction` (0 to 1) of every range.
  void allow(double fraction);

 private:
  // Pieces of about 1/64 of each range: a stop waits for one piece at most,
  // and the ranges advance together.
  static constexpr std::size_t pieces = 64;

  void run();

  std::vector<std::pair<void*, std::size_t>> ranges_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::size_t allowed_ = 0;  // pieces
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace spgemm::wire
