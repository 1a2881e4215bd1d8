// The work of each row of A in C = A * B, measured on the device: its
// entries and its scalar products. What the server reads to cut A into row
// panels that each fit a device with their product (spgemm::row_work).
#pragma once

#include <cuda_runtime_api.h>

#include "cuda/device_csr.hpp"
#include "cuda/memory_resource.hpp"
#include "spgemm/multiply.hpp"

namespace spgemm::planner {

// One kernel (a warp per row of A) and one copy back; holds 16 bytes per row
// of A from `memory` until it returns.
row_work compute_row_work(const cuda::structure_view& a, const cuda::structure_view& b,
                          cuda::memory_resource& memory, cudaStream_t stream);

}  // namespace spgemm::planner
