// The GPU's numeric-only products, Galerkin products and algebraic multigrid
// against the CPU backend's: numeric-only products of every method against
// the reference, new values in place and copied, every setup pass on the same
// inputs (the same aggregates and patterns), whole hierarchies (the same
// levels, values within rounding, the same solve), a re-setup, and every
// setup step within its estimate. Then the same on random operands (random
// rectangular, long-row, empty and blocked products; random symmetric
// positive definite matrices, scalar and of dense blocks, with isolated
// nodes) with the device pool poisoned before each GPU call (the memory it
// hands out next full of all-ones bytes: NaN as a value, -1 as an index), so
// that an output a kernel leaves unwritten or reads before writing shows;
// the vector kernels at every SpMV group width and past the grid's cap; the
// dense solve at even and odd sizes and its zero pivots. Skipped without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "amg/operations.hpp"
#include "cuda/device_facts.hpp"
#include "gpu_test_support.hpp"
#include "rmerge/rmerge_tuning.hpp"
#include "spgemm/amg.hpp"
#include "spgemm/errors.hpp"
#include "spgemm/galerkin.hpp"
#include "spgemm/generate.hpp"
#include "test_matrices.hpp"

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

// All-ones bytes: NaN as a value, -1 as an index or offset.
double all_ones() {
  const std::uint64_t bits = ~std::uint64_t{0};
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

// The device pool poisoned: a 100 MB matrix whose values are all-ones bytes
// stored and freed, so that the memory the pool hands out next holds them
// (GpuTranspose.DirtyMemoryAndRepeatable does the same with -1e300). An
// output a kernel leaves unwritten, or reads before writing, then shows.
void poison_pool() {
  static const csr_matrix<double> junk = [] {
    csr_matrix<double> m;
    m.rows = 16384;
    m.cols = 512;
    m.row_offsets.resize(static_cast<std::size_t>(m.rows) + 1);
    for (std::int64_t r = 0; r <= m.rows; ++r) m.row_offsets[r] = static_cast<offset_t>(r * m.cols);
    m.col_indices.resize(static_cast<std::size_t>(m.rows * m.cols));
    for (std::size_t k = 0; k < m.col_indices.size(); ++k) m.col_indices[k] = static_cast<index_t>(k % 512);
    m.values.assign(m.col_indices.size(), all_ones());
    return m;
  }();
  (void)gpu().store(junk);
}

// A random symmetric matrix with a dominant diagonal (so positive definite):
// each of the nodes [0, n - isolated) draws up to `partners` random others
// (the pattern made symmetric); the last `isolated` nodes hold their diagonal
// alone. The pattern depends on pattern_seed only, the values on value_seed.
csr_matrix<double> random_spd(std::int64_t n, int partners, std::int64_t isolated, std::uint64_t pattern_seed,
                              std::uint64_t value_seed) {
  std::mt19937_64 shape(pattern_seed), value(value_seed);
  std::uniform_real_distribution<double> magnitude(0.1, 1.0);
  const std::int64_t linked = n - isolated;
  std::vector<std::map<index_t, double>> rows(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < linked; ++i) {
    const int draws = std::uniform_int_distribution<int>(0, partners)(shape);
    for (int d = 0; d < draws; ++d) {
      const auto j = std::uniform_int_distribution<index_t>(0, static_cast<index_t>(linked - 1))(shape);
      if (j != i) rows[i][j] = rows[j][static_cast<index_t>(i)] = 0;
    }
  }
  for (std::int64_t i = 0; i < n; ++i) {
    for (auto& [j, v] : rows[i]) {
      if (j <= i) continue;
      const double m = magnitude(value);
      v = rows[j][static_cast<index_t>(i)] = value() & 1 ? m : -m;
    }
  }
  csr_matrix<double> a;
  a.rows = a.cols = n;
  for (std::int64_t i = 0; i < n; ++i) {
    double off_diagonal = 0;
    for (const auto& [j, v] : rows[i]) off_diagonal += std::abs(v);
    rows[i][static_cast<index_t>(i)] = off_diagonal + 0.5 + magnitude(value);
    for (const auto& [j, v] : rows[i]) {
      a.col_indices.push_back(j);
      a.values.push_back(v);
    }
    a.row_offsets.push_back(static_cast<offset_t>(a.col_indices.size()));
  }
  return a;
}

// S (x) K with K = I + 0.3 (ones), b x b: every entry of S a dense block, the
// matrix b-blocked, and symmetric positive definite where S is.
csr_matrix<double> kron_blocks(const csr_matrix<double>& s, int b) {
  csr_matrix<double> m;
  m.rows = s.rows * b;
  m.cols = s.cols * b;
  for (std::int64_t i = 0; i < s.rows; ++i) {
    for (int r = 0; r < b; ++r) {
      for (offset_t k = s.row_offsets[i]; k < s.row_offsets[i + 1]; ++k) {
        for (int c = 0; c < b; ++c) {
          m.col_indices.push_back(static_cast<index_t>(s.col_indices[k] * b + c));
          m.values.push_back(s.values[k] * ((r == c ? 1.0 : 0.0) + 0.3));
        }
      }
      m.row_offsets.push_back(static_cast<offset_t>(m.col_indices.size()));
    }
  }
  return m;
}

std::vector<double> random_vector(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v) x = value(rng);
  return v;
}

std::vector<double> downloaded(amg::operations& ops, const amg::vector& v) {
  std::vector<double> out(static_cast<std::size_t>(v.size()));
  ops.download(v, out.data());
  return out;
}

