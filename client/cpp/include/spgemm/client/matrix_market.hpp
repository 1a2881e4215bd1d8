// The client's own CSR and Matrix Market files (.mtx, and .mtx.gz compressed
// with gzip), so that the client needs neither the engine nor CUDA.
//
// Reads `matrix coordinate` files with `real`, `integer` or `pattern` fields
// (pattern entries get the value 1.0) and `general` or `symmetric` storage
// (symmetric files store one triangle; it is mirrored on read). Entries may
// come in any order; columns come out sorted within each row. A duplicated
// entry is an error naming both lines. Writes `real general` with `%.17g`
// values, gzip-compressed (level 1: fast, ~25% larger than level 6) when the
// path ends in `.gz`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
void write_matrix_market(const std::string& path, const csr_matrix& m);

}  // namespace spgemm::client
