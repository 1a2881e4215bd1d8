// A minimal fork-join loop for the CPU paths: no pool, threads live for one call.
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace spgemm::detail {

inline int resolve_threads(int threads) {
  if (threads > 0) return threads;
  return std::max(1u, std::thread::hardware_concurrency());
}

// Calls body(part, begin, end) for `parts` contiguous slices of [0, n), one
// thread per slice (the caller's thread takes the first one).
template <typename Body>
void parallel_slices(std::int64_t n, int parts, Body&& body) {
  parts = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(parts, n)));
  auto slice = [&](int p) {
    body(p, n * p / parts, n * (p + 1) / parts);
  };
  std::vector<std::thread> workers;
  workers.reserve(parts - 1);
  for (int p = 1; p < parts; ++p) workers.emplace_back(slice, p);
  slice(0);
  for (auto& w : workers) w.join();
}

}  // namespace spgemm::detail
