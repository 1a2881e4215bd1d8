// The setup passes of algebraic multigrid on the CPU (engine/amg/cpu/),
// each against its definition on small matrices: the strength measure, the
// distance-2 independent set (independent, maximal), the aggregates, the
// tentative prolongator (orthonormal, interpolating the near null space), the
// smoothed prolongator, the dense solve, rho and the Chebyshev coefficients;
// the CPU backend's vector operations keep BLAS's rule for zero coefficients.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "amg/chebyshev.hpp"
#include "amg/cpu/passes.hpp"
#include "amg/operations.hpp"
#include "amg/spectral_radius.hpp"
#include "spgemm/backend.hpp"
#include "spgemm/errors.hpp"
#include "spgemm/generate.hpp"
#include "spgemm/reference.hpp"

namespace spgemm::amg {
namespace {

std::vector<std::vector<double>> dense(const csr_matrix<double>& m) {
  std::vector<std::vector<double>> d(static_cast<std::size_t>(m.rows), std::vector<double>(m.cols, 0.0));
  for (std::int64_t i = 0; i < m.rows; ++i)
    for (offset_t k = m.row_offsets[i]; k < m.row_offsets[i + 1]; ++k) d[i][m.col_indices[k]] = m.values[k];
  return d;
}

// Nodes within two steps of i (i included).
std::set<std::int64_t> within_two(const csr_matrix<float>& g, std::int64_t i) {
  std::set<std::int64_t> out = {i};
  for (offset_t k = g.row_offsets[i]; k < g.row_offsets[i + 1]; ++k) {
    const index_t j = g.col_indices[k];
    out.insert(j);
    for (offset_t l = g.row_offsets[j]; l < g.row_offsets[j + 1]; ++l) out.insert(g.col_indices[l]);
  }
  return out;
}

TEST(AmgStrength, KeepsConnectionsAboveThetaAndTheDiagonal) {
  // A path of 4 with one weak edge: |a_12| = 0.1 < 0.25 sqrt(4 * 4).
  csr_matrix<double> a;
  a.rows = a.cols = 4;
  a.row_offsets = {0, 2, 5, 8, 10};
  a.col_indices = {0, 1, 0, 1, 2, 1, 2, 3, 2, 3};
  a.values = {4, -1, -1, 4, -0.1, -0.1, 4, -1, -1, 4};
  const csr_matrix<float> all = cpu::strength(a, 1, 0.0);
  EXPECT_EQ(all.col_indices, a.col_indices);
  const csr_matrix<float> s = cpu::strength(a, 1, 0.25);
  EXPECT_EQ(s.row_offsets, (std::vector<offset_t>{0, 2, 4, 6, 8}));
  EXPECT_EQ(s.col_indices, (std::vector<index_t>{0, 1, 0, 1, 2, 3, 2, 3}));
}

TEST(AmgStrength, MeasuresBlocksByTheirFrobeniusNorms) {
  const csr_matrix<double> a = generate("elasticity3d:3");
  const csr_matrix<float> nodes = cpu::strength(a, 3, 0.0);
  EXPECT_EQ(nodes.rows, 27);
  EXPECT_EQ(nodes.nnz(), a.nnz() / 9);
  // theta 0.1 against the norms computed here.
  const auto d = dense(a);
  auto norm = [&](int i, int j) {
    double s = 0;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) s += d[3 * i + r][3 * j + c] * d[3 * i + r][3 * j + c];
    return std::sqrt(s);
  };
  const csr_matrix<float> strong = cpu::strength(a, 3, 0.1);
  for (int i = 0; i < 27; ++i) {
    std::set<index_t> expected;
    for (offset_t k = nodes.row_offsets[i]; k < nodes.row_offsets[i + 1]; ++k) {
      const int j = nodes.col_indices[k];
      if (i == j || norm(i, j) >= 0.1 * std::sqrt(norm(i, i) * norm(j, j))) expected.insert(j);
    }
    const std::set<index_t> got(strong.col_indices.begin() + strong.row_offsets[i],
                                strong.col_indices.begin() + strong.row_offsets[i + 1]);
    EXPECT_EQ(got, expected) << "node " << i;
  }
  EXPECT_THROW(cpu::strength(generate("poisson2d5:6"), 3, 0.0), error);  // 36 rows, no 3x3 blocks
}

TEST(AmgAggregation, RootsAreADistanceTwoMaximalIndependentSet) {
  for (const char* spec : {"poisson2d5:30", "poisson3d7:9", "poisson2d9:17", "rmat:9:4"}) {
    SCOPED_TRACE(spec);
    csr_matrix<double> a = generate(spec);
    // rmat is not symmetric: its graph made so.
    a = cpu_multiply(a, cpu_transpose(a));
    const csr_matrix<float> g = cpu::strength(a, 1, 0.0);
    const cpu::independent_set set = cpu::distance2_independent_set(g);
    EXPECT_GT(set.rounds, 0);
    for (std::int64_t i = 0; i < g.rows; ++i) {
      const std::set<std::int64_t> near = within_two(g, i);
      const bool isolated = near.size() == 1;
      const auto members = std::count_if(near.begin(), near.end(), [&](std::int64_t j) { return set.member[j]; });
      if (set.member[i]) {
        EXPECT_EQ(members, 1) << "member " << i << " has another within two steps";
      } else if (!isolated) {
        EXPECT_GE(members, 1) << "node " << i << " could join the set";
      }
      if (isolated) {
        EXPECT_FALSE(set.member[i]);
      }
    }
  }
}

TEST(AmgAggregation, EveryConnectedNodeJoinsAnAggregateOfANearRoot) {
  csr_matrix<double> a = generate("poisson2d5:25");
  // An isolated node: row 7 keeps only its diagonal (its column too).
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (offset_t k = a.row_offsets[i]; k < a.row_offsets[i + 1]; ++k)
      if ((i == 7) != (a.col_indices[k] == 7)) a.values[k] = 0.0;
  // theta 0.25: |-1| >= 0.25 sqrt(4 * 4) holds, the zeroed entries do not.
  const csr_matrix<float> g = cpu::strength(a, 1, 0.25);
  const cpu::node_aggregates agg = cpu::aggregate(g);
  const cpu::independent_set set = cpu::distance2_independent_set(g);
  std::vector<std::int64_t> root_of(static_cast<std::size_t>(agg.count), -1);
  for (std::int64_t i = 0; i < g.rows; ++i) {
    if (set.member[i]) root_of[agg.of_node[i]] = i;
  }
  EXPECT_EQ(agg.of_node[7], -1);
  for (std::int64_t i = 0; i < g.rows; ++i) {
    if (i == 7) continue;
    ASSERT_GE(agg.of_node[i], 0) << "node " << i;
    ASSERT_LT(agg.of_node[i], agg.count);
    EXPECT_TRUE(within_two(g, i).count(root_of[agg.of_node[i]])) << "node " << i << " far from its root";
  }
  const csr_matrix<double> m = cpu::aggregation_matrix(agg);
  EXPECT_EQ(m.rows, g.rows);
  EXPECT_EQ(m.cols, agg.count);
  EXPECT_EQ(m.nnz(), g.rows - 1);
}

TEST(AmgTentative, IsOrthonormalAndInterpolatesTheNearNullSpace) {
  // Rigid-body-like modes on 3 unknowns per node: 27 nodes, 6 columns.
  const csr_matrix<double> a = generate("elasticity3d:3");
  const cpu::node_aggregates agg = cpu::aggregate(cpu::strength(a, 3, 0.0));
  const int m = 6;
  std::vector<double> b(static_cast<std::size_t>(a.rows * m));
  for (std::int64_t r = 0; r < a.rows; ++r)
    for (int c = 0; c < m; ++c) b[r * m + c] = c < 3 ? (r % 3 == c) : std::sin(0.3 * r * (c + 1));
  const cpu::tentative_result t = cpu::tentative(cpu::aggregation_matrix(agg), agg.count, b, 3, m);
  EXPECT_EQ(t.t.rows, a.rows);
  EXPECT_EQ(t.t.cols, agg.count * m);
  const auto q = dense(t.t);
  // T^T T = I on the columns that are not numerically zero.
  for (std::int64_t i = 0; i < t.t.cols; ++i)
    for (std::int64_t j = i; j < t.t.cols; ++j) {
      double dot = 0, ii = 0;
      for (std::int64_t r = 0; r < t.t.rows; ++r) dot += q[r][i] * q[r][j], ii += q[r][i] * q[r][i];
      if (ii == 0) continue;
      EXPECT_NEAR(dot, i == j ? 1.0 : 0.0, 1e-12) << i << ", " << j;
    }
  // B = T B_coarse.
  for (std::int64_t r = 0; r < a.rows; ++r)
    for (int c = 0; c < m; ++c) {
      double v = 0;
      for (std::int64_t j = 0; j < t.t.cols; ++j) v += q[r][j] * t.coarse[j * m + c];
      EXPECT_NEAR(v, b[r * m + c], 1e-10) << r << ", " << c;
    }
}

TEST(AmgProlongator, IsTMinusOmegaDinvAT) {
  const csr_matrix<double> a = generate("poisson2d9:12");
  const cpu::node_aggregates agg = cpu::aggregate(cpu::strength(a, 1, 0.0));
  const cpu::tentative_result t =
      cpu::tentative(cpu::aggregation_matrix(agg), agg.count, std::vector<double>(a.rows, 1.0), 1, 1);
  const csr_matrix<double> at = cpu_multiply(a, t.t);
  std::vector<double> dinv(a.rows);
  for (std::int64_t i = 0; i < a.rows; ++i) dinv[i] = 1.0 / 8.0;
  const csr_matrix<double> p = cpu::smooth_prolongator(t.t, at, dinv, 0.5);
  const auto dp = dense(p), dt = dense(t.t), dat = dense(at);
  for (std::int64_t i = 0; i < p.rows; ++i)
    for (std::int64_t j = 0; j < p.cols; ++j) EXPECT_DOUBLE_EQ(dp[i][j], dt[i][j] - 0.5 / 8.0 * dat[i][j]);
  // Every entry of A T is in P's pattern, cancelled or not.
  EXPECT_EQ(p.nnz(), at.nnz());
}

TEST(AmgDense, LuSolvesTheCoarsestLevel) {
  const csr_matrix<double> a = generate("poisson3d7:5");
  const std::vector<double> lu = cpu::lu_factor(a);
  std::vector<double> x_true(a.rows), b(a.rows, 0.0), x(a.rows);
  for (std::int64_t i = 0; i < a.rows; ++i) x_true[i] = std::cos(0.1 * i);
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (offset_t k = a.row_offsets[i]; k < a.row_offsets[i + 1]; ++k) b[i] += a.values[k] * x_true[a.col_indices[k]];
  cpu::lu_solve(lu, a.rows, b.data(), x.data());
  for (std::int64_t i = 0; i < a.rows; ++i) EXPECT_NEAR(x[i], x_true[i], 1e-12);
  csr_matrix<double> singular = a;
  for (auto& v : singular.values) v = 0;
  EXPECT_THROW(cpu::lu_factor(singular), error);
}

// A term whose coefficient is 0 is not read (operations.hpp): NaN there
// stays out of y, as on the GPU.
TEST(AmgVectors, ZeroCoefficientsDoNotRead) {
  const auto cpu = make_cpu_backend(1);
  auto ops = cpu->amg_operations();
  const csr_matrix<double> a = generate("poisson2d5:3");
  const auto sa = cpu->store(a);
  const std::vector<double> ones(9, 1.0), nan(9, std::nan(""));
  std::vector<double> out(9);
  auto x = ops->upload(ones.data(), 9);
  auto bad = ops->upload(nan.data(), 9);
  auto y = ops->upload(nan.data(), 9);
  ops->axpby(2.0, *x, 0.0, *y);  // y held NaN
  ops->download(*y, out.data());
  EXPECT_EQ(out, std::vector<double>(9, 2.0));
  ops->axpby(0.0, *bad, 3.0, *y);
  ops->download(*y, out.data());
  EXPECT_EQ(out, std::vector<double>(9, 6.0));
  ops->scaled_axpby(0.0, *x, *bad, 0.5, *y);
  ops->download(*y, out.data());
  EXPECT_EQ(out, std::vector<double>(9, 3.0));
  auto z = ops->upload(nan.data(), 9);
  ops->spmv(*sa, *x, 1.0, 0.0, *z);  // A 1: the row sums
  ops->download(*z, out.data());
  for (std::int64_t i = 0; i < 9; ++i) {
    double sum = 0;
    for (offset_t k = a.row_offsets[i]; k < a.row_offsets[i + 1]; ++k) sum += a.values[k];
    EXPECT_EQ(out[i], sum);
  }
  ops->spmv(*sa, *bad, 0.0, 1.0, *z);  // x's NaN times alpha = 0
  ops->download(*z, out.data());
  for (double v : out) EXPECT_FALSE(std::isnan(v));
}

TEST(AmgSpectralRadius, TridiagonalLargestEigenvalue) {
  // The 1-D Laplacian's tridiagonal (2, -1): largest 2 - 2 cos(n pi / (n + 1)).
  const int n = 40;
  const std::vector<double> alpha(n, 2.0), beta(n - 1, -1.0);
  const double pi = std::acos(-1.0);
  EXPECT_NEAR(largest_eigenvalue(alpha, beta), 2 - 2 * std::cos(n * pi / (n + 1)), 1e-12);
  EXPECT_DOUBLE_EQ(largest_eigenvalue({3.0}, {}), 3.0);
}

TEST(AmgChebyshev, CoefficientsArePyamgs) {
  // pyamg.relaxation.chebyshev: -chebyshev_polynomial_coefficients(a, b, degree)[:-1].
  const std::vector<double> three = chebyshev_coefficients(2.0 / 30, 2.2, 3);
  ASSERT_EQ(three.size(), 3u);
  EXPECT_NEAR(three[0], 2.04669497, 1e-8);
  EXPECT_NEAR(three[1], -6.95876289, 1e-8);
  EXPECT_NEAR(three[2], 6.1400849, 1e-7);
  const std::vector<double> two = chebyshev_coefficients(0.1, 1.0, 2);
  EXPECT_NEAR(two[0], -4.9689441, 1e-7);
  EXPECT_NEAR(two[1], 5.46583851, 1e-8);
}

}  // namespace
}  // namespace spgemm::amg
