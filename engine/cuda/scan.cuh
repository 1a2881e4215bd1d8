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

// Where an item holds `marker`, the last item before it that does not (the
// first item must not): the lengths of rows that repeat the row before
// (planner/row_repeats.hpp), filled in after a structure pass skipped them.
template <typename V>
struct last_unmarked {
  V marker;
  __device__ V operator()(V before, V at) const { return at == marker ? before : at; }
};

// Storage of fill_marked_in_place over `items` values of type V.
template <typename V>
std::size_t fill_marked_bytes(std::int64_t items) {
  std::size_t bytes = 0;
  SPGEMM_CUDA_CHECK(
      cub::DeviceScan::InclusiveScan(nullptr, bytes, static_cast<V*>(nullptr), last_unmarked<V>{V{}}, items));
  return bytes;
}

// data[0, items) with every marked item replaced as last_unmarked says, on
// `stream`; the storage is drawn from `memory` and freed before it returns.
template <typename V>
void fill_marked_in_place(V* data, std::int64_t items, V marker, memory_resource& memory, cudaStream_t stream) {
  std::size_t bytes = fill_marked_bytes<V>(items);
  device_buffer<unsigned char> temp(memory, bytes, stream);
  SPGEMM_CUDA_CHECK(cub::DeviceScan::InclusiveScan(temp.data(), bytes, data, last_unmarked<V>{marker}, items, stream));
}

}  // namespace spgemm::cuda
