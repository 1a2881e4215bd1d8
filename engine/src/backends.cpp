#include "spgemm/backend.hpp"

namespace spgemm {

std::vector<std::shared_ptr<backend>> open_default_backends() {
  std::vector<std::shared_ptr<backend>> backends;
  const int gpus = cuda_device_count();
  for (int ordinal = 0; ordinal < gpus; ++ordinal) backends.push_back(make_cuda_backend(ordinal));
  if (backends.empty()) backends.push_back(make_cpu_backend());
  return backends;
}

}  // namespace spgemm
