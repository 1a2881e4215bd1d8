// Strength of connection on the CPU: pyamg's symmetric measure, on the nodes
// of dense blocks by their Frobenius norms (amg/operations.hpp).
#include <cmath>
#include <string>

#include "amg/cpu/passes.hpp"
#include "planner/block_structure.hpp"
#include "spgemm/errors.hpp"

namespace spgemm::amg::cpu {

csr_matrix<float> strength(const csr_matrix<double>& a, int block_size, double theta) {
  const int b = block_size;
  if (a.rows != a.cols || b < 1 || a.rows % b != 0) {
    throw_bad_input("strength: a " + std::to_string(a.rows) + " x " + std::to_string(a.cols) +
                    " matrix has no square nodes of " + std::to_string(b) + " unknowns");
  }
  if (b > 1 && !(planner::detect_sizes(a.rows, a.cols, a.nnz(), a.row_offsets.data(), a.col_indices.data()) &
                 (1u << b))) {
    throw_bad_input("strength: the matrix is not made of dense " + std::to_string(b) + "x" + std::to_string(b) +
                    " blocks");
  }
  const std::int64_t n = a.rows / b;
  // Node I's row: the blocks of rows bI .. bI + b - 1 (block k: entries k b .. k b + b - 1 of each).
  auto blocks = [&](std::int64_t node) { return a.row_length(node * b) / b; };
  auto column = [&](std::int64_t node, std::int64_t k) { return a.col_indices[a.row_offsets[node * b] + k * b] / b; };
  auto norm = [&](std::int64_t node, std::int64_t k) {
    if (b == 1) return a.values[a.row_offsets[node] + k];
    double sum = 0;
    for (int r = 0; r < b; ++r) {
      const offset_t first = a.row_offsets[node * b + r] + k * b;
      for (int c = 0; c < b; ++c) sum += a.values[first + c] * a.values[first + c];
    }
    return std::sqrt(sum);
  };
  std::vector<double> diagonal(static_cast<std::size_t>(n), 0.0);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t k = 0; k < blocks(i); ++k) {
      if (column(i, k) == i) diagonal[i] = std::abs(norm(i, k));
    }
  }
  csr_matrix<float> s;
  s.rows = s.cols = n;
  s.row_offsets.assign(static_cast<std::size_t>(n) + 1, 0);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t k = 0; k < blocks(i); ++k) {
      const std::int64_t j = column(i, k);
      const double v = norm(i, k);
      if (j == i || v * v >= theta * theta * diagonal[i] * diagonal[j]) {
        s.col_indices.push_back(static_cast<index_t>(j));
        s.values.push_back(1.0f);
      }
    }
    s.row_offsets[i + 1] = s.nnz();
  }
  return s;
}

}  // namespace spgemm::amg::cpu
