#include <map>

#include <gtest/gtest.h>

#include "spgemm/errors.hpp"
#include "spgemm/generate.hpp"
#include "spgemm/reference.hpp"
#include "spgemm/validate.hpp"
#include "test_matrices.hpp"

namespace spgemm {
namespace {

// An independent oracle for small products: one ordered map per row.
template <typename T>
csr_matrix<T> map_multiply(const csr_matrix<T>& a, const csr_matrix<T>& b) {
  csr_matrix<T> c;
  c.rows = a.rows;
  c.cols = b.cols;
  for (std::int64_t r = 0; r < a.rows; ++r) {
    std::map<index_t, T> row;
    for (offset_t k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k)
      for (offset_t l = b.row_offsets[a.col_indices[k]]; l < b.row_offsets[a.col_indices[k] + 1]; ++l)
        row[b.col_indices[l]] += a.values[k] * b.values[l];
    for (const auto& [col, v] : row) {
      c.col_indices.push_back(col);
      c.values.push_back(v);
    }
    c.row_offsets.push_back(static_cast<offset_t>(c.col_indices.size()));
  }
  return c;
}

template <typename T>
void expect_matches_oracle(const csr_matrix<T>& a, const csr_matrix<T>& b, double tolerance) {
  const auto c = cpu_multiply(a, b, 3);
  EXPECT_EQ(find_csr_problem(c), "");
  const auto ref = map_multiply(a, b);
  EXPECT_LE(scaled_max_error(c, ref, a, b), tolerance);
}

template <typename T>
class CpuMultiply : public ::testing::Test {};
using value_types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CpuMultiply, value_types);

TYPED_TEST(CpuMultiply, MatchesAnIndependentOracleOnManyShapes) {
  using T = TypeParam;
  const double tolerance = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  const std::int64_t shapes[][4] = {{0, 0, 0, 0}, {1, 1, 1, 1},   {3, 0, 0, 5},   {0, 4, 4, 2},
                                    {37, 50, 50, 11}, {64, 64, 64, 64}, {200, 30, 30, 300}};
  std::uint64_t seed = 1;
  for (const auto& s : shapes) {
    SCOPED_TRACE(::testing::Message() << s[0] << "x" << s[1] << " * " << s[2] << "x" << s[3]);
    const auto a = spgemm::testing::random_csr<T>(s[0], s[1], 6, seed++);
    const auto b = spgemm::testing::random_csr<T>(s[2], s[3], 9, seed++);
    expect_matches_oracle(a, b, tolerance);
  }
}

TYPED_TEST(CpuMultiply, HandlesEmptyRowsAndADenseRow) {
  using T = TypeParam;
  const double tolerance = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  // Row 7 is dense (5000 > 4096 entries); every third row is empty.
  const auto a = spgemm::testing::random_csr_rows<T>(40, 5000, 11, [](std::int64_t r, std::mt19937_64&) -> std::int64_t {
    return r == 7 ? 5000 : r % 3 == 0 ? 0 : 4;
  });
  const auto b = spgemm::testing::random_csr<T>(5000, 300, 3, 12);
  expect_matches_oracle(a, b, tolerance);
}

// Rows of C put in order either way: rows of B in a narrow band of 100,000
// columns (40 columns over 20 words: a scan of the row's bits), rows of C
// spread over all of them (a sort), short rows (a sort), columns on 64-bit
// word boundaries, empty rows.
TYPED_TEST(CpuMultiply, OrdersNarrowAndWideRowsAlike) {
  using T = TypeParam;
  const double tolerance = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  const std::int64_t cols = 100000;
  auto b = spgemm::testing::random_csr_rows<T>(300, cols, 21, [](std::int64_t r, std::mt19937_64&) -> std::int64_t {
    return r % 7 == 0 ? 0 : r % 5 == 0 ? 1 : 40;
  });
  for (std::int64_t r = 0; r < b.rows; ++r) {  // rows of B in two thirds: a band at 300 r, on word boundaries
    if (r % 3 == 0) continue;
    index_t col = static_cast<index_t>(300 * r - r % 2);
    for (offset_t k = b.row_offsets[r]; k < b.row_offsets[r + 1]; ++k) {
      b.col_indices[k] = col;
      col += k % 2 == 0 ? 1 : 63;
    }
  }
  const auto a = spgemm::testing::with_lengths<T>(400, 300, {0, 1, 3, 8, 40, 2}, 22);
  expect_matches_oracle(a, b, tolerance);
  const auto one = cpu_multiply(a, b, 1);
  const auto three = cpu_multiply(a, b, 3);
  EXPECT_EQ(one.col_indices, three.col_indices);
  EXPECT_EQ(one.values, three.values);
}

TEST(CpuMultiplyDouble, ResultDoesNotDependOnThreadCount) {
  // Products enough for 16 slices of at least the work that earns a thread.
  const auto a = generate("rmat:12:8");
  const auto one = cpu_multiply(a, a, 1);
  for (int threads : {2, 5, 16}) {
    const auto many = cpu_multiply(a, a, threads);
    EXPECT_EQ(many.row_offsets, one.row_offsets);
    EXPECT_EQ(many.col_indices, one.col_indices);
    EXPECT_EQ(many.values, one.values);  // bit-identical
  }
}

TEST(CpuMultiplyDouble, KeepsEntriesThatCancel) {
  csr_matrix<double> a;
  a.rows = 1;
  a.cols = 2;
  a.row_offsets = {0, 2};
  a.col_indices = {0, 1};
  a.values = {1, -1};
  csr_matrix<double> b;
  b.rows = 2;
  b.cols = 1;
  b.row_offsets = {0, 1, 2};
  b.col_indices = {0, 0};
  b.values = {3, 3};
  const auto c = cpu_multiply(a, b);
  EXPECT_EQ(c.nnz(), 1);
  EXPECT_EQ(c.values[0], 0.0);
}

TEST(CpuMultiplyDouble, RejectsMismatchedShapes) {
  const auto a = spgemm::testing::random_csr<double>(3, 4, 2, 1);
  try {
    cpu_multiply(a, a);
    FAIL();
  } catch (const error& e) {
    EXPECT_EQ(e.kind(), error_kind::bad_input);
    EXPECT_NE(std::string(e.what()).find("A is 3 x 4, B is 3 x 4"), std::string::npos) << e.what();
  }
}

TEST(CpuTranspose, TransposeTwiceIsIdentityAndMatchesShape) {
  const auto a = spgemm::testing::random_csr<double>(30, 70, 12, 5);
  const auto t = cpu_transpose(a);
  EXPECT_EQ(find_csr_problem(t), "");
  EXPECT_EQ(t.rows, 70);
  EXPECT_EQ(t.cols, 30);
  const auto back = cpu_transpose(t);
  EXPECT_EQ(back.row_offsets, a.row_offsets);
  EXPECT_EQ(back.col_indices, a.col_indices);
  EXPECT_EQ(back.values, a.values);
}

TEST(ScaledError, DetectsStructureAndValueDifferences) {
  const auto a = spgemm::testing::random_csr<double>(20, 20, 5, 9);
  const auto c = cpu_multiply(a, a);
  EXPECT_EQ(scaled_max_error(c, c, a, a), 0.0);
  auto off = c;
  off.values[0] += 1e-3;
  EXPECT_GT(scaled_max_error(off, c, a, a), 1e-6);
  auto moved = c;
  moved.col_indices.back() = moved.col_indices.back() == 0 ? 1 : 0;
  EXPECT_TRUE(std::isinf(scaled_max_error(moved, c, a, a)));
}

}  // namespace
}  // namespace spgemm
