// The coarsest level's direct solve on the CPU: dense LU factors without
// pivoting (the level is symmetric positive definite), then two triangular
// solves per cycle.
#include <string>

#include "amg/cpu/passes.hpp"
#include "spgemm/errors.hpp"

namespace spgemm::amg::cpu {

std::vector<double> lu_factor(const csr_matrix<double>& a) {
  const std::int64_t n = a.rows;
  std::vector<double> lu(static_cast<std::size_t>(n * n), 0.0);
  for (std::int64_t i = 0; i < n; ++i) {
    for (offset_t k = a.row_offsets[i]; k < a.row_offsets[i + 1]; ++k) lu[i * n + a.col_indices[k]] = a.values[k];
  }
  for (std::int64_t k = 0; k < n; ++k) {
    const double pivot = lu[k * n + k];
    if (pivot == 0) throw_bad_input("the coarsest level is singular: zero pivot in row " + std::to_string(k));
    for (std::int64_t i = k + 1; i < n; ++i) {
      const double l = lu[i * n + k] / pivot;
      lu[i * n + k] = l;
      if (l == 0) continue;
      for (std::int64_t j = k + 1; j < n; ++j) lu[i * n + j] -= l * lu[k * n + j];
    }
  }
  return lu;
}

void lu_solve(const std::vector<double>& lu, std::int64_t n, const double* b, double* x) {
  for (std::int64_t i = 0; i < n; ++i) {
    double v = b[i];
    for (std::int64_t j = 0; j < i; ++j) v -= lu[i * n + j] * x[j];
    x[i] = v;
  }
  for (std::int64_t i = n - 1; i >= 0; --i) {
    double v = x[i];
    for (std::int64_t j = i + 1; j < n; ++j) v -= lu[i * n + j] * x[j];
    x[i] = v / lu[i * n + i];
  }
}

}  // namespace spgemm::amg::cpu
