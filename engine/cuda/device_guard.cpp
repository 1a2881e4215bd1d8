#include "cuda/device_guard.hpp"

#include <cuda_runtime_api.h>

#include "cuda/cuda_check.hpp"

namespace spgemm::cuda {

device_guard::device_guard(int device) : device_(device) {
  SPGEMM_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ != device_) SPGEMM_CUDA_CHECK(cudaSetDevice(device_));
}

device_guard::~device_guard() {
  if (previous_ != device_ && previous_ >= 0) (void)cudaSetDevice(previous_);
}

}  // namespace spgemm::cuda