// A numeric-only product runs the numeric pass of the method that made the
// structure where it has one (RMerge's merge adds in its own order), else the
// table's (in the reference's order): within this of the reference.
constexpr double numeric_tolerance = 1e-12;

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
      expect_close(fetched(gpu(), *numeric), cpu_multiply(a2, b2), numeric_tolerance);
    }
  }
}

// Where A's rows fit one merge pass, RMerge's numeric pass is its value pass
// on the structure: the values of its whole product, bit for bit, whether it
// was asked for or the planner chose it; with longer rows, the table's.
TEST(GpuNumericProduct, RmergesNumericPassIsItsValuePass) {
  SPGEMM_REQUIRE_GPU();
  for (const char* spec : {"poisson3d7:20", "poisson2d5:40", "er:3000:16", "band:2000:64:16"}) {
    const csr_matrix<double> a = generate(spec);
    const csr_matrix<double> a2 = testing::with_random_values(a, 51), b2 = testing::with_random_values(a, 52);
    for (algorithm algo : {algorithm::rmerge, algorithm::automatic}) {
      SCOPED_TRACE(std::string(spec) + " " + std::string(to_string(algo)));
      multiply_options o;
      o.algo = algo;
      const auto sa = gpu().store(a);
      const auto structure = gpu().multiply(*sa, *sa, o);
      if (gpu().estimate_multiply(*sa, *sa, o).algo != algorithm::rmerge) continue;
      const auto sa2 = gpu().store(a2), sb2 = gpu().store(b2);
      const memory_estimate e = gpu().estimate_multiply_numeric(*sa2, *sb2, *structure, o);
      EXPECT_NE(e.method.find("rmerge"), std::string::npos) << e.method;
      poison_pool();
      const auto numeric = gpu().multiply_numeric(*sa2, *sb2, *structure, o, e.total());
      expect_close(fetched(gpu(), *numeric), fetched(gpu(), *gpu().multiply(*sa2, *sb2, o)), 0.0);
    }
  }
  // Rows longer than one merge pass: on few rows of A, RMerge's split passes
  // and the last one's value pass (rows of one and two levels); on many, the
  // table's numeric pass.
  const std::int64_t many = rmerge::numeric_levels_max_rows_per_sm * cuda::current_device_facts().sm_count;
  const std::pair<std::int64_t, std::int64_t> shapes[] = {{300, 200}, {300, 20000}, {many, 200}};
  for (const auto& [rows, longest] : shapes) {
    SCOPED_TRACE(std::to_string(rows) + " rows, the longest of " + std::to_string(longest));
    const csr_matrix<double> a = testing::with_lengths<double>(rows, 30000, {longest, 3, 0}, 53);
    const csr_matrix<double> b = testing::random_csr<double>(30000, 300, 6, 54);
    multiply_options o;
    o.algo = algorithm::rmerge;
    const auto sa = gpu().store(a), sb = gpu().store(b);
    const auto structure = gpu().multiply(*sa, *sb, o);
    const auto sa2 = gpu().store(testing::with_random_values(a, 55)), sb2 = gpu().store(testing::with_random_values(b, 56));
    const memory_estimate e = gpu().estimate_multiply_numeric(*sa2, *sb2, *structure, o);
    EXPECT_EQ(e.method.find("rmerge") != std::string::npos, rows < many) << e.method;
    poison_pool();
    expect_close(fetched(gpu(), *gpu().multiply_numeric(*sa2, *sb2, *structure, o, e.total())),
                 fetched(gpu(), *gpu().multiply(*sa2, *sb2, o)), numeric_tolerance);
  }
}

