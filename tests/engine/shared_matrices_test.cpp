// Every matrix of the shared folder: read, valid, and its square by the CPU
// reference checked (independently where small, for thread-count
// independence everywhere).
#include <map>

#include <gtest/gtest.h>

#include "spgemm/io.hpp"
#include "spgemm/multiply.hpp"
#include "spgemm/reference.hpp"
#include "spgemm/validate.hpp"
#include "test_matrices.hpp"

namespace spgemm {
namespace {

TEST(SharedMatrices, ReadValidAndSquaredConsistently) {
  const auto files = testing::shared_matrix_files();
  if (files.empty()) GTEST_SKIP() << "no shared matrices found (set SPGEMM_MATRICES): skipped";
  for (const auto& file : files) {
    SCOPED_TRACE(file);
    const auto a = testing::with_random_values(read_matrix_market(file), 42);
    ASSERT_EQ(find_csr_problem(a), "");
    ASSERT_GT(a.nnz(), 0);
    if (a.rows != a.cols) continue;
    const auto stats = compute_product_stats(a, a);
    const auto c = cpu_multiply(a, a, 4);
    EXPECT_EQ(find_csr_problem(c), "");
    EXPECT_LE(c.nnz(), stats.nnz_c_bound);
    const auto single = cpu_multiply(a, a, 1);
    EXPECT_EQ(single.col_indices, c.col_indices);
    EXPECT_EQ(single.values, c.values);
    if (stats.products <= 3'000'000) {
      // Independent check: the transpose identity (A A)^T = A^T A^T.
      const auto t = cpu_transpose(a);
      const auto ct = cpu_transpose(cpu_multiply(t, t, 2));
      EXPECT_LE(scaled_max_error(ct, c, a, a), 1e-12);
    }
  }
}

}  // namespace
}  // namespace spgemm
