// The block method (engine/block/) beyond the cases every method passes
// (gpu_methods_test.cpp): operands of dense b x b blocks of every size,
// square and rectangular, with empty block rows; the size it detects (in the
// estimate's method) where the structure holds, nearly holds, or differs
// between A and B; block rows of C in shared memory and in global memory;
// values equal to the CPU reference (it adds in the reference's order and
// rounding), bit-identical across runs. Skips where no CUDA device is visible.
#include <cstring>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "planner/block_structure.hpp"
#include "spgemm/backend.hpp"
#include "spgemm/generate.hpp"
#include "spgemm/reference.hpp"
#include "gpu_test_support.hpp"
#include "test_matrices.hpp"

namespace spgemm {
namespace {

using testing::gpu;
using testing::gpu_multiply;

// The method the estimate names for C = A * B with `algo`.
template <typename T>
std::string method_of(const csr_matrix<T>& a, const csr_matrix<T>& b, algorithm algo) {
  multiply_options options;
  options.algo = algo;
  backend& g = gpu();
  return g.estimate_multiply(*g.store(a), *g.store(b), options).method;
}

// C = A * B with the block method: the reference's structure and its values
// exactly (== also takes -0 for +0: the accumulators start at zero), within
// the estimate (gpu_multiply checks it), run with block size `expected`.
template <typename T>
void expect_exact(const csr_matrix<T>& a, const csr_matrix<T>& b, int expected) {
  // The host rule agrees with the expectation; the detection kernel with both.
  EXPECT_EQ(planner::common_size(planner::detect_sizes(a), planner::detect_sizes(b)), expected);
  const std::string method = method_of(a, b, algorithm::block);
  EXPECT_EQ(method.rfind("block b" + std::to_string(expected) + ",", 0), 0u) << method;
  const csr_matrix<T> c = gpu_multiply(a, b, algorithm::block);
  const csr_matrix<T> ref = cpu_multiply(a, b);
  ASSERT_EQ(c.rows, ref.rows);
  ASSERT_EQ(c.cols, ref.cols);
  ASSERT_EQ(c.row_offsets, ref.row_offsets);
  ASSERT_EQ(c.col_indices, ref.col_indices);
  EXPECT_EQ(c.values, ref.values);
}

class GpuBlock : public ::testing::Test {
 protected:
  void SetUp() override { SPGEMM_REQUIRE_GPU(); }
};

// elasticity3d:2 (8 nodes, each a neighbour of every other) is a dense 24 x 24
// matrix: 6-blocked (and 4-, 3-, 2-), the largest size wins.
TEST_F(GpuBlock, Elasticity) {
  for (const auto& [spec, size] : {std::pair{"elasticity3d:1", 3}, std::pair{"elasticity3d:2", 6},
                                   std::pair{"elasticity3d:3", 3}, std::pair{"elasticity3d:5", 3},
                                   std::pair{"elasticity3d:9", 3}}) {
    SCOPED_TRACE(spec);
    const auto a = testing::with_random_values(generate(spec), 11);
    expect_exact(a, a, size);
    expect_exact(convert_values<float>(a), convert_values<float>(a), size);
    // auto takes the block method for it.
    const std::string method = method_of(a, a, algorithm::automatic);
    EXPECT_EQ(method.rfind("auto: block b" + std::to_string(size), 0), 0u) << method;
  }
}

// Random block patterns of every size, square and rectangular, block rows of
// 0 .. max blocks; wide B: block rows of C beyond a group's shared memory
// (global accumulators) beside short ones.
TEST_F(GpuBlock, RandomBlockedOperands) {
  for (const int b : {2, 3, 4, 6}) {
    SCOPED_TRACE(b);
    const auto a = testing::random_blocked<double>(90, 70, b, 12, 100 + b);
    expect_exact(a, testing::random_blocked<double>(70, 50, b, 9, 200 + b), b);
    expect_exact(convert_values<float>(a), testing::random_blocked<float>(70, 120, b, 30, 300 + b), b);
    const auto square = testing::random_blocked<double>(120, 120, b, 20, 400 + b);
    expect_exact(square, square, b);
    expect_exact(testing::random_blocked<double>(40, 300, b, 60, 500 + b),
                 testing::random_blocked<double>(300, 800, b, 90, 600 + b), b);
  }
}

// Long rows of B: groups of 32 lanes walk a row of B in several rounds.
TEST_F(GpuBlock, LongBlockRowsOfB) {
  const auto a = testing::with_dense_blocks<double>(testing::with_lengths<double>(50, 200, {3, 0, 1, 40}, 31), 3, 32);
  const auto b = testing::with_dense_blocks<double>(testing::with_lengths<double>(200, 400, {70, 5, 0, 33}, 33), 3, 34);
  expect_exact(a, b, 3);
}

// A 6-blocked times a 3-blocked matrix runs with 3 (6-blocked is 3-blocked);
// 4 and 3 share none.
TEST_F(GpuBlock, OperandsOfDifferentSizes) {
  const auto a6 = testing::random_blocked<double>(30, 20, 6, 6, 41);
  const auto b3 = testing::random_blocked<double>(40, 25, 3, 7, 42);
  expect_exact(a6, b3, 3);
  const auto a4 = testing::random_blocked<double>(30, 30, 4, 6, 43);
  const auto b3wide = testing::random_blocked<double>(40, 10, 3, 4, 44);
  expect_exact(a4, b3wide, 1);
  // A blocked, B not.
  expect_exact(a6, testing::random_csr<double>(120, 90, 9, 45), 1);
  expect_exact(testing::random_csr<double>(33, 180, 9, 46), a6, 1);
}

// One entry off the structure: the last entry of a row moved one column
// right (same nnz, still sorted). The matrix is then not blocked (b = 1).
TEST_F(GpuBlock, NearlyBlockedIsNotBlocked) {
  auto a = testing::random_blocked<double>(50, 50, 3, 8, 51);
  std::int64_t row = 0;
  while (a.row_length(row) == 0 || a.col_indices[a.row_offsets[row + 1] - 1] + 1 >= a.cols) ++row;
  ++a.col_indices[a.row_offsets[row + 1] - 1];
  expect_exact(a, a, 1);
  const std::string method = method_of(a, a, algorithm::automatic);
  EXPECT_EQ(method.find("block"), std::string::npos) << method;
}

// Empty block rows and empty operands keep their shape.
TEST_F(GpuBlock, EmptyBlockRowsAndEmptyOperands) {
  auto pattern = testing::with_lengths<double>(40, 40, {0, 0, 3, 0, 7}, 61);
  const auto a = testing::with_dense_blocks<double>(pattern, 2, 62);
  expect_exact(a, a, 2);
  expect_exact(testing::empty_csr<double>(12, 18), testing::random_blocked<double>(6, 4, 3, 3, 63), 3);
  expect_exact(testing::random_blocked<double>(4, 6, 3, 3, 64), testing::empty_csr<double>(18, 12), 3);
}

TEST_F(GpuBlock, Deterministic) {
  for (const char* spec : {"elasticity3d:8", "poisson3d27:8"}) {
    SCOPED_TRACE(spec);
    const auto a = testing::with_random_values(generate(spec), 71);
    const auto first = gpu_multiply(a, a, algorithm::block);
    for (int run = 0; run < 3; ++run) {
      const auto again = gpu_multiply(a, a, algorithm::block);
      ASSERT_EQ(first.row_offsets, again.row_offsets);
      ASSERT_EQ(first.col_indices, again.col_indices);
      ASSERT_EQ(first.values.size(), again.values.size());
      EXPECT_EQ(std::memcmp(first.values.data(), again.values.data(), first.values.size() * sizeof(double)), 0);
    }
  }
}

}  // namespace
}  // namespace spgemm
