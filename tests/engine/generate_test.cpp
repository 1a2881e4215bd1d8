#include <gtest/gtest.h>

#include "spgemm/errors.hpp"
#include "spgemm/generate.hpp"
#include "spgemm/reference.hpp"
#include "spgemm/validate.hpp"

namespace spgemm {
namespace {

struct stencil_case {
  const char* spec;
  std::int64_t rows;
  std::int64_t nnz;
  double diagonal;
};

TEST(Generate, StencilsHaveTheirShapeCountsAndValues) {
  // Interior rows hold the full stencil; boundary rows lose the neighbours outside.
  const stencil_case cases[] = {
      {"poisson2d5:4", 16, 5 * 16 - 4 * 4, 4},
      {"poisson2d9:4", 16, 9 * 16 - 3 * 4 * 4 + 4, 8},
      {"poisson3d7:5", 125, 7 * 125 - 6 * 25, 6},
      {"poisson3d27:3", 27, 7 * 7 * 7, 26},
      {"elasticity3d:3", 81, 9 * 7 * 7 * 7, 80},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.spec);
    const auto m = generate(c.spec);
    EXPECT_EQ(find_csr_problem(m), "");
    EXPECT_EQ(m.rows, c.rows);
    EXPECT_EQ(m.cols, c.rows);
    EXPECT_EQ(m.nnz(), c.nnz);
    // Symmetric, with the stated diagonal.
    const auto t = cpu_transpose(m);
    EXPECT_EQ(t.row_offsets, m.row_offsets);
    EXPECT_EQ(t.col_indices, m.col_indices);
    EXPECT_EQ(t.values, m.values);
    for (std::int64_t r = 0; r < m.rows; ++r) {
      for (offset_t k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k) {
        if (m.col_indices[k] == r) {
          EXPECT_EQ(m.values[k], c.diagonal);
        }
      }
    }
  }
  EXPECT_EQ(generate("elasticity3d:6").row_length(3 * (1 + 6 * (1 + 6 * 1))), 81);
}

TEST(Generate, RmatIsDeduplicatedSeededAndValued) {
  const auto m = generate("rmat:10:8");
  EXPECT_EQ(find_csr_problem(m), "");
  EXPECT_EQ(m.rows, 1024);
  EXPECT_GT(m.nnz(), 1024 * 8 / 2);
  EXPECT_LE(m.nnz(), 1024 * 8);
  for (const double v : m.values) {
    EXPECT_GT(v, 0.0);
    EXPECT_LE(v, 1.0);
  }
  // Skewed: the first rows are the heaviest.
  EXPECT_GT(m.row_length(0), 10 * m.nnz() / m.rows);
  const auto again = generate("rmat:10:8");
  EXPECT_EQ(again.col_indices, m.col_indices);
  EXPECT_EQ(again.values, m.values);
  EXPECT_EQ(generate("rmat:10:8:1").col_indices, m.col_indices);
  EXPECT_NE(generate("rmat:10:8:2").col_indices, m.col_indices);
}

TEST(Generate, RejectsUnknownAndMalformedSpecs) {
  for (const char* spec : {"poisson3d7:0", "poisson3d7:x", "poisson3d7", "rmat:10", "rmat:10:8:1:2", "laplace:3"}) {
    SCOPED_TRACE(spec);
    EXPECT_THROW(generate(spec), error);
  }
  EXPECT_TRUE(is_generator_spec("rmat:4:4"));
  EXPECT_FALSE(is_generator_spec("cage11.mtx.gz"));
  EXPECT_FALSE(is_generator_spec("C:/data/a.mtx"));
}

TEST(Generate, MatrixNames) {
  EXPECT_EQ(matrix_name("poisson3d7:100"), "poisson3d7:100");
  EXPECT_EQ(matrix_name("../shared/matrices/cage11.mtx.gz"), "cage11");
  EXPECT_EQ(matrix_name("dir/a.mtx"), "a");
}

}  // namespace
}  // namespace spgemm
