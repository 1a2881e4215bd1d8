// The calls in flight and how many have ended: shutdown waits for the calls
// in flight to end (within its grace), and host memory goes back to the OS
// once calls have ended and none runs (ops/idle_release.hpp).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace spgemmd {

class call_count {
 public:
  // Counts one call from its construction to its destruction (a reactor's member).
  class in_flight {
   public:
    explicit in_flight(call_count& c) : count_(c) { count_.begin(); }
    ~in_flight() { count_.end(); }
    in_flight(const in_flight&) = delete;
    in_flight& operator=(const in_flight&) = delete;

   private:
    call_count& count_;
  };

  int running() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return running_;
  }
  uint64_t ended() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return ended_;
  }
  // Waits until no call is in flight, or until `deadline`; whether none is.
  bool wait_idle(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(mutex_);
    return idle_.wait_until(lock, deadline, [&] { return running_ == 0; });
  }

 private:
  void begin() {
    std::lock_guard<std::mutex> lock(mutex_);
    ++running_;
  }
  void end() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      --running_;
      ++ended_;
    }
    idle_.notify_all();
  }

  mutable std::mutex mutex_;
  std::condition_variable idle_;
  int running_ = 0;
  uint64_t ended_ = 0;
};

}  // namespace spgemmd
