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

// x * y and x + y, each rounded (nvcc would otherwise fuse them).
SPGEMM_HOST_DEVICE inline double mul_rounded(double x, double y) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(x, y);
#else
  return x * y;
#endif
}
SPGEMM_HOST_DEVICE inline double add_rounded(double x, double y) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(x, y);
#else
  return x + y;
#endif
}

// The block q (rows x columns; q(i, j) its entry, a reference) is
// orthonormalized in place; r (columns x columns, row-major) receives the
// upper triangular factor: q_before = q r. Products and sums rounded one by
// one, so that host and device give the same values.
template <typename Block>
SPGEMM_HOST_DEVICE inline void orthonormalize(Block q, std::int64_t rows, int columns, double* r) {
  for (int j = 0; j < columns; ++j) {
    double before = 0;
    for (std::int64_t i = 0; i < rows; ++i) before = add_rounded(before, mul_rounded(q(i, j), q(i, j)));
    const double threshold = candidate_tolerance * sqrt(before);
    for (int k = 0; k < j; ++k) {
      double dot = 0;
      for (std::int64_t i = 0; i < rows; ++i) dot = add_rounded(dot, mul_rounded(q(i, j), q(i, k)));
      for (std::int64_t i = 0; i < rows; ++i) q(i, j) = add_rounded(q(i, j), -mul_rounded(dot, q(i, k)));
      r[k * columns + j] = dot;
      r[j * columns + k] = 0;  // below the diagonal: written, as device memory starts as anything
    }
    double norm = 0;
    for (std::int64_t i = 0; i < rows; ++i) norm = add_rounded(norm, mul_rounded(q(i, j), q(i, j)));
    norm = sqrt(norm);
    const double scale = norm > threshold ? 1.0 / norm : 0.0;
    r[j * columns + j] = norm > threshold ? norm : 0.0;
    for (std::int64_t i = 0; i < rows; ++i) q(i, j) = mul_rounded(q(i, j), scale);
  }
}

}  // namespace spgemm::amg
