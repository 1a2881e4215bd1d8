// The entries of a CSR matrix that flags keep, as a CSR matrix of their own
// (a masked product's found entries, a selection, a top-k, a scaling): an
// exclusive scan of the flags gives every kept entry its place and every row
// its offset (the entries are in row order, so are the kept ones).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "cuda/device_buffer.hpp"
#include "cuda/device_csr.hpp"

namespace spgemm::cuda {

// CUB's storage for the scan of `nnz` + 1 positions.
std::size_t compact_scan_bytes(std::int64_t nnz);

// The entries of the rows x cols matrix (offsets, cols, nnz) whose flag
// (position[e], 1 or 0; position[nnz] = 0) is set, with `vals` as their
// values: scans `position` in place, then allocates C exactly from `memory`
// (with CUB's scan storage, compact_scan_bytes, freed before) and fills it.
// Reads nnz(C) back.
template <typename T>
device_csr<T> compact_entries(std::int64_t rows, std::int64_t cols, const offset_t* offsets, const index_t* col_indices,
                              std::int64_t nnz, const T* vals, device_buffer<offset_t>& position,
                              memory_resource& memory, cudaStream_t stream);

}  // namespace spgemm::cuda
