// Rows of a device CSR matrix copied into a matrix of their own, on the same
// device or from another one (peer-to-peer): the row panels of a product too
// large for one device, and B copied to every device a product is split over.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/device_csr.hpp"
#include "cuda/memory_resource.hpp"

namespace spgemm::cuda {

// Rows [row_begin, row_end) of `src`, which lives on device `src_device`,
// into a new matrix on the current device (from `memory`, on `stream`, a
// stream of the current device), offsets rebased to 0. Device to device:
// cudaMemcpyPeerAsync from another GPU (direct where peer access is enabled),
// never staged by this code through host memory. Complete on `stream`.
template <typename T>
device_csr<T> copy_rows(const device_csr<T>& src, int src_device, std::int64_t row_begin, std::int64_t row_end,
                        memory_resource& memory, cudaStream_t stream);

}  // namespace spgemm::cuda
