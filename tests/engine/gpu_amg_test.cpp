// The GPU's numeric-only products, Galerkin products and algebraic multigrid
// against the CPU backend's: numeric-only products of every method against
// the reference, new values in place and copied, every setup pass on the same
// inputs (the same aggregates and patterns), whole hierarchies (the same
// levels, values within rounding, the same solve), a re-setup, and every
// setup step within its estimate. Skipped without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "amg/operations.hpp"
#include "gpu_test_support.hpp"
#include "spgemm/amg.hpp"
#include "spgemm/galerkin.hpp"
#include "spgemm/generate.hpp"

namespace spgemm {
namespace {

using testing::gpu;
using testing::gpu_backend;

std::shared_ptr<backend> cpu_backend() {
  static const std::shared_ptr<backend> instance = make_cpu_backend(2);
  return instance;
}

csr_matrix<double> fetched(backend& b, const stored_matrix& m) { return std::get<csr_matrix<double>>(b.fetch(m)); }

csr_matrix<double> revalued(csr_matrix<double> m, double phase) {
  for (std::size_t k = 0; k < m.values.size(); ++k) m.values[k] = std::sin(phase + 0.37 * static_cast<double>(k));
  return m;
}

void expect_close(const csr_matrix<double>& got, const csr_matrix<double>& want, double tolerance) {
  ASSERT_EQ(got.row_offsets, want.row_offsets);
  ASSERT_EQ(got.col_indices, want.col_indices);
  for (std::size_t k = 0; k < got.values.size(); ++k) {
    ASSERT_NEAR(got.values[k], want.values[k], tolerance * (1 + std::abs(want.values[k]))) << "entry " << k;
  }
}

TEST(GpuNumericProduct, EveryMethodsStructureTakesNewValues) {
  SPGEMM_REQUIRE_GPU();
  for (const char* spec : {"poisson3d7:12", "elasticity3d:5", "rmat:10:8", "poisson2d5:1"}) {
    const csr_matrix<double> a = generate(spec);
    const csr_matrix<double> a2 = revalued(a, 1.0), b2 = revalued(a, 2.0);
    for (algorithm algo : cuda_algorithms()) {
      SCOPED_TRACE(std::string(spec) + " " + std::string(to_string(algo)));
      multiply_options o;
      o.algo = algo;
      const auto sa = gpu().store(a);
      const auto c = gpu().multiply(*sa, *sa, o);
      const auto sa2 = gpu().with_values(*sa, a2.values.data());
      const auto sb2 = gpu().store(a);
      gpu().write_values(*sb2, b2.values.data());
      const memory_estimate e = gpu().estimate_multiply_numeric(*sa2, *sb2, *c, o);
      std::size_t peak = 0;
      const auto numeric = gpu().multiply_numeric(*sa2, *sb2, *c, o, e.total(), {}, &peak);
      EXPECT_LE(peak, e.total());
      // Rounded as the reference rounds: its values.
      const csr_matrix<double> want = cpu_multiply(a2, b2);
      expect_close(fetched(gpu(), *numeric), want, 0.0);
    }
  }
}

TEST(GpuGalerkin, MatchesTheCpuInBothFormsAndNumericOnly) {
  SPGEMM_REQUIRE_GPU();
  const csr_matrix<double> a = generate("poisson2d9:30");
  const csr_matrix<double> p = generate("tall:900:120:4");
  for (galerkin_form form : {galerkin_form::pt_a_p, galerkin_form::p_a_pt}) {
    const csr_matrix<double> pp = form == galerkin_form::pt_a_p ? p : cpu_transpose(p);
    const galerkin_result g = galerkin(gpu(), *gpu().store(pp), *gpu().store(a), form, {});
    const galerkin_result c = galerkin(*cpu_backend(), *cpu_backend()->store(pp), *cpu_backend()->store(a), form, {});
    expect_close(fetched(gpu(), *g.c), fetched(*cpu_backend(), *c.c), 1e-12);
    const csr_matrix<double> a2 = revalued(a, 0.5);
    const galerkin_result again = galerkin_numeric(gpu(), *gpu().store(pp), *gpu().store(a2), form, g, {});
    const galerkin_result want = galerkin(*cpu_backend(), *cpu_backend()->store(pp), *cpu_backend()->store(a2), form, {});
    expect_close(fetched(gpu(), *again.c), fetched(*cpu_backend(), *want.c), 1e-12);
  }
}

// Every setup pass, GPU against CPU, on the same inputs.
TEST(GpuAmgPasses, GiveTheCpusAggregatesAndPatterns) {
  SPGEMM_REQUIRE_GPU();
  for (const auto& [spec, block] : {std::pair{"poisson2d5:40", 1}, std::pair{"poisson3d27:9", 1},
                                    std::pair{"elasticity3d:6", 3}, std::pair{"poisson2d5:1", 1}}) {
    SCOPED_TRACE(spec);
    const csr_matrix<double> a = generate(spec);
    auto g_ops = gpu().amg_operations();
    auto c_ops = cpu_backend()->amg_operations();
    const auto ga = gpu().store(a), ca = cpu_backend()->store(a);
    EXPECT_EQ(g_ops->node_size(*ga), block);
    EXPECT_EQ(c_ops->node_size(*ca), block);
    for (double theta : {0.0, 0.08}) {
      const auto gs = g_ops->strength(*ga, block, theta, amg::strength_bytes(ga->info(), block));
      const auto cs = c_ops->strength(*ca, block, theta, amg::strength_bytes(ca->info(), block));
      const csr_matrix<float> gsm = std::get<csr_matrix<float>>(gpu().fetch(*gs));
      const csr_matrix<float> csm = std::get<csr_matrix<float>>(cpu_backend()->fetch(*cs));
      ASSERT_EQ(gsm.row_offsets, csm.row_offsets);
      ASSERT_EQ(gsm.col_indices, csm.col_indices);
      const amg::aggregation gagg = g_ops->aggregate(*gs, amg::aggregate_bytes(gs->info()));
      const amg::aggregation cagg = c_ops->aggregate(*cs, amg::aggregate_bytes(cs->info()));
      EXPECT_EQ(gagg.count, cagg.count);
      EXPECT_EQ(gagg.rounds, cagg.rounds);
      expect_close(fetched(gpu(), *gagg.aggregates), fetched(*cpu_backend(), *cagg.aggregates), 0.0);
      if (cagg.count == 0) continue;
      // A near null space of two columns: ones and a ramp.
      const int m = 2;
      std::vector<double> b(static_cast<std::size_t>(a.rows * m));
      for (std::int64_t r = 0; r < a.rows; ++r) b[r * m] = 1, b[r * m + 1] = static_cast<double>(r % 7);
      const auto gb = g_ops->upload(b.data(), a.rows * m);
      const auto cb = c_ops->upload(b.data(), a.rows * m);
      const std::size_t t_limit = amg::tentative_bytes(cagg.aggregates->info(), cagg.count, block, m);
      const amg::tentative_prolongator gt = g_ops->tentative(*gagg.aggregates, gagg.count, *gb, block, m, t_limit);
      const amg::tentative_prolongator ct = c_ops->tentative(*cagg.aggregates, cagg.count, *cb, block, m, t_limit);
      expect_close(fetched(gpu(), *gt.t), fetched(*cpu_backend(), *ct.t), 0.0);
      std::vector<double> g_coarse(gt.coarse->size()), c_coarse(ct.coarse->size());
      g_ops->download(*gt.coarse, g_coarse.data());
      c_ops->download(*ct.coarse, c_coarse.data());
      EXPECT_EQ(g_coarse, c_coarse);
      // P from A T, with the same inverse diagonal.
      const auto gat = gpu().multiply(*ga, *gt.t, {});
      const auto cat = cpu_backend()->multiply(*ca, *ct.t, {});
      const auto gd = g_ops->inverse_diagonal(*ga, false);
      const auto cd = c_ops->inverse_diagonal(*ca, false);
      const std::size_t p_limit = amg::prolongator_bytes(ct.t->info(), cat->info());
      const auto gp = g_ops->smooth_prolongator(*gt.t, *gat, *gd, 0.3, p_limit);
      const auto cp = c_ops->smooth_prolongator(*ct.t, *cat, *cd, 0.3, p_limit);
      expect_close(fetched(gpu(), *gp), fetched(*cpu_backend(), *cp), 1e-14);
    }
  }
}

TEST(GpuAmgPasses, VectorsSpmvAndTheDenseSolve) {
  SPGEMM_REQUIRE_GPU();
  const csr_matrix<double> a = generate("poisson3d7:7");
  auto ops = gpu().amg_operations();
  const auto sa = gpu().store(a);
  std::vector<double> x(static_cast<std::size_t>(a.rows));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.3 * static_cast<double>(i));
  auto gx = ops->upload(x.data(), a.rows);
  auto gy = ops->zeros(a.rows);
  ops->spmv(*sa, *gx, 2.0, 0.0, *gy);
  std::vector<double> y(x.size()), want(x.size(), 0.0);
  ops->download(*gy, y.data());
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (offset_t k = a.row_offsets[i]; k < a.row_offsets[i + 1]; ++k) want[i] += 2 * a.values[k] * x[a.col_indices[k]];
  for (std::size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-12);
  double dot = 0;
  for (double v : x) dot += v * v;
  EXPECT_NEAR(ops->dot(*gx, *gx), dot, 1e-10);
  // The dense solve: A^-1 (A x) = x.
  const auto f = ops->factor(*sa, amg::factor_bytes(sa->info()));
  auto back = ops->zeros(a.rows);
  ops->spmv(*sa, *gx, 1.0, 0.0, *gy);
  ops->solve(*f, *gy, *back);
  ops->download(*back, y.data());
  for (std::size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], x[i], 1e-10);
  // A zero coefficient does not read: NaN times zero stays out.
  std::vector<double> nan(x.size(), std::nan(""));
  auto gn = ops->upload(nan.data(), a.rows);
  ops->axpby(1.0, *gx, 0.0, *gn);
  ops->download(*gn, y.data());
  EXPECT_EQ(y, x);
}

