// Host bytes as the CPU backend counts them: the CPU side of the GPU's
// statistics and limiting resources (engine/cuda/). Arrays live in
// std::vectors; every array of a product is taken from its job_memory before
// it is allocated and given back once freed, so that a product keeps its
// estimate as a GPU job does. Thread-safe.
#pragma once

#include <atomic>
#include <cstddef>
#include <string>

namespace spgemm::cpu {

// Bytes in use and the most in use at once.
class byte_counter {
 public:
  void add(std::size_t bytes) {
    const std::size_t now = in_use_.fetch_add(bytes) + bytes;
    std::size_t peak = peak_.load();
    while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
    }
  }
  void remove(std::size_t bytes) { in_use_.fetch_sub(bytes); }
  std::size_t in_use() const { return in_use_.load(); }
  std::size_t peak() const { return peak_.load(); }
  void reset_peak() { peak_.store(in_use_.load()); }

 private:
  std::atomic<std::size_t> in_use_{0};
  std::atomic<std::size_t> peak_{0};
};

// One product's bytes, capped at `limit` (its estimate) and counted, and
// passed on to the backend's counter where there is one.
class job_memory {
 public:
  job_memory(std::size_t limit, std::string holder, byte_counter* backend = nullptr)
      : limit_(limit), holder_(std::move(holder)), backend_(backend) {}
  job_memory(const job_memory&) = delete;
  job_memory& operator=(const job_memory&) = delete;

  // Counts `bytes` more. Throws error(does_not_fit) naming the holder and
  // both numbers where they would take the job beyond its limit.
  void take(std::size_t bytes);
  void give_back(std::size_t bytes) {
    held_.fetch_sub(bytes);
    if (backend_ != nullptr) backend_->remove(bytes);
  }
  std::size_t peak_bytes() const { return peak_.load(); }

  // Holds `bytes` of a job for its lifetime (an array's scope).
  class hold {
   public:
    hold(job_memory& memory, std::size_t bytes) : memory_(memory), bytes_(bytes) { memory_.take(bytes_); }
    ~hold() { memory_.give_back(bytes_); }
    hold(const hold&) = delete;
    hold& operator=(const hold&) = delete;

   private:
    job_memory& memory_;
    std::size_t bytes_;
  };

 private:
  const std::size_t limit_;
  const std::string holder_;
  byte_counter* backend_;
  std::atomic<std::size_t> held_{0};
  std::atomic<std::size_t> peak_{0};
};

}  // namespace spgemm::cpu
