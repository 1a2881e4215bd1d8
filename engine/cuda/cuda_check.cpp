#include "cuda/cuda_check.hpp"

#include <string>

#include "spgemm/errors.hpp"

namespace spgemm::cuda {

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  // Clear a non-sticky error so that it does not resurface at the next check.
  (void)cudaGetLastError();
  const std::string where = std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": ";
  if (status == cudaErrorMemoryAllocation) {
    throw error(error_kind::does_not_fit,
                where + "out of device memory (the job needs more than the GPU has free)");
  }
  throw error(error_kind::device_failure, where + cudaGetErrorString(status));
}

}  // namespace spgemm::cuda
