#include "cuda/limiting_resource.hpp"

#include "spgemm/errors.hpp"

namespace spgemm::cuda {

void* limiting_resource::do_allocate(std::size_t bytes, cudaStream_t stream) {
  const std::size_t before = held_.fetch_add(bytes);
  if (bytes > limit_ || before > limit_ - bytes) {
    held_.fetch_sub(bytes);
    throw error(error_kind::does_not_fit, holder_ + ": asked for " + std::to_string(bytes) + " bytes more while holding " +
                                              std::to_string(before) + ", beyond its estimate of " +
                                              std::to_string(limit_) + " bytes (an engine error: the estimate is too small)");
  }
  try {
    return upstream_.allocate(bytes, stream);
  } catch (...) {
    held_.fetch_sub(bytes);
    throw;
  }
}

}  // namespace spgemm::cuda
