// Dense b x b block structure: the rule that says a CSR matrix is made of
// dense blocks, which the per-job rule reads (the block method,
// engine/block/, runs where A and B share a size) and the block method builds
// on. Shared by the detection kernel (planner/statistics.cu) and a host
// version (tests, references). Host-only header (no CUDA headers); the
// per-row and per-entry rules are __host__ __device__ so the kernel applies
// the very same functions.
//
// The rule, for a candidate b in {6, 4, 3, 2} (rows and columns multiples of
// b, nnz a multiple of b * b): for every block row I, the rows bI .. bI+b-1
// have identical column lists, and each row's sorted column list is made of
// complete aligned groups: the entry at position k * b + c has column
// b * J + c. Multi-dof FEM matrices (elasticity: 3 unknowns per node, 6 for
// shells) have it when their rows are numbered node-major (row = b * node +
// component). A matrix without entries has every size its shape allows.
//
// Where it holds, block row I of the matrix is a CSR row of blocks: its k-th
// block has block column col[row_offsets[bI] + k b] / b, and scalar row
// bI + r of it starts at row_offsets[bI] + r * b * len(I), len(I) blocks.
// A size's multiples need not hold (2-blocked is not 4-blocked), but a
// 6-blocked matrix is also 3- and 2-blocked and a 4-blocked one 2-blocked:
// the detection keeps every size that holds, so that A (6) times B (3) runs
// with 3.
#pragma once

#include <cstdint>

#include "planner/host_device.hpp"
#include "spgemm/csr.hpp"

namespace spgemm::planner {

// Bit b set: the matrix has the rule for size b. Bits 2, 3, 4, 6 only.
using size_mask = unsigned;

// The candidate sizes, largest first: candidate_size(0 .. candidate_count - 1).
inline constexpr int candidate_count = 4;
SPGEMM_HOST_DEVICE constexpr int candidate_size(int i) { return i == 0 ? 6 : (i == 1 ? 4 : (i == 2 ? 3 : 2)); }

// The sizes a rows x cols matrix of nnz entries may have by its shape alone.
inline size_mask shape_candidates(std::int64_t rows, std::int64_t cols, std::int64_t nnz) {
  size_mask m = 0;
  for (int i = 0; i < candidate_count; ++i) {
    const int b = candidate_size(i);
    if (rows % b == 0 && cols % b == 0 && nnz % (std::int64_t{b} * b) == 0) m |= 1u << b;
  }
  return m;
}

// The largest size in `m`, 1 where none.
inline int largest_size(size_mask m) {
  for (int i = 0; i < candidate_count; ++i)
    if (m & (1u << candidate_size(i))) return candidate_size(i);
  return 1;
}

// The block size of C = A * B: the largest size both operands have (A's
// column blocks must be B's row blocks), 1 where they share none.
inline int common_size(size_mask a, size_mask b) { return largest_size(a & b); }

// A row of `length` entries whose block row starts with a row of
// `lead_length` entries: same length, whole groups.
SPGEMM_HOST_DEVICE inline bool row_fits(int b, std::int64_t length, std::int64_t lead_length) {
  return length == lead_length && length % b == 0;
}

// The entry at position k of a row, column `col`: `previous` is the column
// at k - 1 (read only where k % b != 0), `lead` the column at position k of
// the first row of the block row (`col` itself in that row).
SPGEMM_HOST_DEVICE inline bool entry_fits(int b, std::int64_t k, index_t col, index_t previous, index_t lead) {
  const int c = static_cast<int>(k % b);
  return col % b == c && (c == 0 || col == previous + 1) && col == lead;
}

// The host version of the detection (one pass per candidate size), over a
// CSR structure with sorted unique columns.
inline size_mask detect_sizes(std::int64_t rows, std::int64_t cols, std::int64_t nnz, const offset_t* row_offsets,
                              const index_t* col_indices) {
  size_mask found = 0;
  const size_mask candidates = shape_candidates(rows, cols, nnz);
  for (int i = 0; i < candidate_count; ++i) {
    const int b = candidate_size(i);
    if (!(candidates & (1u << b))) continue;
    bool fits = true;
    for (std::int64_t r = 0; r < rows && fits; ++r) {
      const std::int64_t lead = r - r % b;
      const offset_t begin = row_offsets[r];
      const offset_t lead_begin = row_offsets[lead];
      fits = row_fits(b, row_offsets[r + 1] - begin, row_offsets[lead + 1] - lead_begin);
      for (std::int64_t k = 0; fits && k < row_offsets[r + 1] - begin; ++k) {
        fits = entry_fits(b, k, col_indices[begin + k], k > 0 ? col_indices[begin + k - 1] : 0,
                          col_indices[lead_begin + k]);
      }
    }
    if (fits) found |= 1u << b;
  }
  return found;
}

template <typename T>
size_mask detect_sizes(const csr_matrix<T>& m) {
  return detect_sizes(m.rows, m.cols, m.nnz(), m.row_offsets.data(), m.col_indices.data());
}

}  // namespace spgemm::planner
