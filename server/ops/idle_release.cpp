#include "ops/idle_release.hpp"

#include <malloc.h>

#include <utility>

namespace spgemmd {

idle_release::idle_release(std::chrono::milliseconds period, std::function<uint64_t()> ended,
                           std::function<int()> running, std::function<void()> release)
    : ended_(std::move(ended)), running_(std::move(running)), release_(std::move(release)) {
  thread_ = std::thread([this, period] { run(period); });
}

idle_release::~idle_release() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void idle_release::run(std::chrono::milliseconds period) {
  uint64_t released_at = ended_();
  bool quiet_before = false;  // nothing ran at the look before
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, period, [&] { return stop_; })) {
    const bool quiet = running_() == 0;
    const uint64_t ended = ended_();
    if (quiet && quiet_before && ended != released_at) {
      release_();
      malloc_trim(0);
      released_at = ended;
    }
    quiet_before = quiet;
  }
}

}  // namespace spgemmd
