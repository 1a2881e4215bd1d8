// CSR checks on the device, for matrices that arrive device to device (CUDA
// IPC) and never pass the host: the structural rules of spgemm/validate.hpp.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "cuda/device_csr.hpp"

namespace spgemm::cuda {

// The first problem of `m`'s structure in words, or an empty string where it
// is valid: row offsets from 0, never decreasing, ending at nnz; columns in
// [0, cols), sorted and unique within each row. Two kernels, each read back
// (synchronizing `stream`): the offsets first, since the column pass trusts
// them. Workspace: one 8-byte counter from `memory`.
std::string find_structure_problem(const structure_view& m, memory_resource& memory, cudaStream_t stream);

}  // namespace spgemm::cuda
