// A minimal fork-join loop for the CPU paths: no pool, threads live for one call.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace spgemm::detail {

inline int resolve_threads(int threads) {
  if (threads > 0) return threads;
  return std::max(1u, std::thread::hardware_concurrency());
}

// Calls body(part, begin, end) for `parts` contiguous slices of [0, n), one
// thread per slice (the caller's thread takes the first one, and those of
// threads that could not start). The first exception a slice threw (a failed
// allocation, a cancellation) is rethrown once every slice is done: one
// escaping a thread would end the process.
template <typename Body>
void parallel_slices(std::int64_t n, int parts, Body&& body) {
  parts = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(parts, n)));
  std::mutex failed_mutex;
  std::exception_ptr failed;
  auto slice = [&](int p) {
    try {
      body(p, n * p / parts, n * (p + 1) / parts);
    } catch (...) {
      std::lock_guard<std::mutex> lock(failed_mutex);
      if (!failed) failed = std::current_exception();
    }
  };
  std::vector<std::thread> workers;
  int started = 1;
  try {
    workers.reserve(parts - 1);
    for (; started < parts; ++started) workers.emplace_back(slice, started);
  } catch (...) {
  }
  for (int p = started; p < parts; ++p) slice(p);
  slice(0);
  for (auto& w : workers) w.join();
  if (failed) std::rethrow_exception(failed);
}

}  // namespace spgemm::detail
