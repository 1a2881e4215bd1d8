// The GPU entry points of an engine built without CUDA (SPGEMM_WITH_CUDA=OFF).
#include "spgemm/backend.hpp"
#include "spgemm/errors.hpp"

namespace spgemm {

int cuda_device_count() { return 0; }

std::vector<algorithm> cuda_algorithms() { return {}; }

std::vector<algorithm> cuda_masked_algorithms() { return {}; }

std::shared_ptr<backend> make_cuda_backend(int ordinal) {
  throw error(error_kind::device_failure,
              "cuda:" + std::to_string(ordinal) + " is not available: this engine was built without CUDA");
}

std::vector<std::shared_ptr<backend>> open_cuda_backends(const std::vector<int>& ordinals) {
  if (ordinals.empty()) return {};
  return {make_cuda_backend(ordinals.front())};  // throws: no CUDA here
}

}  // namespace spgemm
