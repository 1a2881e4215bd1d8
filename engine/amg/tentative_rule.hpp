// The orthonormalization of one aggregate's block of the near null space,
// shared by the CPU pass and the GPU kernel (a thread per aggregate): modified
// Gram-Schmidt over the columns, as pyamg's fit_candidates (amg_core), with
// its threshold: a column whose norm after orthogonalization is at most
// 1e-10 of its norm before is numerically zero and set to zero.
#pragma once

#include <cmath>
#include <cstdint>

#include "planner/host_device.hpp"

namespace spgemm::amg {

inline constexpr double candidate_tolerance = 1e-10;

// q: rows x columns, row-major, orthonormalized in place; r: columns x
// columns, row-major, the upper triangular factor (q_before = q r).
SPGEMM_HOST_DEVICE inline void orthonormalize(double* q, std::int64_t rows, int columns, double* r) {
  for (int j = 0; j < columns; ++j) {
    double before = 0;
    for (std::int64_t i = 0; i < rows; ++i) before += q[i * columns + j] * q[i * columns + j];
    const double threshold = candidate_tolerance * sqrt(before);
    for (int k = 0; k < j; ++k) {
      double dot = 0;
      for (std::int64_t i = 0; i < rows; ++i) dot += q[i * columns + j] * q[i * columns + k];
      for (std::int64_t i = 0; i < rows; ++i) q[i * columns + j] -= dot * q[i * columns + k];
      r[k * columns + j] = dot;
    }
    double norm = 0;
    for (std::int64_t i = 0; i < rows; ++i) norm += q[i * columns + j] * q[i * columns + j];
    norm = sqrt(norm);
    const double scale = norm > threshold ? 1.0 / norm : 0.0;
    r[j * columns + j] = norm > threshold ? norm : 0.0;
    for (std::int64_t i = 0; i < rows; ++i) q[i * columns + j] *= scale;
  }
}

}  // namespace spgemm::amg
