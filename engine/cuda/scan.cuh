// Scans of a job's arrays by CUB (the two-call pattern: the storage asked
// for, drawn from the job's memory, then the scan run), for the host
// dispatch of the methods (.cu files: it includes CUB).
#pragma once

#include <cub/device/device_scan.cuh>

#include <cstddef>
#include <cstdint>

#include "cuda/cuda_check.hpp"
#include "cuda/device_buffer.hpp"

namespace spgemm::cuda {

// Storage of an in-place exclusive sum of `items` values of type V.
template <typename V>
std::size_t exclusive_scan_bytes(std::int64_t items) {
  std::size_t bytes = 0;
  SPGEMM_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<V*>(nullptr), items));
  return bytes;
}

// Storage of an in-place inclusive sum of `items` values of type V.
template <typename V>
std::size_t inclusive_scan_bytes(std::int64_t items) {
  std::size_t bytes = 0;
  SPGEMM_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, static_cast<V*>(nullptr), items));
  return bytes;
}

// data[0, items) replaced by its exclusive sum, on `stream`; the storage is
// drawn from `memory` and freed (stream-ordered) before it returns.
template <typename V>
void exclusive_scan_in_place(V* data, std::int64_t items, memory_resource& memory, cudaStream_t stream) {
  std::size_t bytes = exclusive_scan_bytes<V>(items);
  device_buffer<unsigned char> temp(memory, bytes, stream);
  SPGEMM_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.data(), bytes, data, items, stream));
}

}  // namespace spgemm::cuda
