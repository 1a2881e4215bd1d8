#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "spgemm/errors.hpp"
#include "spgemm/validate.hpp"

namespace spgemm {
namespace {

csr_matrix<double> small() {
  csr_matrix<double> m;
  m.rows = 3;
  m.cols = 4;
  m.row_offsets = {0, 2, 2, 4};
  m.col_indices = {0, 3, 1, 2};
  m.values = {1.5, -2, 3, 4};
  return m;
}

void expect_problem(const csr_matrix<double>& m, const std::string& fragment, validate_options options = {}) {
  const std::string problem = find_csr_problem(m, options);
  EXPECT_NE(problem.find(fragment), std::string::npos) << "problem was: '" << problem << "'";
}

TEST(Validate, AcceptsValidMatricesIncludingEmptyOnes) {
  EXPECT_EQ(find_csr_problem(small()), "");
  EXPECT_EQ(find_csr_problem(csr_matrix<double>{}), "");
  csr_matrix<float> no_columns;
  no_columns.rows = 2;
  no_columns.row_offsets = {0, 0, 0};
  EXPECT_EQ(find_csr_problem(no_columns), "");
}

TEST(Validate, NamesWrongArrayLengths) {
  auto m = small();
  m.row_offsets.pop_back();
  expect_problem(m, "row_offsets has 3 entries, expected rows + 1 = 4");
  m = small();
  m.values.pop_back();
  expect_problem(m, "col_indices has 4 entries but values has 3");
  m = small();
  m.row_offsets.back() = 3;
  expect_problem(m, "must equal nnz");
}

TEST(Validate, NamesDecreasingOffsets) {
  auto m = small();
  m.row_offsets = {0, 3, 2, 4};
  expect_problem(m, "row_offsets[2] = 2 is less than row_offsets[1] = 3");
  m.row_offsets = {1, 2, 2, 4};
  expect_problem(m, "row_offsets[0] is 1");
}

TEST(Validate, NamesColumnsOutOfRangeUnsortedAndDuplicated) {
  auto m = small();
  m.col_indices[1] = 4;
  expect_problem(m, "row 0: column 4 (entry 1) is outside [0, 4)");
  m = small();
  m.col_indices[2] = -1;
  expect_problem(m, "row 2: column -1");
  m = small();
  m.col_indices = {3, 0, 1, 2};
  expect_problem(m, "row 0: column 0 (entry 1) comes after column 3");
  m = small();
  m.col_indices = {0, 3, 2, 2};
  expect_problem(m, "row 2: column 2 (entry 3) duplicates column 2");
}

TEST(Validate, NonFiniteValuesOnlyWhereForbidden) {
  auto m = small();
  m.values[2] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(find_csr_problem(m), "");
  expect_problem(m, "row 2, column 1: value nan is not finite", {false});
  m.values[2] = std::numeric_limits<double>::infinity();
  expect_problem(m, "is not finite", {false});
}

TEST(Validate, RequireValidThrowsBadInputWithTheName) {
  auto m = small();
  m.col_indices[0] = 9;
  try {
    require_valid(m, "matrix A");
    FAIL() << "no error";
  } catch (const error& e) {
    EXPECT_EQ(e.kind(), error_kind::bad_input);
    EXPECT_EQ(std::string(e.what()).rfind("matrix A: row 0: column 9", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace spgemm
