#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

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
      // The centre, the axis neighbours at 1 and at 2, (the edge neighbours).
      {"poisson3d13:5", 125, 125 + 6 * 25 * 4 + 6 * 25 * 3, 12},
      {"poisson3d19:4", 64, 64 + 6 * 16 * 3 + 12 * 4 * 9, 18},
      {"poisson3d27:3", 27, 7 * 7 * 7, 26},
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
}

// A rigid-body mode of elasticity3d:N at unknown `row` (node-major): the
// translations along x, y, z, then the rotations about z, x and y.
double rigid_body_mode(std::int64_t n, int mode, std::int64_t row) {
  const std::int64_t node = row / 3;
  const int c = static_cast<int>(row % 3);
  const double p[3] = {static_cast<double>(node % n), static_cast<double>(node / n % n),
                       static_cast<double>(node / (n * n))};
  if (mode < 3) return c == mode ? 1.0 : 0.0;
  const int axis = (mode - 1) % 3;  // 3: z, 4: x, 5: y
  const int i = (axis + 1) % 3, j = (axis + 2) % 3;  // the rotation turns component i into j
  return c == i ? -p[j] : c == j ? p[i] : 0.0;
}

TEST(Generate, ElasticityIsAStiffnessMatrixOfBlocks) {
  const auto m = generate("elasticity3d:3");
  EXPECT_EQ(find_csr_problem(m), "");
  EXPECT_EQ(m.rows, 81);
  EXPECT_EQ(m.nnz(), 9 * 7 * 7 * 7);  // every block of the 27-point stencil, entries that vanish kept
  EXPECT_EQ(generate("elasticity3d:6").row_length(3 * (1 + 6 * (1 + 6 * 1))), 81);
  const auto t = cpu_transpose(m);
  EXPECT_EQ(t.col_indices, m.col_indices);
  for (std::size_t k = 0; k < m.values.size(); ++k) EXPECT_NEAR(t.values[k], m.values[k], 1e-15);
  // Rigid-body modes move only the springs of the face x = 0 (stiffness 1):
  // (A u)_r = u_r there and 0 elsewhere.
  for (int mode = 0; mode < 6; ++mode) {
    SCOPED_TRACE(mode);
    for (std::int64_t r = 0; r < m.rows; ++r) {
      double au = 0;
      for (offset_t k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k) {
        au += m.values[k] * rigid_body_mode(3, mode, m.col_indices[k]);
      }
      const bool on_springs = r / 3 % 3 == 0;
      EXPECT_NEAR(au, on_springs ? rigid_body_mode(3, mode, r) : 0.0, 1e-12) << "row " << r;
    }
  }
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


// A valid matrix whose transpose is itself (pattern and values).
void expect_symmetric(const csr_matrix<double>& m) {
  EXPECT_EQ(find_csr_problem(m), "");
  const auto t = cpu_transpose(m);
  EXPECT_EQ(t.row_offsets, m.row_offsets);
  EXPECT_EQ(t.col_indices, m.col_indices);
  EXPECT_EQ(t.values, m.values);
}

bool has_diagonal_entry(const csr_matrix<double>& m, std::int64_t r) {
  const auto first = m.col_indices.begin() + m.row_offsets[r], last = m.col_indices.begin() + m.row_offsets[r + 1];
  return std::binary_search(first, last, static_cast<index_t>(r));
}

// Row r holds its diagonal, larger than the sum of the others' sizes.
bool dominant_diagonal(const csr_matrix<double>& m, std::int64_t r) {
  double off = 0, diagonal = 0;
  for (offset_t k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k)
    (m.col_indices[k] == r ? diagonal : off) += std::abs(m.values[k]);
  return has_diagonal_entry(m, r) && diagonal > off;
}

void expect_same(const csr_matrix<double>& a, const csr_matrix<double>& b) {
  EXPECT_EQ(a.row_offsets, b.row_offsets);
  EXPECT_EQ(a.col_indices, b.col_indices);
  EXPECT_EQ(a.values, b.values);
}

void expect_values_in_unit_interval(const csr_matrix<double>& m) {
  for (const double v : m.values) {
    ASSERT_GT(v, 0.0);
    ASSERT_LE(v, 1.0);
  }
}

TEST(Generate, EveryRandomGeneratorIsSeededAndDeterministic) {
  for (const std::string spec : {"femblocks:4:3", "kron:10:8:0.45:0.15:0.15", "chunglu:2000:8:2.5", "er:500:8",
                                 "band:500:20:6", "circuit:500:4:2:100", "tall:800:50:3"}) {
    SCOPED_TRACE(spec);
    const auto m = generate(spec);
    EXPECT_EQ(find_csr_problem(m), "");
    expect_same(generate(spec), m);
    expect_same(generate(spec + ":1"), m);
    EXPECT_NE(generate(spec + ":2").col_indices, m.col_indices);
  }
}

TEST(Generate, UniformRandomRowsHaveExactlyDColumnsSpreadEvenly) {
  const auto m = generate("er:4000:8");
  EXPECT_EQ(m.rows, 4000);
  EXPECT_EQ(m.cols, 4000);
  EXPECT_EQ(m.nnz(), 4000 * 8);
  for (std::int64_t r = 0; r < m.rows; ++r) ASSERT_EQ(m.row_length(r), 8);
  expect_values_in_unit_interval(m);
  // Each column is hit ~8 times (Poisson): none far beyond, and every part of the range is used.
  std::vector<int> hits(4000);
  for (const index_t c : m.col_indices) ++hits[c];
  EXPECT_LT(*std::max_element(hits.begin(), hits.end()), 30);
  for (int quarter = 0; quarter < 4; ++quarter) {
    const int in_quarter = std::accumulate(hits.begin() + quarter * 1000, hits.begin() + (quarter + 1) * 1000, 0);
    EXPECT_NEAR(in_quarter, 8000, 400);
  }
  // D = N: the full row.
  EXPECT_EQ(generate("er:16:16").nnz(), 256);
}

TEST(Generate, TallSkinnyHasItsShape) {
  const auto m = generate("tall:5000:100:3");
  EXPECT_EQ(m.rows, 5000);
  EXPECT_EQ(m.cols, 100);
  EXPECT_EQ(m.nnz(), 15000);
  EXPECT_EQ(find_csr_problem(m), "");
}

TEST(Generate, BandsHoldTheDiagonalAndStayWithinTheirWidth) {
  for (const char* spec : {"band:1000:10:5", "band:50:2:8"}) {
    SCOPED_TRACE(spec);
    const auto m = generate(spec);
    const std::int64_t half = std::string(spec) == "band:1000:10:5" ? 10 : 2;
    const std::int64_t per_row = std::string(spec) == "band:1000:10:5" ? 5 : 8;
    EXPECT_EQ(find_csr_problem(m), "");
    for (std::int64_t r = 0; r < m.rows; ++r) {
      const std::int64_t window = std::min(m.rows - 1, r + half) - std::max<std::int64_t>(0, r - half) + 1;
      ASSERT_EQ(m.row_length(r), std::min(per_row, window));
      ASSERT_TRUE(has_diagonal_entry(m, r));
      for (offset_t k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k)
        ASSERT_LE(std::abs(m.col_indices[k] - r), half);
    }
  }
}

TEST(Generate, FemBlocksAreIrregularSymmetricAndDiagonallyDominant) {
  const auto m = generate("femblocks:5:4");
  expect_symmetric(m);
  EXPECT_GE(m.rows, 125);
  EXPECT_LE(m.rows, 125 * 4);
  std::vector<std::int64_t> lengths;
  for (std::int64_t r = 0; r < m.rows; ++r) {
    ASSERT_TRUE(dominant_diagonal(m, r)) << "row " << r;
    lengths.push_back(m.row_length(r));
  }
  // Interior rows differ with their neighbours' block sizes.
  std::sort(lengths.begin(), lengths.end());
  EXPECT_GT(std::unique(lengths.begin(), lengths.end()) - lengths.begin(), 10);
}

TEST(Generate, CircuitsHaveDenseNetsOverADiagonallyDominantBase) {
  const auto m = generate("circuit:3000:4:3:600");
  expect_symmetric(m);
  int dense_rows = 0;
  for (std::int64_t r = 0; r < m.rows; ++r) {
    ASSERT_TRUE(dominant_diagonal(m, r)) << "row " << r;
    dense_rows += m.row_length(r) >= 600;
  }
  EXPECT_EQ(dense_rows, 3);
  // Diagonal + ~4 couplings + the nets' columns.
  const double mean = static_cast<double>(m.nnz()) / static_cast<double>(m.rows);
  EXPECT_GT(mean, 5.0);
  EXPECT_LT(mean, 6.5);
}

// Degrees of a graph without self-loops: its row lengths.
std::vector<std::int64_t> degrees(const csr_matrix<double>& m) {
  std::vector<std::int64_t> d(static_cast<std::size_t>(m.rows));
  for (std::int64_t r = 0; r < m.rows; ++r) {
    EXPECT_FALSE(has_diagonal_entry(m, r));
    d[r] = m.row_length(r);
  }
  return d;
}

// The maximum-likelihood exponent of a power law over the degrees >= k_min
// (Clauset, Shalizi & Newman 2009, the discrete approximation).
double power_law_exponent(const std::vector<std::int64_t>& degree, double k_min) {
  double logs = 0;
  std::int64_t tail = 0;
  for (const std::int64_t k : degree)
    if (k >= k_min) {
      logs += std::log(static_cast<double>(k) / (k_min - 0.5));
      ++tail;
    }
  return 1.0 + static_cast<double>(tail) / logs;
}

TEST(Generate, ChungLuGraphsHaveTheirDegreeExponentAndMean) {
  for (const double exponent : {2.2, 2.5, 3.0}) {
    SCOPED_TRACE(exponent);
    const std::string spec = "chunglu:200000:12:" + std::to_string(exponent);
    const auto m = generate(spec);
    expect_symmetric(m);
    const auto d = degrees(m);
    const double mean = static_cast<double>(m.nnz()) / static_cast<double>(m.rows);
    EXPECT_GT(mean, 0.8 * 12);
    EXPECT_LE(mean, 12.0);
    // The largest expected degree is sqrt(N * AVGDEG) ~ 1549.
    EXPECT_LT(*std::max_element(d.begin(), d.end()), 2 * 1549);
    EXPECT_NEAR(power_law_exponent(d, 3 * 12), exponent, 0.3);
  }
}

TEST(Generate, KroneckerGraphsAreSymmetricSkewedAndPermuted) {
  const auto m = generate("kron:14:8:0.57:0.19:0.19");
  expect_symmetric(m);
  const auto d = degrees(m);
  const double mean = static_cast<double>(m.nnz()) / static_cast<double>(m.rows);
  EXPECT_GT(*std::max_element(d.begin(), d.end()), 20 * mean);
  // R-MAT puts the heaviest rows first; here they are anywhere.
  EXPECT_NE(std::max_element(d.begin(), d.end()) - d.begin(), 0);
  // A flatter (a, b, c, d) is less skewed.
  const auto flat = degrees(generate("kron:14:8:0.25:0.25:0.25"));
  EXPECT_LT(*std::max_element(flat.begin(), flat.end()), *std::max_element(d.begin(), d.end()) / 4);
}

TEST(Generate, ProductInputsNameTheirOperands) {
  auto in = parse_product_input("tall:300:20:2/ata/f32");
  EXPECT_EQ(in.name, "tall:300:20:2/ata/f32");
  EXPECT_EQ(in.a_source, "tall:300:20:2");
  EXPECT_EQ(in.product, product_kind::at_a);
  EXPECT_EQ(in.precision, value_type::f32);
  auto ops = load_operands(in);
  EXPECT_EQ(ops.a.rows, 20);
  EXPECT_EQ(ops.a.cols, 300);
  ASSERT_TRUE(ops.b);
  expect_same(*ops.b, generate("tall:300:20:2"));

  in = parse_product_input("dir/fast0507.mtx.gz/aat");
  EXPECT_EQ(in.name, "fast0507/aat");
  EXPECT_EQ(in.a_source, "dir/fast0507.mtx.gz");
  EXPECT_EQ(in.product, product_kind::a_at);
  EXPECT_FALSE(in.precision);
  ops = load_operands(parse_product_input("tall:300:20:2/aat"));
  ASSERT_TRUE(ops.b);
  EXPECT_EQ(ops.b->rows, 20);
  EXPECT_EQ(ops.b->cols, 300);

  in = parse_product_input("er:10:2,er:10:3:7/f64");
  EXPECT_EQ(in.name, "er:10:2*er:10:3:7/f64");
  EXPECT_EQ(in.b_source, "er:10:3:7");
  EXPECT_EQ(in.product, product_kind::a_a);
  EXPECT_EQ(parse_product_input("a.mtx", "b.mtx").name, "a*b");
  EXPECT_FALSE(load_operands(parse_product_input("er:10:2")).b);
  EXPECT_THROW(parse_product_input("er:10:2,er:10:3/aat"), error);
}

TEST(Generate, RejectsUnknownAndMalformedSpecs) {
  for (const char* spec : {"poisson3d7:0", "poisson3d7:x", "poisson3d7", "rmat:10", "rmat:10:8:1:2", "laplace:3",
                           "kron:10:8:0.5:0.5:0.5", "kron:10:8:0.5:0.2", "chunglu:100:4:1.2", "chunglu:100:x:2.5",
                           "er:10:11", "band:10:2", "tall:10:5:6", "femblocks:4", "circuit:100:4:2"}) {
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
