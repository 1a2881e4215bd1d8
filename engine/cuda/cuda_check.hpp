// Checked CUDA calls for the engine's GPU code.
//
// SPGEMM_CUDA_CHECK(call) throws spgemm::error(device_failure,
// "<call> failed at file:line: <cudaGetErrorString>"); an allocation failure
// (cudaErrorMemoryAllocation) becomes error(does_not_fit) instead, so the
// caller can tell "too big" from "broken". SPGEMM_CUDA_CHECK_LAUNCH() goes
// after every kernel launch (cudaGetLastError).
#pragma once

#include <cuda_runtime_api.h>

namespace spgemm::cuda {

// Throws the spgemm::error for `status` (never returns).
[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line);

inline void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) throw_cuda_error(status, call, file, line);
}

}  // namespace spgemm::cuda

#define SPGEMM_CUDA_CHECK(call) ::spgemm::cuda::check_cuda((call), #call, __FILE__, __LINE__)
#define SPGEMM_CUDA_CHECK_LAUNCH() \
  ::spgemm::cuda::check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