TEST(GpuAmgHierarchy, EqualsTheCpusAndSolves) {
  SPGEMM_REQUIRE_GPU();
  for (const char* spec : {"poisson2d5:64", "poisson3d7:16", "elasticity3d:8"}) {
    SCOPED_TRACE(spec);
    const csr_matrix<double> a = generate(spec);
    amg::setup_options o;
    o.max_coarse = 60;
    const auto g = amg::builder::build(gpu_backend(), gpu().store(a), o);
    const auto c = amg::builder::build(cpu_backend(), cpu_backend()->store(a), o);
    ASSERT_EQ(g->levels(), c->levels());
    for (std::size_t k = 0; k < c->levels(); ++k) {
      expect_close(fetched(gpu(), *g->a(k)), fetched(*cpu_backend(), *c->a(k)), 1e-9);
    }
    EXPECT_DOUBLE_EQ(g->report().operator_complexity, c->report().operator_complexity);
    std::vector<double> b(static_cast<std::size_t>(a.rows), 1.0), gx, cx;
    for (amg::smoother s : {amg::smoother::chebyshev, amg::smoother::jacobi}) {
      amg::solve_options so;
      so.smoothing = s;
      const amg::solve_report gr = g->solve(b, gx, so);
      const amg::solve_report cr = c->solve(b, cx, so);
      EXPECT_TRUE(gr.converged);
      EXPECT_NEAR(gr.iterations, cr.iterations, 1);
      for (std::size_t i = 0; i < gx.size(); ++i) EXPECT_NEAR(gx[i], cx[i], 1e-6 * (1 + std::abs(cx[i])));
    }
    // A re-setup with new values: what a fresh setup of them gives.
    csr_matrix<double> a2 = a;
    for (auto& v : a2.values) v *= 1.5;
    const auto again = amg::builder::rebuild(gpu_backend(), *g, gpu().store(a2));
    const auto fresh = amg::builder::build(gpu_backend(), gpu().store(a2), o);
    ASSERT_EQ(again->levels(), fresh->levels());
    for (std::size_t k = 0; k < fresh->levels(); ++k) {
      expect_close(fetched(gpu(), *again->a(k)), fetched(gpu(), *fresh->a(k)), 1e-9);
    }
  }
}

TEST(GpuAmgHierarchy, StepsStayWithinTheirEstimates) {
  SPGEMM_REQUIRE_GPU();
  auto a = gpu().store(generate("elasticity3d:10"));
  amg::setup_options o;
  o.max_coarse = 100;
  amg::builder b(gpu_backend(), a, o);
  while (!b.done()) {
    SCOPED_TRACE(b.next_step());
    const std::size_t estimate = b.estimate().total();
    const std::size_t before = gpu().memory().in_use_bytes;
    gpu().reset_peak();
    b.run(estimate);
    EXPECT_LE(gpu().memory().peak_bytes - before, estimate);
  }
}

}  // namespace
}  // namespace spgemm
