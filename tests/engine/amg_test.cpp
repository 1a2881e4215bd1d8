// Galerkin products, numeric-only products and whole smoothed-aggregation
// hierarchies on the CPU backend: the Galerkin product against the reference
// in both forms and orders, a numeric-only product against the full one (bit
// for bit), a hierarchy's levels and its solve, and a re-setup against a
// fresh setup of the new values.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "spgemm/amg.hpp"
#include "spgemm/backend.hpp"
#include "spgemm/errors.hpp"
#include "spgemm/galerkin.hpp"
#include "spgemm/generate.hpp"
#include "spgemm/reference.hpp"

namespace spgemm {
namespace {

csr_matrix<double> fetched(backend& b, const stored_matrix& m) { return std::get<csr_matrix<double>>(b.fetch(m)); }

// The rigid-body modes of elasticity3d:n, n^3 nodes x 6, row-major.
std::vector<double> rigid_body_modes(std::int64_t n) {
  std::vector<double> b(static_cast<std::size_t>(3 * n * n * n * 6), 0.0);
  for (std::int64_t node = 0; node < n * n * n; ++node) {
    const double x = static_cast<double>(node % n), y = static_cast<double>(node / n % n),
                 z = static_cast<double>(node / (n * n));
    double* r = &b[static_cast<std::size_t>(node * 18)];  // 3 rows of 6
    r[0] = r[6 + 1] = r[12 + 2] = 1;
    r[3] = -y, r[6 + 3] = x;       // about z
    r[6 + 4] = -z, r[12 + 4] = y;  // about x
    r[12 + 5] = -x, r[5] = z;      // about y
  }
  return b;
}

csr_matrix<double> scaled(csr_matrix<double> m, double factor) {
  for (auto& v : m.values) v *= factor;
  return m;
}

TEST(Galerkin, BothFormsAndOrdersGiveTheReference) {
  auto cpu = make_cpu_backend(2);
  const csr_matrix<double> a = generate("poisson2d5:20");
  const csr_matrix<double> p = generate("tall:400:60:3");
  const csr_matrix<double> expected = cpu_multiply(cpu_multiply(cpu_transpose(p), a), p);
  auto sa = cpu->store(a), sp = cpu->store(p), spt = cpu->store(cpu_transpose(p));
  const galerkin_result ptap = galerkin(*cpu, *sp, *sa, galerkin_form::pt_a_p, {});
  EXPECT_LT(scaled_max_error(fetched(*cpu, *ptap.c), expected, cpu_multiply(cpu_transpose(p), a), p), 1e-12);
  const galerkin_result papt = galerkin(*cpu, *spt, *sa, galerkin_form::p_a_pt, {});
  const csr_matrix<double> c = fetched(*cpu, *papt.c);
  EXPECT_EQ(c.col_indices, expected.col_indices);
  for (std::size_t k = 0; k < c.values.size(); ++k) EXPECT_NEAR(c.values[k], expected.values[k], 1e-9);
  // A numeric-only rerun on new values gives what a full product gives.
  auto sa2 = cpu->store(scaled(a, 3.0));
  const galerkin_result again = galerkin_numeric(*cpu, *sp, *sa2, galerkin_form::pt_a_p, ptap, {});
  const galerkin_result full = galerkin(*cpu, *sp, *sa2, galerkin_form::pt_a_p, {});
  EXPECT_EQ(fetched(*cpu, *again.c).values, fetched(*cpu, *full.c).values);
  EXPECT_THROW(galerkin(*cpu, *sa, *sp, galerkin_form::pt_a_p, {}), error);
}

TEST(Galerkin, PlanPrefersTheOrderWithLessWork) {
  const matrix_info r{10, 1000, 2000, value_type::f64}, q{1000, 10, 1000, value_type::f64};
  memory_estimate cheap, dear;
  cheap.products = 100, cheap.nnz_bound = 1000;
  dear.products = 100000, dear.nnz_bound = 5000;
  EXPECT_EQ(plan_galerkin(r, q, cheap, dear).order, galerkin_order::right_first);
  EXPECT_EQ(plan_galerkin(r, q, dear, cheap).order, galerkin_order::left_first);
}

TEST(NumericProduct, EqualsTheFullProductBitForBit) {
  auto cpu = make_cpu_backend(3);
  const csr_matrix<double> a = generate("rmat:10:8"), b = generate("er:1024:6");
  auto sa = cpu->store(a), sb = cpu->store(b);
  auto c = cpu->multiply(*sa, *sb, {});
  // New values, same patterns.
  csr_matrix<double> a2 = a, b2 = b;
  for (std::size_t k = 0; k < a2.values.size(); ++k) a2.values[k] = std::sin(static_cast<double>(k));
  for (std::size_t k = 0; k < b2.values.size(); ++k) b2.values[k] = std::cos(static_cast<double>(k));
  auto sa2 = cpu->with_values(*sa, a2.values.data());
  cpu->write_values(*sb, b2.values.data());
  const memory_estimate e = cpu->estimate_multiply_numeric(*sa2, *sb, *c, {});
  EXPECT_TRUE(e.exact);
  EXPECT_EQ(e.output_bytes, c->info().bytes());
  std::size_t peak = 0;
  auto numeric = cpu->multiply_numeric(*sa2, *sb, *c, {}, e.total(), {}, &peak);
  EXPECT_LE(peak, e.total());
  const csr_matrix<double> expected = cpu_multiply(a2, b2);
  const csr_matrix<double> got = fetched(*cpu, *numeric);
  EXPECT_EQ(got.row_offsets, expected.row_offsets);
  EXPECT_EQ(got.col_indices, expected.col_indices);
  EXPECT_EQ(got.values, expected.values);
  // The old product is unchanged; a structure of another shape is refused.
  EXPECT_EQ(fetched(*cpu, *c).values, cpu_multiply(a, b).values);
  EXPECT_THROW(cpu->multiply_numeric(*sb, *sa2, *cpu->store(generate("tall:1024:7:2")), {}, 1 << 30), error);
}

TEST(AmgHierarchy, CoarsensPoissonAndPreconditionsCg) {
  auto cpu = make_cpu_backend(2);
  auto a = cpu->store(generate("poisson2d5:64"));
  amg::setup_options o;
  o.max_coarse = 50;
  const auto h = amg::builder::build(cpu, a, o);
  const amg::setup_report& r = h->report();
  ASSERT_GE(h->levels(), 3u);
  EXPECT_LE(r.levels.back().rows, 50);
  for (std::size_t k = 0; k + 1 < h->levels(); ++k) {
    EXPECT_LT(r.levels[k + 1].rows, r.levels[k].rows / 3) << "level " << k;
    // A_{k+1} = R_k A_k P_k.
    const csr_matrix<double> ak = fetched(*cpu, *h->a(k)), pk = fetched(*cpu, *h->p(k));
    const csr_matrix<double> expected = cpu_multiply(cpu_multiply(cpu_transpose(pk), ak), pk);
    const csr_matrix<double> got = fetched(*cpu, *h->a(k + 1));
    ASSERT_EQ(got.col_indices, expected.col_indices);
    for (std::size_t i = 0; i < got.values.size(); ++i) EXPECT_NEAR(got.values[i], expected.values[i], 1e-12);
  }
  EXPECT_GT(r.operator_complexity, 1.0);
  EXPECT_LT(r.operator_complexity, 2.0);
  EXPECT_GT(r.seconds.total(), 0);
  EXPECT_GT(h->own_bytes(), 0u);

  std::vector<double> b(static_cast<std::size_t>(64 * 64), 1.0), x;
  for (amg::smoother s : {amg::smoother::chebyshev, amg::smoother::jacobi}) {
    amg::solve_options so;
    so.smoothing = s;
    x.clear();
    const amg::solve_report sr = h->solve(b, x, so);
    EXPECT_TRUE(sr.converged);
    EXPECT_LT(sr.iterations, 30) << amg::to_string(s);
    EXPECT_EQ(sr.residuals.size(), static_cast<std::size_t>(sr.iterations) + 1);
    EXPECT_LE(sr.residuals.back(), 1e-8);
  }
  // V-cycles alone converge too, more slowly.
  amg::solve_options stationary;
  stationary.conjugate_gradient = false;
  x.clear();
  EXPECT_TRUE(h->solve(b, x, stationary).converged);
  // One cycle is a symmetric positive operator: r . M r > 0.
  std::vector<double> z;
  h->precondition(b, z, {});
  double rz = 0;
  for (std::size_t i = 0; i < b.size(); ++i) rz += b[i] * z[i];
  EXPECT_GT(rz, 0);
}

TEST(AmgHierarchy, ElasticityWithRigidBodyModes) {
  auto cpu = make_cpu_backend(2);
  const std::int64_t n = 8;
  auto a = cpu->store(generate("elasticity3d:8"));
  amg::setup_options o;
  o.max_coarse = 100;
  o.near_nullspace = rigid_body_modes(n);
  o.near_nullspace_columns = 6;
  const auto h = amg::builder::build(cpu, a, o);
  ASSERT_GE(h->levels(), 2u);
  EXPECT_EQ(h->report().levels[0].block_size, 3);
  EXPECT_EQ(h->report().levels[1].block_size, 6);
  EXPECT_EQ(h->report().levels[1].rows % 6, 0);
  std::vector<double> b(static_cast<std::size_t>(3 * n * n * n), 1.0), x;
  const amg::solve_report sr = h->solve(b, x, {});
  EXPECT_TRUE(sr.converged);
  EXPECT_LT(sr.iterations, 40);
}

TEST(AmgHierarchy, ResetupEqualsAFreshSetupOfTheNewValues) {
  auto cpu = make_cpu_backend(2);
  const csr_matrix<double> a = generate("poisson3d7:14");
  amg::setup_options o;
  o.max_coarse = 40;
  o.coarse_strength_theta = 0;  // theta 0 on every level: aggregates of the pattern alone
  const auto h = amg::builder::build(cpu, cpu->store(a), o);
  // New values, same pattern (theta 0: the same aggregates).
  csr_matrix<double> a2 = a;
  for (std::int64_t i = 0; i < a2.rows; ++i)  // symmetric: a function of i + j off the diagonal
    for (offset_t k = a2.row_offsets[i]; k < a2.row_offsets[i + 1]; ++k) {
      const index_t j = a2.col_indices[k];
      a2.values[k] = j == i ? 6.5 : -1.0 - 0.05 * std::cos(0.1 * static_cast<double>(i + j));
    }
  auto s2 = cpu->store(a2);
  amg::builder rebuild(cpu, *h, s2);
  std::size_t steps = 0;
  while (!rebuild.done()) {
    EXPECT_EQ(rebuild.next_step().find("strength"), std::string::npos);
    rebuild.run(rebuild.estimate().total());
    ++steps;
  }
  const auto again = rebuild.finish();
  EXPECT_TRUE(again->report().numeric_only);
  const auto fresh = amg::builder::build(cpu, s2, o);
  ASSERT_EQ(again->levels(), fresh->levels());
  for (std::size_t k = 0; k < fresh->levels(); ++k) {
    const csr_matrix<double> x = fetched(*cpu, *again->a(k)), y = fetched(*cpu, *fresh->a(k));
    EXPECT_EQ(x.col_indices, y.col_indices) << "level " << k;
    EXPECT_EQ(x.values, y.values) << "level " << k;
  }
  std::vector<double> b(static_cast<std::size_t>(a.rows), 1.0), x;
  EXPECT_TRUE(again->solve(b, x, {}).converged);
  // A matrix of another pattern is refused.
  EXPECT_THROW(amg::builder(cpu, *h, cpu->store(generate("poisson3d7:13"))), error);
}

TEST(AmgHierarchy, StepsStayWithinTheirEstimates) {
  auto cpu = make_cpu_backend(2);
  auto a = cpu->store(generate("poisson2d9:40"));
  amg::setup_options o;
  o.max_coarse = 30;
  amg::builder b(cpu, a, o);
  while (!b.done()) {
    SCOPED_TRACE(b.next_step());
    const std::size_t before = cpu->memory().in_use_bytes;
    const std::size_t estimate = b.estimate().total();
    cpu->reset_peak();
    b.run(estimate);
    EXPECT_LE(cpu->memory().peak_bytes - before, estimate);
  }
  EXPECT_EQ(b.finish()->levels(), b.finish()->report().levels.size());
}

TEST(AmgHierarchy, RefusesWhatItCannotSetUp) {
  auto cpu = make_cpu_backend(1);
  EXPECT_THROW(amg::builder(cpu, cpu->store(generate("tall:20:10:2")), {}), error);
  amg::setup_options o;
  o.near_nullspace = {1.0, 2.0};
  o.near_nullspace_columns = 1;
  EXPECT_THROW(amg::builder(cpu, cpu->store(generate("poisson2d5:4")), o), error);
  // A single level: the direct solve alone.
  const auto h = amg::builder::build(cpu, cpu->store(generate("poisson2d5:4")), {});
  EXPECT_EQ(h->levels(), 1u);
  std::vector<double> b(16, 1.0), x;
  const amg::solve_report r = h->solve(b, x, {});
  EXPECT_TRUE(r.converged);
  EXPECT_LE(r.iterations, 1);
  EXPECT_EQ(amg::parse_smoother("jacobi"), amg::smoother::jacobi);
  EXPECT_THROW(amg::parse_smoother("gauss-seidel"), error);
  amg::setup_options bad;
  bad.coarse_strength_theta = 1.5;
  EXPECT_THROW(amg::builder(cpu, cpu->store(generate("poisson2d5:8")), bad), error);
}

// Levels below the first take at least coarse_strength_theta: weak couplings
// of the coarse operators leave their graphs, which then coarsen less.
TEST(AmgHierarchy, CoarseLevelsTakeTheCoarseStrengthTheta) {
  auto cpu = make_cpu_backend(2);
  auto a = cpu->store(generate("poisson2d5:150"));
  const auto with = [&](double coarse) {
    amg::setup_options o;
    o.coarse_strength_theta = coarse;
    return amg::builder::build(cpu, a, o);
  };
  const auto all = with(0), floor = with(0.05);
  ASSERT_GE(all->levels(), 3u);
  ASSERT_GE(floor->levels(), 3u);
  EXPECT_EQ(floor->report().levels[1].rows, all->report().levels[1].rows);  // level 0 keeps strength_theta
  EXPECT_GT(floor->report().levels[2].rows, all->report().levels[2].rows);
  std::vector<double> b(static_cast<std::size_t>(150 * 150), 1.0), x, y;
  EXPECT_LE(floor->solve(b, x, {}).iterations, all->solve(b, y, {}).iterations);
}

}  // namespace
}  // namespace spgemm
