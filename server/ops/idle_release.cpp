#include "ops/idle_release.hpp"

#include <malloc.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <utility>

#include "ops/log.hpp"

namespace spgemmd {

namespace {

// The process's resident bytes (/proc/self/statm), or -1.
int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  if (!(statm >> pages >> resident)) return -1;
  return resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

// Free bytes in the allocator's arena worth a trim.
constexpr std::size_t trim_from = 1 << 20;

}  // namespace

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
  std::size_t free_after_trim = 0;  // what the last trim could not give back
  bool quiet_before = false;        // nothing ran at the look before
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, period, [&] { return stop_; })) {
    const bool quiet = running_() == 0;
    if (quiet && quiet_before) {
      const uint64_t ended = ended_();
      if (ended != released_at) {
        release_();
        released_at = ended;
      }
      // Free memory the allocator holds (freed by the calls, and by the
      // connections that closed after them), where there is new.
      const std::size_t free = mallinfo2().fordblks;
      if (free >= trim_from && free != free_after_trim) {
        const int64_t before = resident_bytes();
        malloc_trim(0);
        free_after_trim = mallinfo2().fordblks;
        const int64_t after = resident_bytes();
        if (before - after >= static_cast<int64_t>(trim_from)) {
          log_event("info", "memory_released", {{"rss_before_bytes", before}, {"rss_after_bytes", after}});
        }
      }
    }
    quiet_before = quiet;
  }
}

}  // namespace spgemmd
