// The client's own CSR and Matrix Market files (.mtx, and .mtx.gz compressed
// with gzip), so that the client needs neither the engine nor CUDA.
//
// Reads `matrix coordinate` files with `real`, `integer` or `pattern` fields
// (pattern entries get the value 1.0) and `general` or `symmetric` storage
// (symmetric files store one triangle; it is mirrored on read). Entries may
// come in any order; columns come out sorted within each row. A duplicated
// entry is an error naming both lines. Writes `real general` with `%.17g`
// values, gzip-compressed (level 1: fast, ~25% larger than level 6) when the
// path ends in `.gz`, into a hidden file beside the path that is renamed to it
// once complete: a reader never sees half a file, and a failed or interrupted
// write leaves none.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "spgemm/client/progress.hpp"

namespace spgemm::client {

// A CSR matrix on the client: 64-bit row offsets, 32-bit column indices
// (strictly increasing within a row), double values.
struct csr_matrix {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<std::int64_t> row_offsets = {0};  // rows + 1 entries, starts at 0
  std::vector<std::int32_t> col_indices;        // nnz entries
  std::vector<double> values;                   // nnz entries

  std::int64_t nnz() const { return static_cast<std::int64_t>(col_indices.size()); }
};

// Throws spgemm::client::Error: NOT_FOUND when the file cannot be opened,
// INVALID_ARGUMENT naming the file, the line and the problem when it is
// malformed.
csr_matrix read_matrix_market(const std::string& path);

// Throws spgemm::client::Error (INTERNAL) when the file cannot be written.
// `on_progress` sees the rows and (uncompressed) bytes written so far, about
// every MiB; an exception it throws stops the write and removes the partial
// file. A path that exists and is not a regular file (/dev/stdout, a pipe) is
// written in place.
void write_matrix_market(const std::string& path, const csr_matrix& m, const progress_callback& on_progress = {});

}  // namespace spgemm::client
