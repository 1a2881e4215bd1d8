// What the GPU suites share: the backend on device 0, the skip where no CUDA
// device is visible, and C = A * B on the GPU checked against its memory
// estimate and against the CPU reference.
#pragma once

#include <memory>
#include <type_traits>

#include <gtest/gtest.h>

#include "spgemm/backend.hpp"
#include "spgemm/reference.hpp"

#define SPGEMM_REQUIRE_GPU()                                                                \
  do {                                                                                      \
    if (::spgemm::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU tests skipped"; \
  } while (false)

namespace spgemm::testing {

inline const std::shared_ptr<backend>& gpu_backend() {
  static const std::shared_ptr<backend> instance = make_cuda_backend(0);
  return instance;
}

inline backend& gpu() { return *gpu_backend(); }

// Largest accepted |C - reference| per entry, relative to (|A||B|) there.
template <typename T>
double tolerance() {
  return std::is_same_v<T, float> ? 1e-5 : 1e-12;
}

// C = A * B on the GPU within its memory estimate: the engine refuses to
// pass it (error(does_not_fit)), and the job's own peak stays within it.
template <typename T>
csr_matrix<T> gpu_multiply(const csr_matrix<T>& a, const csr_matrix<T>& b, const multiply_options& options = {}) {
  backend& g = gpu();
  const auto sa = g.store(a);
  const auto sb = g.store(b);
  const memory_estimate estimate = g.estimate_multiply(*sa, *sb, options);
  std::size_t peak = 0;
  const auto sc = g.multiply(*sa, *sb, options, estimate.total(), {}, &peak);
  EXPECT_LE(peak, estimate.total()) << "the product held more than its estimate (" << estimate.method << ")";
  EXPECT_EQ(sc->info().rows, a.rows);
  EXPECT_EQ(sc->info().cols, b.cols);
  return std::get<csr_matrix<T>>(g.fetch(*sc));
}

template <typename T>
csr_matrix<T> gpu_multiply(const csr_matrix<T>& a, const csr_matrix<T>& b, algorithm algo) {
  multiply_options options;
  options.algo = algo;
  return gpu_multiply(a, b, options);
}

// The GPU product has the reference's structure exactly and its values
// within tolerance<T>().
template <typename T, typename How = multiply_options>
void expect_product(const csr_matrix<T>& a, const csr_matrix<T>& b, const How& how = {}) {
  const csr_matrix<T> c = gpu_multiply(a, b, how);
  const csr_matrix<T> ref = cpu_multiply(a, b);
  ASSERT_EQ(c.rows, ref.rows);
  ASSERT_EQ(c.cols, ref.cols);
  ASSERT_EQ(c.row_offsets, ref.row_offsets);
  ASSERT_EQ(c.col_indices, ref.col_indices);
  ASSERT_EQ(c.values.size(), ref.values.size());
  EXPECT_LE(scaled_max_error(c, ref, a, b), tolerance<T>());
}

}  // namespace spgemm::testing
