// CSR matrices in device memory: device_csr<T> owns its arrays, csr_view<T>
// and structure_view are non-owning views that kernels and dispatch take.
// Row offsets are int64, columns int32, as on the host (spgemm/csr.hpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <variant>

#include "cuda/cuda_check.hpp"
#include "cuda/device_buffer.hpp"
#include "spgemm/csr.hpp"

namespace spgemm::cuda {

// The structure of a CSR matrix (no values).
struct structure_view {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t nnz = 0;
  const offset_t* row_offsets = nullptr;  // rows + 1
  const index_t* col_indices = nullptr;   // nnz
};

template <typename T>
struct csr_view {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t nnz = 0;
  const offset_t* row_offsets = nullptr;
  const index_t* col_indices = nullptr;
  const T* values = nullptr;

  structure_view structure() const { return {rows, cols, nnz, row_offsets, col_indices}; }
};

template <typename T>
struct device_csr {
  using value = T;

  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t nnz = 0;
  // The allocations the arrays lie in (an allocation costs the host a few
  // microseconds, a large share of a small job): `offsets_storage` holds the
  // row offsets where they were allocated before nnz was known (a product's),
  // `storage` the entries, or everything (allocate_csr).
  device_buffer<unsigned char> offsets_storage;
  device_buffer<unsigned char> storage;
  device_span<offset_t> row_offsets;  // rows + 1 entries, starts at 0
  device_span<index_t> col_indices;
  device_span<T> values;

  csr_view<T> view() const {
    return {rows, cols, nnz, row_offsets.data(), col_indices.data(), values.data()};
  }
  matrix_info info() const { return {rows, cols, nnz, value_type_of<T>()}; }
  void bind_stream(cudaStream_t stream) {
    offsets_storage.bind_stream(stream);
    storage.bind_stream(stream);
  }
  // A job's result outlives the job's resources: its memory goes back through `memory`.
  void bind_resource(memory_resource& memory) {
    offsets_storage.bind_resource(memory);
    storage.bind_resource(memory);
  }
};

using any_device_csr = std::variant<device_csr<float>, device_csr<double>>;

// Bytes of a CSR matrix with these sizes (as device_csr::bytes()).
inline std::size_t csr_bytes(std::int64_t rows, std::int64_t nnz, std::size_t value_bytes) {
  return static_cast<std::size_t>(rows + 1) * sizeof(offset_t) +
         static_cast<std::size_t>(nnz) * (sizeof(index_t) + value_bytes);
}

// A rows x cols product before its entries are known: offsets allocated,
// nothing written; columns and values not yet.
template <typename T>
device_csr<T> with_offsets(std::int64_t rows, std::int64_t cols, memory_resource& memory, cudaStream_t stream) {
  device_csr<T> c;
  c.rows = rows;
  c.cols = cols;
  const auto offsets = static_cast<std::size_t>(rows) + 1;
  c.offsets_storage = device_buffer<unsigned char>(memory, offsets * sizeof(offset_t), stream);
  c.row_offsets = array_carver(c.offsets_storage.data()).next<offset_t>(offsets);
  return c;
}

// The same with the offsets zeroed (an empty row stays empty).
template <typename T>
device_csr<T> with_zero_offsets(std::int64_t rows, std::int64_t cols, memory_resource& memory, cudaStream_t stream) {
  device_csr<T> c = with_offsets<T>(rows, cols, memory, stream);
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(c.row_offsets.data(), 0, c.row_offsets.bytes(), stream));
  return c;
}

// Columns and values for nnz entries in one allocation (values first, so
// both keep their natural alignment with no padding: csr_bytes stays exact).
template <typename T>
void allocate_entries(device_csr<T>& m, std::int64_t nnz, memory_resource& memory, cudaStream_t stream) {
  const auto n = static_cast<std::size_t>(nnz);
  m.nnz = nnz;
  m.storage = device_buffer<unsigned char>(memory, n * (sizeof(T) + sizeof(index_t)), stream);
  array_carver carve(m.storage.data());
  m.values = carve.next<T>(n);
  m.col_indices = carve.next<index_t>(n);
}

// A rows x cols matrix of nnz entries in one allocation (offsets, values,
// columns: each naturally aligned, no padding); nothing copied yet.
template <typename T>
device_csr<T> allocate_csr(std::int64_t rows, std::int64_t cols, std::int64_t nnz, memory_resource& memory,
                           cudaStream_t stream);

// Copies offsets row_begin .. row_end (both included) and the entries between
// them from host arrays indexed as the whole matrix `d` (absolute offsets),
// as upload does; synchronized.
template <typename T>
void upload_rows(device_csr<T>& d, const offset_t* row_offsets, const index_t* col_indices, const T* values,
                 std::int64_t row_begin, std::int64_t row_end, cudaStream_t stream);

// Copies a host matrix to the device (large arrays through cached pinned
// staging buffers, double-buffered; synchronized).
template <typename T>
device_csr<T> upload(const csr_matrix<T>& m, memory_resource& memory, cudaStream_t stream);

// Rows [row_begin, row_end) back to the host, offsets rebased to 0 (large
// arrays through pinned staging, as upload; synchronized).
template <typename T>
csr_matrix<T> download_rows(const device_csr<T>& m, std::int64_t row_begin, std::int64_t row_end,
                            cudaStream_t stream);

// The same rows handed to `sink` (spgemm/csr.hpp): large arrays a piece at a
// time straight from the pinned staging buffers, no host copy of the rows.
template <typename T>
void download_rows_to(const device_csr<T>& m, std::int64_t row_begin, std::int64_t row_end, rows_sink& sink,
                      cudaStream_t stream);

// Appends rows [row_begin, row_end) to the host matrix `out` (m's columns):
// its offsets continue out's, the entries are copied once, from pinned
// staging into out's arrays (grown in place: no zero-filled resize);
// synchronized.
template <typename T>
void append_rows(const device_csr<T>& m, std::int64_t row_begin, std::int64_t row_end, csr_matrix<T>& out,
                 cudaStream_t stream);

}  // namespace spgemm::cuda
