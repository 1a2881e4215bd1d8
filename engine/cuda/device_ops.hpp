// Small device operations of the CUDA backend: value conversion (the
// transpose: cuda/transpose.hpp). Host-callable; kernels live in device_ops.cu.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "cuda/device_csr.hpp"
#include "spgemm/multiply.hpp"

namespace spgemm::cuda {

// out[i] = To(in[i]) for i < n, into a new buffer from `memory`.
template <typename To, typename From>
device_buffer<To> convert_values(const From* in, std::size_t n, memory_resource& memory,
                                 cudaStream_t stream);

}  // namespace spgemm::cuda