// The structure of another product of the same shape gives wrong values but
// stays in bounds: C keeps the structure's offsets and columns, and a row the
// product fills only in part holds zeros in the rest (never what the memory
// held before).
TEST(GpuNumericProduct, StructureOfAnotherProductStaysInBounds) {
  SPGEMM_REQUIRE_GPU();
  const csr_matrix<double> a = testing::random_csr<double>(500, 400, 8, 61);
  const csr_matrix<double> b = testing::random_csr<double>(400, 300, 5, 62);
  for (const csr_matrix<double>& other : {testing::random_csr<double>(400, 300, 2, 63),
                                          testing::random_csr<double>(400, 300, 12, 64)}) {
    for (algorithm algo : {algorithm::rmerge, algorithm::automatic}) {
      multiply_options o;
      o.algo = algo;
      const auto sa = gpu().store(a);
      const auto structure = gpu().multiply(*sa, *gpu().store(other), o);
      const auto sb = gpu().store(b);
      const memory_estimate e = gpu().estimate_multiply_numeric(*sa, *sb, *structure, o);
      poison_pool();
      const csr_matrix<double> got = fetched(gpu(), *gpu().multiply_numeric(*sa, *sb, *structure, o, e.total()));
      const csr_matrix<double> s = fetched(gpu(), *structure);
      ASSERT_EQ(got.row_offsets, s.row_offsets);
      ASSERT_EQ(got.col_indices, s.col_indices);
      for (double v : got.values) ASSERT_TRUE(std::isfinite(v));
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
    o.coarse_strength_theta = 0;  // the re-setup below equals a fresh setup where aggregates ignore values
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


// ---- Random operands, the device pool poisoned before every GPU call ----

struct operand_pair {
  std::string name;
  csr_matrix<double> a, b;
};

std::vector<operand_pair> random_products() {
  using testing::random_blocked;
  using testing::random_csr;
  using testing::with_lengths;
  return {
      {"rectangular", random_csr<double>(700, 500, 40, 11), random_csr<double>(500, 900, 30, 12)},
      // Rows of C far longer than a group's shared memory holds, and empty rows.
      {"long rows", with_lengths<double>(300, 4000, {3500, 0, 7, 1, 64}, 13),
       with_lengths<double>(4000, 3000, {2, 600, 0, 33}, 14)},
      // A few rows of C split across groups, some past shared memory, one empty.
      {"few wide rows", with_lengths<double>(64, 3000, {400, 30, 0, 900}, 26),
       with_lengths<double>(3000, 40000, {100, 3, 250}, 27)},
      {"no entries", testing::empty_csr<double>(50, 60), random_csr<double>(60, 70, 5, 15)},
      {"power law", testing::with_random_values(generate("rmat:11:8"), 16),
       testing::with_random_values(generate("rmat:11:8"), 17)},
      {"blocks of 2", random_blocked<double>(200, 150, 2, 12, 18), random_blocked<double>(150, 180, 2, 9, 19)},
      {"blocks of 3", random_blocked<double>(150, 120, 3, 10, 20), random_blocked<double>(120, 140, 3, 8, 21)},
      {"blocks of 4", random_blocked<double>(100, 90, 4, 8, 22), random_blocked<double>(90, 110, 4, 7, 23)},
      {"blocks of 6", random_blocked<double>(60, 50, 6, 6, 24), random_blocked<double>(50, 70, 6, 5, 25)},
  };
}

// Every method's structure of A B takes new values of A (a copy) and of B
// (in place), twice: the reference's values bit for bit, within the estimate.
TEST(GpuNumericProduct, RandomOperandsOnPoisonedMemory) {
  SPGEMM_REQUIRE_GPU();
  for (const operand_pair& p : random_products()) {
    const csr_matrix<double> a2 = testing::with_random_values(p.a, 31), b2 = testing::with_random_values(p.b, 32);
    const csr_matrix<double> want = cpu_multiply(a2, b2);
    for (algorithm algo : cuda_algorithms()) {
      SCOPED_TRACE(p.name + " " + std::string(to_string(algo)));
      multiply_options o;
      o.algo = algo;
      const auto sa = gpu().store(p.a);
      const auto sb = gpu().store(p.b);
      const auto structure = gpu().multiply(*sa, *sb, o);
      poison_pool();
      const auto sa2 = gpu().with_values(*sa, a2.values.data());
      gpu().write_values(*sb, b2.values.data());
      const memory_estimate e = gpu().estimate_multiply_numeric(*sa2, *sb, *structure, o);
      for (int run = 0; run < 2; ++run) {
        poison_pool();
        std::size_t peak = 0;
        const auto numeric = gpu().multiply_numeric(*sa2, *sb, *structure, o, e.total(), {}, &peak);
        EXPECT_LE(peak, e.total());
        expect_close(fetched(gpu(), *numeric), want, numeric_tolerance);
      }
      // The first operands' values again.
      const auto back = gpu().multiply_numeric(*sa, *gpu().with_values(*sb, p.b.values.data()), *structure, o,
                                               e.total());
      expect_close(fetched(gpu(), *back), cpu_multiply(p.a, p.b), numeric_tolerance);
    }
  }
}

// f32 operands (an f32 product), and an f32 A with an f64 B (an f64 product,
// A's values converted).
TEST(GpuNumericProduct, SingleAndMixedPrecision) {
  SPGEMM_REQUIRE_GPU();
  for (const operand_pair& p : random_products()) {
    const csr_matrix<float> a = convert_values<float>(p.a), b = convert_values<float>(p.b);
    const csr_matrix<float> a2 = testing::with_random_values(a, 41), b2 = testing::with_random_values(b, 42);
    const csr_matrix<double> b2_f64 = testing::with_random_values(p.b, 43);
    for (algorithm algo : cuda_algorithms()) {
      SCOPED_TRACE(p.name + " " + std::string(to_string(algo)));
      multiply_options o;
      o.algo = algo;
      {
        const auto sa = gpu().store(a), sb = gpu().store(b);
        const auto structure = gpu().multiply(*sa, *sb, o);
        const auto sa2 = gpu().with_values(*sa, a2.values.data()), sb2 = gpu().with_values(*sb, b2.values.data());
        const memory_estimate e = gpu().estimate_multiply_numeric(*sa2, *sb2, *structure, o);
        poison_pool();
        std::size_t peak = 0;
        const auto numeric = gpu().multiply_numeric(*sa2, *sb2, *structure, o, e.total(), {}, &peak);
        EXPECT_LE(peak, e.total());
        const auto got = std::get<csr_matrix<float>>(gpu().fetch(*numeric));
        const csr_matrix<float> want = cpu_multiply(a2, b2);
        ASSERT_EQ(got.row_offsets, want.row_offsets);
        ASSERT_EQ(got.col_indices, want.col_indices);
        EXPECT_LE(scaled_max_error(got, want, a2, b2), testing::tolerance<float>());
      }
      {
        const auto sa = gpu().store(a), sb = gpu().store(p.b);
        const auto structure = gpu().multiply(*sa, *sb, o);
        const auto sa2 = gpu().with_values(*sa, a2.values.data()), sb2 = gpu().with_values(*sb, b2_f64.values.data());
        const memory_estimate e = gpu().estimate_multiply_numeric(*sa2, *sb2, *structure, o);
        poison_pool();
        std::size_t peak = 0;
        const auto numeric = gpu().multiply_numeric(*sa2, *sb2, *structure, o, e.total(), {}, &peak);
        EXPECT_LE(peak, e.total());
        expect_close(fetched(gpu(), *numeric), cpu_multiply(convert_values<double>(a2), b2_f64), numeric_tolerance);
      }
    }
  }
}

// Galerkin products of random operands (scalar, and 3-blocked A and P: the
// block method's), both forms, against the CPU's; then new values of A and P,
// numeric only.
TEST(GpuGalerkin, RandomOperandsOnPoisonedMemory) {
  SPGEMM_REQUIRE_GPU();
  struct galerkin_case {
    std::string name;
    csr_matrix<double> a, p;  // p: fine x coarse
  };
  const std::vector<galerkin_case> cases = {
      {"scalar", random_spd(900, 6, 30, 51, 52), testing::random_csr<double>(900, 120, 5, 53)},
      {"blocks of 3", kron_blocks(random_spd(300, 5, 10, 54, 55), 3),
       testing::random_blocked<double>(300, 40, 3, 2, 56)},
  };
  backend& cpu = *cpu_backend();
  for (const galerkin_case& c : cases) {
    for (galerkin_form form : {galerkin_form::pt_a_p, galerkin_form::p_a_pt}) {
      SCOPED_TRACE(c.name + (form == galerkin_form::pt_a_p ? " P^T A P" : " P A P^T"));
      const csr_matrix<double> p = form == galerkin_form::pt_a_p ? c.p : cpu_transpose(c.p);
      poison_pool();
      const galerkin_result g = galerkin(gpu(), *gpu().store(p), *gpu().store(c.a), form, {});
      const galerkin_result want = galerkin(cpu, *cpu.store(p), *cpu.store(c.a), form, {});
      expect_close(fetched(gpu(), *g.c), fetched(cpu, *want.c), 1e-11);
      const csr_matrix<double> a2 = testing::with_random_values(c.a, 57), p2 = testing::with_random_values(p, 58);
      poison_pool();
      const galerkin_result again = galerkin_numeric(gpu(), *gpu().store(p2), *gpu().store(a2), form, g, {});
      EXPECT_EQ(again.order, g.order);
      const galerkin_result want2 = galerkin(cpu, *cpu.store(p2), *cpu.store(a2), form, {});
      expect_close(fetched(gpu(), *again.c), fetched(cpu, *want2.c), 1e-11);
    }
  }
}

// Every setup pass on random symmetric positive definite matrices (sparse
// and denser, scalar and of dense blocks, isolated nodes among them), at two
// thetas: the CPU's patterns, aggregates, T and inverse diagonals exactly,
// and P exactly from the same A T.
TEST(GpuAmgPasses, RandomMatricesOnPoisonedMemory) {
  SPGEMM_REQUIRE_GPU();
  struct passes_case {
    std::string name;
    csr_matrix<double> a;
    int block;
  };
  const std::vector<passes_case> cases = {
      {"scalar", random_spd(3000, 8, 40, 61, 62), 1},
      {"sparse scalar", random_spd(2000, 2, 0, 63, 64), 1},
      {"blocks of 2", kron_blocks(random_spd(700, 6, 20, 65, 66), 2), 2},
      {"blocks of 3", kron_blocks(random_spd(500, 6, 15, 67, 68), 3), 3},
  };
  auto g_ops = gpu().amg_operations();
  auto c_ops = cpu_backend()->amg_operations();
  backend& cpu = *cpu_backend();
  for (const passes_case& c : cases) {
    SCOPED_TRACE(c.name);
    const auto ga = gpu().store(c.a), ca = cpu.store(c.a);
    poison_pool();
    ASSERT_EQ(g_ops->node_size(*ga), c.block);
    ASSERT_EQ(c_ops->node_size(*ca), c.block);
    for (bool square_root : {false, true}) {
      poison_pool();
      EXPECT_EQ(downloaded(*g_ops, *g_ops->inverse_diagonal(*ga, square_root)),
                downloaded(*c_ops, *c_ops->inverse_diagonal(*ca, square_root)));
    }
    {  // both in one pass, as the two calls give them
      poison_pool();
      const auto both = g_ops->inverse_diagonals(*ga);
      EXPECT_EQ(downloaded(*g_ops, *both.inverse), downloaded(*c_ops, *c_ops->inverse_diagonal(*ca, false)));
      EXPECT_EQ(downloaded(*g_ops, *both.inverse_sqrt), downloaded(*c_ops, *c_ops->inverse_diagonal(*ca, true)));
    }
    const auto gd = g_ops->inverse_diagonal(*ga, false);
    const auto cd = c_ops->inverse_diagonal(*ca, false);
    for (double theta : {0.0, 0.3}) {
      SCOPED_TRACE(theta);
      poison_pool();
      const auto gs = g_ops->strength(*ga, c.block, theta, amg::strength_bytes(ga->info(), c.block));
      const auto cs = c_ops->strength(*ca, c.block, theta, amg::strength_bytes(ca->info(), c.block));
      const csr_matrix<float> gsm = std::get<csr_matrix<float>>(gpu().fetch(*gs));
      const csr_matrix<float> csm = std::get<csr_matrix<float>>(cpu.fetch(*cs));
      ASSERT_EQ(gsm.row_offsets, csm.row_offsets);
      ASSERT_EQ(gsm.col_indices, csm.col_indices);
      EXPECT_EQ(gsm.values, csm.values);
      poison_pool();
      const amg::aggregation gagg = g_ops->aggregate(*gs, amg::aggregate_bytes(gs->info()));
      const amg::aggregation cagg = c_ops->aggregate(*cs, amg::aggregate_bytes(cs->info()));
      EXPECT_EQ(gagg.count, cagg.count);
      EXPECT_EQ(gagg.rounds, cagg.rounds);
      expect_close(fetched(gpu(), *gagg.aggregates), fetched(cpu, *cagg.aggregates), 0.0);
      ASSERT_GT(cagg.count, 0);
      // A near null space of more columns than unknowns per node: the
      // constant and ramps; small aggregates get zero columns.
      const int m = c.block + 1;
      std::vector<double> b(static_cast<std::size_t>(c.a.rows * m));
      for (std::int64_t r = 0; r < c.a.rows; ++r) {
        b[r * m] = 1;
        for (int j = 1; j < m; ++j) b[r * m + j] = std::cos(0.7 * static_cast<double>(r) + j);
      }
      const auto gb = g_ops->upload(b.data(), c.a.rows * m);
      const auto cb = c_ops->upload(b.data(), c.a.rows * m);
      const std::size_t t_limit = amg::tentative_bytes(cagg.aggregates->info(), cagg.count, c.block, m);
      poison_pool();
      const amg::tentative_prolongator gt = g_ops->tentative(*gagg.aggregates, gagg.count, *gb, c.block, m, t_limit);
      const amg::tentative_prolongator ct = c_ops->tentative(*cagg.aggregates, cagg.count, *cb, c.block, m, t_limit);
      const csr_matrix<double> t = fetched(cpu, *ct.t);
      expect_close(fetched(gpu(), *gt.t), t, 0.0);
      EXPECT_EQ(downloaded(*g_ops, *gt.coarse), downloaded(*c_ops, *ct.coarse));
      // P from the same A T on both.
      const csr_matrix<double> at = cpu_multiply(c.a, t);
      const auto gat = gpu().store(at), cat = cpu.store(at);
      const std::size_t p_limit = amg::prolongator_bytes(ct.t->info(), cat->info());
      poison_pool();
      const auto gp = g_ops->smooth_prolongator(*gt.t, *gat, *gd, 4.0 / 3.0 / 1.7, p_limit);
      const auto cp = c_ops->smooth_prolongator(*ct.t, *cat, *cd, 4.0 / 3.0 / 1.7, p_limit);
      expect_close(fetched(gpu(), *gp), fetched(cpu, *cp), 0.0);
    }
  }
}

// axpby, scaled_axpby (x and y one vector too), copy, zeros and dot against
// the CPU's, short and long; a term whose coefficient is 0 holds NaN.
TEST(GpuAmgVectors, MatchTheCpuOnPoisonedMemory) {
  SPGEMM_REQUIRE_GPU();
  auto g = gpu().amg_operations();
  auto c = cpu_backend()->amg_operations();
  for (std::int64_t n : {1, 33, 4097, 300001}) {
    SCOPED_TRACE(n);
    const std::vector<double> x = random_vector(n, 71), y = random_vector(n, 72), d = random_vector(n, 73);
    const std::vector<double> nan(static_cast<std::size_t>(n), all_ones());
    poison_pool();
    EXPECT_EQ(downloaded(*g, *g->zeros(n)), std::vector<double>(static_cast<std::size_t>(n), 0.0));
    auto g_copy = g->upload(nan.data(), n);
    g->copy(*g->upload(x.data(), n), *g_copy);
    EXPECT_EQ(downloaded(*g, *g_copy), x);
    double scale = 0;
    for (std::int64_t i = 0; i < n; ++i) scale += std::abs(x[i] * y[i]);
    poison_pool();
    EXPECT_NEAR(g->dot(*g->upload(x.data(), n), *g->upload(y.data(), n)),
                c->dot(*c->upload(x.data(), n), *c->upload(y.data(), n)), 1e-13 * scale);
    const std::pair<double, double> coefficients[] = {{0.0, 0.0}, {1.5, 0.0}, {0.0, -2.0}, {0.5, 3.0}};
    for (const auto& [a, b] : coefficients) {
      SCOPED_TRACE(std::to_string(a) + " " + std::to_string(b));
      const std::vector<double>& x_in = a == 0 ? nan : x;
      const std::vector<double>& y_in = b == 0 ? nan : y;
      poison_pool();
      auto gx = g->upload(x_in.data(), n), gy = g->upload(y_in.data(), n), gd = g->upload(d.data(), n);
      auto cx = c->upload(x_in.data(), n), cy = c->upload(y_in.data(), n), cd = c->upload(d.data(), n);
      g->axpby(a, *gx, b, *gy);
      c->axpby(a, *cx, b, *cy);
      EXPECT_EQ(downloaded(*g, *gy), downloaded(*c, *cy));
      auto gz = g->upload(y_in.data(), n);
      auto cz = c->upload(y_in.data(), n);
      g->scaled_axpby(a, *gd, *gx, b, *gz);
      c->scaled_axpby(a, *cd, *cx, b, *cz);
      EXPECT_EQ(downloaded(*g, *gz), downloaded(*c, *cz));
      if (a != 0 && b != 0) {  // y = a (d .* y) + b y, in place
        g->scaled_axpby(a, *gd, *gz, b, *gz);
        c->scaled_axpby(a, *cd, *cz, b, *cz);
        EXPECT_EQ(downloaded(*g, *gz), downloaded(*c, *cz));
      }
    }
  }
}

// The Lanczos recurrence of the spectral radius with its scalars on the device
// against the CPU's loop of vector calls: the same tridiagonal within
// rounding, at every group width (mean rows of 3 to 40), on poisoned memory;
// an invariant subspace stops both at the same step (a diagonal matrix, whose
// S A S is the identity: one step).
TEST(GpuAmgVectors, LanczosMatchesTheCpu) {
  SPGEMM_REQUIRE_GPU();
  auto g = gpu().amg_operations();
  auto c = cpu_backend()->amg_operations();
  csr_matrix<double> diagonal;
  diagonal.rows = diagonal.cols = 3000;
  for (index_t i = 0; i < 3000; ++i) {
    diagonal.col_indices.push_back(i);
    diagonal.values.push_back(1.0 + i % 3);
    diagonal.row_offsets.push_back(i + 1);
  }
  // The last random case has more groups of lanes than the product's grid
  // holds at once (600,000 rows at 2 lanes: past lanczos_parts blocks).
  const csr_matrix<double> cases[] = {random_spd(5000, 3, 0, 51, 52), random_spd(3000, 12, 0, 53, 54),
                                      random_spd(2000, 40, 0, 55, 56), diagonal,
                                      random_spd(600000, 3, 0, 57, 58)};
  for (const csr_matrix<double>& a : cases) {
    SCOPED_TRACE(std::to_string(a.rows) + " rows, " + std::to_string(a.nnz()) + " entries");
    const auto ga = gpu().store(a), ca = cpu_backend()->store(a);
    poison_pool();
    const auto gs = g->inverse_diagonal(*ga, true), cs = c->inverse_diagonal(*ca, true);
    std::vector<double> g_alpha, g_beta, c_alpha, c_beta;
    g->lanczos(*ga, *gs, 15, g_alpha, g_beta);
    c->lanczos(*ca, *cs, 15, c_alpha, c_beta);
    ASSERT_EQ(g_alpha.size(), c_alpha.size());
    ASSERT_EQ(g_beta.size(), c_beta.size());
    EXPECT_EQ(g_beta.size() + 1, g_alpha.size());
    if (&a == &cases[3]) {
      EXPECT_EQ(g_alpha.size(), 1u);
    }
    for (std::size_t k = 0; k < g_alpha.size(); ++k) EXPECT_NEAR(g_alpha[k], c_alpha[k], 1e-8) << k;
    for (std::size_t k = 0; k < g_beta.size(); ++k) EXPECT_NEAR(g_beta[k], c_beta[k], 1e-8) << k;
  }
}

// SpMV at every group width (mean row lengths 2, 12, 28, 60 and 130, empty
// rows among them), rectangular, against the CPU's: y = A x into NaN, y = a A x +
// b y, and alpha = 0 with NaN in x.
TEST(GpuAmgVectors, SpmvAtEveryGroupWidth) {
  SPGEMM_REQUIRE_GPU();
  auto g = gpu().amg_operations();
  auto c = cpu_backend()->amg_operations();
  const std::vector<std::vector<std::int64_t>> lengths = {{1, 2, 3}, {10, 14}, {20, 36}, {0, 60, 120},
                                                         {100, 0, 300, 120}};
  for (std::size_t s = 0; s < lengths.size(); ++s) {
    SCOPED_TRACE(s);
    const csr_matrix<double> a = testing::with_lengths<double>(5000, 3000, lengths[s], 80 + s);
    const auto ga = gpu().store(a), ca = cpu_backend()->store(a);
    const std::vector<double> x = random_vector(a.cols, 90 + s), y = random_vector(a.rows, 100 + s);
    const std::vector<double> nan_x(static_cast<std::size_t>(a.cols), all_ones());
    const std::vector<double> nan_y(static_cast<std::size_t>(a.rows), all_ones());
    std::vector<double> scale(static_cast<std::size_t>(a.rows), 1.0);
    for (std::int64_t i = 0; i < a.rows; ++i)
      for (offset_t k = a.row_offsets[i]; k < a.row_offsets[i + 1]; ++k) scale[i] += std::abs(a.values[k] * x[a.col_indices[k]]);
    struct spmv_case {
      double alpha, beta;
      const std::vector<double>& x;
      const std::vector<double>& y;
    };
    for (const spmv_case& k : {spmv_case{1.0, 0.0, x, nan_y}, spmv_case{-0.5, 2.0, x, y}, spmv_case{0.0, 1.5, nan_x, y}}) {
      SCOPED_TRACE(std::to_string(k.alpha) + " " + std::to_string(k.beta));
      poison_pool();
      auto gx = g->upload(k.x.data(), a.cols), gy = g->upload(k.y.data(), a.rows);
      auto cx = c->upload(k.x.data(), a.cols), cy = c->upload(k.y.data(), a.rows);
      g->spmv(*ga, *gx, k.alpha, k.beta, *gy);
      c->spmv(*ca, *cx, k.alpha, k.beta, *cy);
      const std::vector<double> got = downloaded(*g, *gy), want = downloaded(*c, *cy);
      for (std::int64_t i = 0; i < a.rows; ++i) ASSERT_NEAR(got[i], want[i], 1e-13 * scale[i]) << "row " << i;
    }
  }
}

// More rows than one pass of the grid covers (2^16 blocks of 256 threads,
// 4 lanes a row at a mean of 17 entries: 2^22 rows): every row written.
TEST(GpuAmgVectors, SpmvPastTheGridCap) {
  SPGEMM_REQUIRE_GPU();
  const std::int64_t rows = (std::int64_t{1} << 23) + 4099;
  const int width = 17;
  csr_matrix<double> a;
  a.rows = a.cols = rows;
  a.row_offsets.resize(static_cast<std::size_t>(rows) + 1);
  a.col_indices.resize(static_cast<std::size_t>(rows * width));
  a.values.assign(a.col_indices.size(), 1.0);
  for (std::int64_t r = 0; r <= rows; ++r) a.row_offsets[r] = static_cast<offset_t>(r * width);
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t first = std::min(r, rows - width);
    for (int k = 0; k < width; ++k) a.col_indices[r * width + k] = static_cast<index_t>(first + k);
  }
  std::vector<double> x(static_cast<std::size_t>(rows));
  for (std::int64_t j = 0; j < rows; ++j) x[j] = static_cast<double>(j % 5);
  auto g = gpu().amg_operations();
  const auto ga = gpu().store(a);
  a = {};
  const std::vector<double> nan(static_cast<std::size_t>(rows), all_ones());
  auto gx = g->upload(x.data(), rows), gy = g->upload(nan.data(), rows);
  g->spmv(*ga, *gx, 1.0, 0.0, *gy);
  const std::vector<double> y = downloaded(*g, *gy);
  std::int64_t wrong = 0, first_wrong = -1;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t first = std::min(r, rows - width);
    double want = 0;
    for (int k = 0; k < width; ++k) want += static_cast<double>((first + k) % 5);
    if (y[r] != want && wrong++ == 0) first_wrong = r;
  }
  EXPECT_EQ(wrong, 0) << "first wrong row " << first_wrong << " of " << rows;
}

// The coarsest level's inverse at sizes below, at and past the blocks of 32
// pivots (a last block whole or partial), sparse and dense:
// A^-1 (A x) = x, as the CPU's LU solves it, within its estimate, and the
// factor unchanged by a solve.
TEST(GpuAmgDense, EvenAndOddSizesOnPoisonedMemory) {
  SPGEMM_REQUIRE_GPU();
  auto g = gpu().amg_operations();
  auto c = cpu_backend()->amg_operations();
  for (std::int64_t n : {1, 2, 3, 16, 17, 31, 32, 33, 64, 65, 200, 201}) {
    for (int partners : {4, 1000}) {
      SCOPED_TRACE(std::to_string(n) + " rows, up to " + std::to_string(partners) + " partners");
      const csr_matrix<double> a = random_spd(n, partners, 0, 110 + n, 120 + n);
      const auto ga = gpu().store(a), ca = cpu_backend()->store(a);
      poison_pool();
      const std::size_t before = gpu().memory().in_use_bytes;
      gpu().reset_peak();
      const auto gf = g->factor(*ga, amg::factor_bytes(ga->info()));
      EXPECT_LE(gpu().memory().peak_bytes - before, amg::factor_bytes(ga->info()));
      const auto cf = c->factor(*ca, amg::factor_bytes(ca->info()));
      for (std::uint64_t seed : {130, 131}) {
        const std::vector<double> x = random_vector(n, seed);
        std::vector<double> b(static_cast<std::size_t>(n), 0.0);
        for (std::int64_t i = 0; i < n; ++i)
          for (offset_t k = a.row_offsets[i]; k < a.row_offsets[i + 1]; ++k) b[i] += a.values[k] * x[a.col_indices[k]];
        const std::vector<double> nan(static_cast<std::size_t>(n), all_ones());
        auto gx = g->upload(nan.data(), n);
        auto cx = c->zeros(n);
        g->solve(*gf, *g->upload(b.data(), n), *gx);
        c->solve(*cf, *c->upload(b.data(), n), *cx);
        const std::vector<double> got = downloaded(*g, *gx), want = downloaded(*c, *cx);
        for (std::int64_t i = 0; i < n; ++i) {
          EXPECT_NEAR(got[i], x[i], 1e-10);
          EXPECT_NEAR(got[i], want[i], 1e-11);
        }
      }
    }
  }
}

// A zero pivot, first or later, at even and odd sizes: refused as the CPU's LU refuses it.
TEST(GpuAmgDense, ZeroPivotsAreRefused) {
  SPGEMM_REQUIRE_GPU();
  auto g = gpu().amg_operations();
  auto c = cpu_backend()->amg_operations();
  const std::vector<std::vector<std::vector<double>>> matrices = {
      {{0, 1}, {1, 0}},                          // the first pivot
      {{1, 1}, {1, 1}},                          // the second
      {{2, 1, 0}, {1, 0.5, 0}, {0, 0, 1}},       // the second of three
      {{1, 0, 0}, {0, 1, 0}, {0, 0, 0}},         // the last of three (no entry)
  };
  for (std::size_t s = 0; s < matrices.size(); ++s) {
    SCOPED_TRACE(s);
    const auto& d = matrices[s];
    csr_matrix<double> a;
    a.rows = a.cols = static_cast<std::int64_t>(d.size());
    for (const auto& row : d) {
      for (std::size_t j = 0; j < row.size(); ++j) {
        if (row[j] == 0) continue;
        a.col_indices.push_back(static_cast<index_t>(j));
        a.values.push_back(row[j]);
      }
      a.row_offsets.push_back(static_cast<offset_t>(a.col_indices.size()));
    }
    const auto ga = gpu().store(a), ca = cpu_backend()->store(a);
    poison_pool();
    EXPECT_THROW(g->factor(*ga, amg::factor_bytes(ga->info())), error);
    EXPECT_THROW(c->factor(*ca, amg::factor_bytes(ca->info())), error);
  }
  // A zero pivot in the second block of 32: the identity of 50 rows without row 40's entry.
  csr_matrix<double> a;
  a.rows = a.cols = 50;
  for (index_t i = 0; i < 50; ++i) {
    if (i != 40) {
      a.col_indices.push_back(i);
      a.values.push_back(1.0);
    }
    a.row_offsets.push_back(static_cast<offset_t>(a.col_indices.size()));
  }
  const auto ga = gpu().store(a), ca = cpu_backend()->store(a);
  poison_pool();
  EXPECT_THROW(g->factor(*ga, amg::factor_bytes(ga->info())), error);
  EXPECT_THROW(c->factor(*ca, amg::factor_bytes(ca->info())), error);
}

// Whole hierarchies of random symmetric positive definite matrices (scalar,
// with a strength threshold, and of 3 x 3 blocks with isolated nodes) on the
// GPU against the CPU's: every level's A, P and R, one V-cycle and the
// solve; then a re-setup with new values of the same pattern (numeric-only
// products) against the CPU's re-setup.
TEST(GpuAmgHierarchy, RandomMatricesAndResetupOnPoisonedMemory) {
  SPGEMM_REQUIRE_GPU();
  struct hierarchy_case {
    std::string name;
    csr_matrix<double> a, a2;  // a2: new values, a's pattern
    double theta;
  };
  const std::vector<hierarchy_case> cases = {
      {"scalar", random_spd(4000, 6, 50, 141, 142), random_spd(4000, 6, 50, 141, 143), 0.0},
      {"scalar, theta 0.1", random_spd(3000, 10, 0, 144, 145), random_spd(3000, 10, 0, 144, 146), 0.1},
      {"blocks of 3", kron_blocks(random_spd(800, 6, 10, 147, 148), 3),
       kron_blocks(random_spd(800, 6, 10, 147, 149), 3), 0.0},
  };
  backend& cpu = *cpu_backend();
  auto expect_same_levels = [&](const amg::hierarchy& got, const amg::hierarchy& want) {
    ASSERT_EQ(got.levels(), want.levels());
    EXPECT_EQ(got.report().mis_rounds, want.report().mis_rounds);
    for (std::size_t k = 0; k < want.levels(); ++k) {
      SCOPED_TRACE("level " + std::to_string(k));
      expect_close(fetched(gpu(), *got.a(k)), fetched(cpu, *want.a(k)), 1e-9);
      if (k + 1 == want.levels()) continue;
      expect_close(fetched(gpu(), *got.p(k)), fetched(cpu, *want.p(k)), 1e-9);
      expect_close(fetched(gpu(), *got.r(k)), fetched(cpu, *want.r(k)), 1e-9);
    }
  };
  for (const hierarchy_case& c : cases) {
    SCOPED_TRACE(c.name);
    amg::setup_options o;
    o.max_coarse = 40;
    o.strength_theta = c.theta;
    poison_pool();
    const auto g = amg::builder::build(gpu_backend(), gpu().store(c.a), o);
    const auto h = amg::builder::build(cpu_backend(), cpu.store(c.a), o);
    ASSERT_GE(h->levels(), 2u);
    expect_same_levels(*g, *h);
    const std::vector<double> r = random_vector(c.a.rows, 150);
    for (amg::smoother s : {amg::smoother::chebyshev, amg::smoother::jacobi}) {
      amg::solve_options so;
      so.smoothing = s;
      std::vector<double> gz, cz, gx, cx;
      poison_pool();
      g->precondition(r, gz, so);
      h->precondition(r, cz, so);
      ASSERT_EQ(gz.size(), cz.size());
      double largest = 0;
      for (double v : cz) largest = std::max(largest, std::abs(v));
      for (std::size_t i = 0; i < cz.size(); ++i) ASSERT_NEAR(gz[i], cz[i], 1e-9 * largest) << "entry " << i;
      poison_pool();
      const amg::solve_report gr = g->solve(r, gx, so);
      const amg::solve_report cr = h->solve(r, cx, so);
      EXPECT_TRUE(gr.converged);
      EXPECT_NEAR(gr.iterations, cr.iterations, 1);
    }
    poison_pool();
    const auto again = amg::builder::rebuild(gpu_backend(), *g, gpu().store(c.a2));
    const auto want = amg::builder::rebuild(cpu_backend(), *h, cpu.store(c.a2));
    EXPECT_TRUE(again->report().numeric_only);
    expect_same_levels(*again, *want);
  }
}

// A re-setup's steps (numeric-only products) within their estimates, and
// its levels those of a fresh setup of the new values.
TEST(GpuAmgHierarchy, ResetupStepsStayWithinTheirEstimates) {
  SPGEMM_REQUIRE_GPU();
  amg::setup_options o;
  o.max_coarse = 40;
  o.coarse_strength_theta = 0;  // a fresh setup of the new values has the same aggregates
  const auto h = amg::builder::build(gpu_backend(), gpu().store(kron_blocks(random_spd(600, 6, 10, 161, 162), 3)), o);
  const auto a2 = gpu().store(kron_blocks(random_spd(600, 6, 10, 161, 163), 3));
  amg::builder b(gpu_backend(), *h, a2);
  while (!b.done()) {
    SCOPED_TRACE(b.next_step());
    poison_pool();
    const std::size_t estimate = b.estimate().total();
    const std::size_t before = gpu().memory().in_use_bytes;
    gpu().reset_peak();
    b.run(estimate);
    EXPECT_LE(gpu().memory().peak_bytes - before, estimate);
  }
  const auto again = b.finish();
  const auto fresh = amg::builder::build(gpu_backend(), a2, o);
  ASSERT_EQ(again->levels(), fresh->levels());
  for (std::size_t k = 0; k < fresh->levels(); ++k) {
    expect_close(fetched(gpu(), *again->a(k)), fetched(gpu(), *fresh->a(k)), 1e-9);
  }
}

}  // namespace
}  // namespace spgemm
