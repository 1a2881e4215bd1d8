// Host memory back to the OS once the server goes quiet. glibc keeps freed
// memory in its arena for reuse (spgemmd asks it to: M_TRIM_THRESHOLD, so
// that streams reuse their buffers while they run), so after a load the
// process would keep its peak: here, once calls have ended and none runs for
// a period, the owner's spare memory is dropped (`release`), and where the
// allocator holds 1 MiB or more free that it did not hold after the last
// trim, malloc_trim returns its pages. (It
// reaches the free chunks of every arena but the top of the main one only:
// spgemmd runs with one arena, M_ARENA_MAX, so that nothing stays out of reach.)
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace spgemmd {

class idle_release {
 public:
  // Looks every `period`: where `running()` is 0 now and was at the look
  // before, calls `release()` (where `ended()` changed since it last did)
  // and trims.
  idle_release(std::chrono::milliseconds period, std::function<uint64_t()> ended, std::function<int()> running,
               std::function<void()> release);
  ~idle_release();
  idle_release(const idle_release&) = delete;
  idle_release& operator=(const idle_release&) = delete;

 private:
  void run(std::chrono::milliseconds period);

  std::function<uint64_t()> ended_;
  std::function<int()> running_;
  std::function<void()> release_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace spgemmd
