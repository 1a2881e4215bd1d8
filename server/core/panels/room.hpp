// The bytes a lane may hold on its device at once (its reservation there,
// less its copy of B): taken before a panel's rows of A and its product are
// allocated, given back as they are freed or leave the device. A panel waits
// here while the panels before it drain. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>

#include "spgemm/multiply.hpp"

namespace spgemmd::core {

class room {
 public:
  explicit room(std::size_t capacity) : capacity_(capacity) {}

  std::size_t capacity() const { return capacity_; }
  // Waits until `bytes` more fit (at most the capacity); false where `stop`
  // was cancelled first.
  bool take(std::size_t bytes, const spgemm::cancel_token& stop) {
    std::unique_lock<std::mutex> lock(mu_);
    while (held_ + bytes > capacity_) {
      if (stop.cancelled()) return false;
      cv_.wait_for(lock, poll);
    }
    held_ += bytes;
    return true;
  }
  void give_back(std::size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      held_ -= bytes;
    }
    cv_.notify_all();
  }
  // Waits until everything taken was given back.
  void wait_empty() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return held_ == 0; });
  }

 private:
  // How often a wait looks at its stop token.
  static constexpr std::chrono::milliseconds poll{5};

  const std::size_t capacity_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::size_t held_ = 0;
};

}  // namespace spgemmd::core
