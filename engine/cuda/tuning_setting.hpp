// Tuning settings from the environment, for benchmark sweeps and for tests
// that force one path or another. Read per job: tests change them.
#pragma once

#include <cstdint>
#include <cstdlib>

namespace spgemm::cuda {

// The setting `name` (an integer; negative reads as 0), else `fallback`.
inline std::int64_t tuning_setting(const char* name, std::int64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  const long long x = std::atoll(v);
  return static_cast<std::int64_t>(x < 0 ? 0 : x);
}

}  // namespace spgemm::cuda
