// Values converted on the device (operands of another value type than C).
// Host-callable; the kernel lives in convert_values.cu.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "cuda/device_buffer.hpp"

namespace spgemm::cuda {

// out[i] = To(in[i]) for i < n, into a new buffer from `memory`.
template <typename To, typename From>
device_buffer<To> convert_values(const From* in, std::size_t n, memory_resource& memory, cudaStream_t stream);

}  // namespace spgemm::cuda
