// The cuda backend and RMerge against the CPU reference (spgemm::cpu_multiply):
// identical structure, values within 1e-12 (double) or 1e-5 (float) of
// |A||B| per entry. Every test skips where no CUDA device is visible.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "spgemm/backend.hpp"
#include "spgemm/errors.hpp"
#include "spgemm/generate.hpp"
#include "spgemm/io.hpp"
#include "spgemm/multiply.hpp"
#include "spgemm/reference.hpp"
#include "gpu_test_support.hpp"
#include "test_matrices.hpp"

namespace spgemm {
namespace {

template <typename T>
csr_matrix<T> to(const csr_matrix<double>& m) {
  return convert_values<T>(m);
}

using testing::expect_product;
using testing::gpu;
using testing::gpu_multiply;
using testing::tolerance;

template <typename T>
class GpuRmerge : public ::testing::Test {
 protected:
  void SetUp() override { SPGEMM_REQUIRE_GPU(); }
};
using value_types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(GpuRmerge, value_types);

TYPED_TEST(GpuRmerge, EmptyShapes) {
  using T = TypeParam;
  expect_product(csr_matrix<T>{}, csr_matrix<T>{});                                         // 0x0 * 0x0
  expect_product(testing::empty_csr<T>(5, 0), testing::empty_csr<T>(0, 7));  // 5x0 * 0x7
  expect_product(testing::empty_csr<T>(0, 5), testing::random_csr<T>(5, 3, 3, 4));  // 0x5 * 5x3
  expect_product(testing::empty_csr<T>(4, 6), testing::random_csr<T>(6, 3, 3, 6));  // no entries in A
  expect_product(testing::random_csr<T>(4, 6, 3, 7), testing::empty_csr<T>(6, 3));  // no entries in B
}

TYPED_TEST(GpuRmerge, OneByOne) {
  using T = TypeParam;
  csr_matrix<T> a;
  a.rows = a.cols = 1;
  a.row_offsets = {0, 1};
  a.col_indices = {0};
  a.values = {T(0.75)};
  expect_product(a, a);
  const csr_matrix<T> c = gpu_multiply(a, a);
  ASSERT_EQ(c.values.size(), 1u);
  EXPECT_EQ(c.values[0], T(0.75) * T(0.75));
}

TYPED_TEST(GpuRmerge, Rectangular) {
  using T = TypeParam;
  expect_product(testing::random_csr<T>(37, 50, 12, 11), testing::random_csr<T>(50, 11, 6, 12));
  expect_product(testing::random_csr<T>(11, 50, 40, 13), testing::random_csr<T>(50, 37, 30, 14));
}

TYPED_TEST(GpuRmerge, EmptyRows) {
  using T = TypeParam;
  const auto a = testing::with_lengths<T>(200, 150, {0, 5, 0, 0, 17, 1}, 21);
  const auto b = testing::with_lengths<T>(150, 180, {3, 0, 9, 0}, 22);
  expect_product(a, b);
}

TYPED_TEST(GpuRmerge, DenseRowForcesSeveralLevels) {
  using T = TypeParam;
  // Row 3 holds 4500 entries: the default M = 128 splits once (4500 -> 36), M = 16
  // (Gremse's W = 16, R = 1) three times (4500 -> 282 -> 18 -> 2), M = 2 twelve times.
  auto a = testing::random_csr_rows<T>(9, 5000, 31, [](std::int64_t r, std::mt19937_64& rng) {
    return r == 3 ? std::int64_t{4500} : std::uniform_int_distribution<std::int64_t>(0, 40)(rng);
  });
  const auto b = testing::random_csr<T>(5000, 400, 6, 32);
  expect_product(a, b);
  multiply_options two;
  two.tuning.rmerge = {2, 1};  // M = 2: twelve levels
  expect_product(a, b, two);
  multiply_options gremse;
  gremse.tuning.rmerge = {16, 1};
  expect_product(a, b, gremse);
}

class GpuRmergeRowLength : public ::testing::TestWithParam<std::int64_t> {
 protected:
  void SetUp() override { SPGEMM_REQUIRE_GPU(); }
};

TEST_P(GpuRmergeRowLength, EveryRowAtTheBoundary) {
  const std::int64_t length = GetParam();
  const auto a = testing::with_lengths<double>(64, 600, {length}, 100 + static_cast<std::uint64_t>(length));
  const auto b = testing::random_csr<double>(600, 500, 10, 200 + static_cast<std::uint64_t>(length));
  expect_product(a, b);
  // One long row among short ones (the plan sees a small mean).
  const auto mixed = testing::with_lengths<double>(64, 600, {length, 1, 2, 0}, 300 + static_cast<std::uint64_t>(length));
  expect_product(mixed, b);
  expect_product(to<float>(mixed), to<float>(b));
}

INSTANTIATE_TEST_SUITE_P(SubwarpAndMergeFactor, GpuRmergeRowLength,
                         ::testing::Values(1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128,
                                           129, 255, 256, 257));

// RMerge's estimate counts A * B's products and the bound of nnz(C) (the sum
// over rows of min(products, columns of B)) exactly, whether a thread, a few
// lanes or a warp takes a row: mean rows of 1 to 200 entries, rows past 64
// among short ones, empty rows, explicit plans of many levels.
TYPED_TEST(GpuRmerge, EstimateCountsProductsExactly) {
  using T = TypeParam;
  const auto b = testing::random_csr<T>(3000, 700, 30, 51);
  const auto sb = gpu().store(b);
  int seed = 52;
  for (const std::vector<std::int64_t>& lengths :
       {std::vector<std::int64_t>{1}, {0, 3, 2}, {12, 9}, {40, 0, 17}, {200, 190}, {2, 1, 300, 0, 5, 70, 3, 1},
        {2500, 0, 1}}) {
    const auto a = testing::with_lengths<T>(400, 3000, lengths, seed++);
    const auto sa = gpu().store(a);
    std::int64_t products = 0;
    std::int64_t bound = 0;
    for (const std::int64_t p : compute_row_work(a, b).products) {
      products += p;
      bound += std::min<std::int64_t>(p, b.cols);
    }
    for (const rmerge_config plan : {rmerge_config{}, rmerge_config{2, 1}, rmerge_config{32, 4}}) {
      SCOPED_TRACE(::testing::Message() << "rows of " << ::testing::PrintToString(lengths) << ", W=" << plan.subwarp
                                        << " R=" << plan.rows_per_thread);
      multiply_options options;
      options.algo = algorithm::rmerge;
      options.tuning.rmerge = plan;
      const memory_estimate e = gpu().estimate_multiply(*sa, *sb, options);
      EXPECT_EQ(e.products, products);
      EXPECT_EQ(e.nnz_bound, bound);
      expect_product(a, b, options);
    }
  }
}

TYPED_TEST(GpuRmerge, EverySubwarpAndRowsPerThread) {
  using T = TypeParam;
  // Longest row 300 > 128: every (W, R) runs its splitting pass as given.
  const auto a = testing::random_csr_rows<T>(300, 400, 41, [](std::int64_t r, std::mt19937_64& rng) {
    return r == 17 ? std::int64_t{300} : std::uniform_int_distribution<std::int64_t>(0, 40)(rng);
  });
  const auto b = testing::random_csr<T>(400, 350, 8, 42);
  for (int w : {2, 4, 8, 16, 32}) {
    for (int r : {1, 2, 4}) {
      SCOPED_TRACE("W=" + std::to_string(w) + " R=" + std::to_string(r));
      multiply_options options;
      options.algo = algorithm::rmerge;
      options.tuning.rmerge = {w, r};
      expect_product(a, b, options);
    }
  }
  // Only one of the two given.
  multiply_options only_w;
  only_w.tuning.rmerge = {8, 0};
  expect_product(a, b, only_w);
  multiply_options only_r;
  only_r.tuning.rmerge = {0, 4};
  expect_product(a, b, only_r);
}

// A warp's merge loop runs over as many cursors as the longest of its rows
// needs (one, two or all R): warps whose rows need each count, mixed with
// empty and one-entry rows, rows that end at a cursor's boundary, and warps
// past the last row.
TYPED_TEST(GpuRmerge, EveryCursorCountInAWarp) {
  using T = TypeParam;
  const auto b = testing::random_csr<T>(600, 500, 10, 61);
  int seed = 62;
  for (int w : {2, 4, 8, 16, 32}) {
    for (int r : {1, 2, 4}) {
      const std::int64_t full = static_cast<std::int64_t>(w) * r;
      const std::int64_t rows = 32 / w * 5 + 3;
      for (const std::vector<std::int64_t>& lengths :
           {std::vector<std::int64_t>{full, 0, 1}, {std::min<std::int64_t>(w + 1, full), 1, 0, 0}, {1, 0},
            {w, full, 0, std::min<std::int64_t>(2 * w + 1, full)}, {0}}) {
        SCOPED_TRACE(::testing::Message() << "W=" << w << " R=" << r << ", rows of "
                                          << ::testing::PrintToString(lengths));
        multiply_options options;
        options.algo = algorithm::rmerge;
        options.tuning.rmerge = {w, r};
        expect_product(testing::with_lengths<T>(rows, 600, lengths, seed++), b, options);
      }
    }
  }
}

TYPED_TEST(GpuRmerge, Generators) {
  using T = TypeParam;
  for (const char* spec : {"poisson3d7:20", "poisson3d27:12", "elasticity3d:6", "rmat:10:8"}) {
    SCOPED_TRACE(spec);
    const auto a = to<T>(testing::with_random_values(generate(spec), 7));
    expect_product(a, a);
  }
}

// The stage of B (tuning::rmerge_stage_b; off by default): warps whose rows
// of B fit copy them into shared memory, the others merge from global
// memory, in both passes; rows at every sub-warp boundary, stencils and
// uniform random rows, explicit sizes 32 to 2048.
TYPED_TEST(GpuRmerge, StagedRowsOfB) {
  using T = TypeParam;
  std::vector<csr_matrix<T>> inputs;
  for (const char* spec : {"poisson3d7:20", "poisson3d27:12", "er:3000:8", "band:4000:64:16"}) {
    inputs.push_back(to<T>(testing::with_random_values(generate(spec), 17)));
  }
  for (std::int64_t length : {2, 5, 17, 33, 65, 128}) {
    inputs.push_back(testing::with_lengths<T>(96, 700, {length, 1, 0, 3}, 400 + static_cast<std::uint64_t>(length)));
  }
  for (const std::int64_t stage : {32, 256, 1024, 2048}) {
    multiply_options options;
    options.algo = algorithm::rmerge;
    options.tuning.rmerge_stage_b = stage;
    for (const auto& a : inputs) {
      SCOPED_TRACE("stage " + std::to_string(stage) + ", " + std::to_string(a.rows) + " rows");
      const auto b = a.rows == a.cols ? a : testing::random_csr<T>(a.cols, 500, 10, 77);
      expect_product(a, b, options);
    }
  }
}

// `m` with the last entry of every k-th row (from `first`) dropped: those
// rows, and the rows after them, repeat the row before them no more.
template <typename T>
csr_matrix<T> without_last_entries(const csr_matrix<T>& m, std::int64_t first, std::int64_t k) {
  csr_matrix<T> out;
  out.rows = m.rows;
  out.cols = m.cols;
  for (std::int64_t r = 0; r < m.rows; ++r) {
    offset_t end = m.row_offsets[r + 1];
    if (r >= first && (r - first) % k == 0 && end > m.row_offsets[r]) --end;
    for (offset_t e = m.row_offsets[r]; e < end; ++e) {
      out.col_indices.push_back(m.col_indices[e]);
      out.values.push_back(m.values[e]);
    }
    out.row_offsets.push_back(static_cast<offset_t>(out.col_indices.size()));
  }
  return out;
}

// Every row of `m` `times` times over, with values of its own.
template <typename T>
csr_matrix<T> rows_repeated(const csr_matrix<T>& m, int times, std::uint64_t seed) {
  csr_matrix<T> out;
  out.rows = m.rows * times;
  out.cols = m.cols;
  for (std::int64_t r = 0; r < m.rows; ++r) {
    for (int t = 0; t < times; ++t) {
      for (offset_t e = m.row_offsets[r]; e < m.row_offsets[r + 1]; ++e) out.col_indices.push_back(m.col_indices[e]);
      out.row_offsets.push_back(static_cast<offset_t>(out.col_indices.size()));
    }
  }
  out.values.assign(out.col_indices.size(), T(1));
  return testing::with_random_values(out, seed);
}

// The structure pass skips the rows of C that repeat the row before
// (rmerge_tuning.hpp, skips_repeats): shifted rows of a stencil times itself,
// times a B whose rows break the shift here and there (those rows of C are
// merged), identical rows of FEM nodes' unknowns and of a repeated random
// matrix times a B of no repeats, runs of empty rows, FEM rows of up to 162
// entries (a split plan: its first pass skips the rows of one chunk); the
// plan says so, and does not where the repeated rows hold too few products.
TYPED_TEST(GpuRmerge, RepeatedRowsSkipped) {
  using T = TypeParam;
  // Each large enough for the skip to pay (rmerge_tuning.hpp: 2^24 products in repeated rows).
  const auto stencil = to<T>(testing::with_random_values(generate("poisson3d27:36"), 91));
  const auto broken = without_last_entries(stencil, 5, 37);
  const auto fem = to<T>(testing::with_random_values(generate("femblocks:22:3"), 92));
  const auto fem_split = to<T>(testing::with_random_values(generate("femblocks:14:6"), 90));
  const auto repeated = rows_repeated(testing::random_csr<T>(6000, 5000, 60, 93), 3, 94);
  const auto random_b = testing::random_csr<T>(5000, 4000, 120, 95);
  const auto empty_runs = testing::with_lengths<T>(40000, 5000, {0, 0, 0, 0, 0, 0, 0, 100}, 96);
  const auto long_rows = rows_repeated(testing::random_csr<T>(6000, 5000, 300, 97), 3, 98);
  const auto sparse_b = testing::random_csr<T>(5000, 4000, 4, 99);
  struct product {
    const char* what;
    const csr_matrix<T>& a;
    const csr_matrix<T>& b;
    bool skips;
  };
  for (const product& p : {product{"stencil squared", stencil, stencil, true},
                           product{"stencil times broken", stencil, broken, true},
                           product{"broken times stencil", broken, stencil, true},
                           product{"fem squared", fem, fem, true},
                           product{"repeated rows times random", repeated, random_b, true},
                           product{"empty runs times random", empty_runs, random_b, true},
                           product{"fem of long rows squared (split)", fem_split, fem_split, true},
                           product{"long repeated rows, few products", long_rows, sparse_b, false}}) {
    SCOPED_TRACE(p.what);
    multiply_options options;
    options.algo = algorithm::rmerge;
    const memory_estimate e = gpu().estimate_multiply(*gpu().store(p.a), *gpu().store(p.b), options);
    EXPECT_EQ(e.method.find("repeated rows skipped") != std::string::npos, p.skips) << e.method;
    expect_product(p.a, p.b, options);
  }
  // A times itself by one handle: A's flags serve as B's.
  backend& g = gpu();
  const auto s = g.store(stencil);
  multiply_options options;
  options.algo = algorithm::rmerge;
  const memory_estimate e = g.estimate_multiply(*s, *s, options);
  const auto c = std::get<csr_matrix<T>>(g.fetch(*g.multiply(*s, *s, options, e.total(), {}, nullptr)));
  const auto ref = cpu_multiply(stencil, stencil);
  ASSERT_EQ(c.row_offsets, ref.row_offsets);
  ASSERT_EQ(c.col_indices, ref.col_indices);
  EXPECT_LE(scaled_max_error(c, ref, stencil, stencil), tolerance<T>());
}

TYPED_TEST(GpuRmerge, Deterministic) {
  using T = TypeParam;
  const auto a = to<T>(testing::with_random_values(generate("rmat:10:8"), 3));
  for (const rmerge_config config : {rmerge_config{}, rmerge_config{4, 2}}) {
    multiply_options options;
    options.tuning.rmerge = config;
    const auto first = gpu_multiply(a, a, options);
    const auto second = gpu_multiply(a, a, options);
    ASSERT_EQ(first.row_offsets, second.row_offsets);
    ASSERT_EQ(first.col_indices, second.col_indices);
    ASSERT_EQ(first.values.size(), second.values.size());
    EXPECT_EQ(std::memcmp(first.values.data(), second.values.data(), first.values.size() * sizeof(T)), 0);
  }
}

TYPED_TEST(GpuRmerge, FetchRowBlocks) {
  using T = TypeParam;
  const auto m = testing::with_lengths<T>(57, 80, {4, 0, 11, 2, 0, 0, 7}, 51);
  backend& g = gpu();
  const auto s = g.store(m);
  EXPECT_EQ(s->info().nnz, m.nnz());
  const auto whole = std::get<csr_matrix<T>>(g.fetch(*s));
  EXPECT_EQ(whole.row_offsets, m.row_offsets);
  EXPECT_EQ(whole.col_indices, m.col_indices);
  EXPECT_EQ(whole.values, m.values);
  for (const auto& [begin, end] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {0, 10}, {10, 37}, {37, 37}, {56, 57}, {0, 57}, {4, 6}}) {
    SCOPED_TRACE(std::to_string(begin) + ".." + std::to_string(end));
    const auto block = std::get<csr_matrix<T>>(g.fetch(*s, begin, end));
    const auto expected = row_block(m, begin, end);
    EXPECT_EQ(block.rows, end - begin);
    EXPECT_EQ(block.cols, m.cols);
    EXPECT_EQ(block.row_offsets, expected.row_offsets);
    EXPECT_EQ(block.col_indices, expected.col_indices);
    EXPECT_EQ(block.values, expected.values);
  }
  try {
    (void)g.fetch(*s, 40, 58);
    ADD_FAILURE() << "rows past the end were fetched";
  } catch (const error& e) {
    EXPECT_EQ(e.kind(), error_kind::bad_input);
  }
}

TEST(GpuBackend, DescribesItself) {
  SPGEMM_REQUIRE_GPU();
  backend& g = gpu();
  EXPECT_EQ(g.name(), "cuda:0");
  EXPECT_TRUE(g.is_gpu());
  EXPECT_NE(g.description().find("GiB"), std::string::npos);
  const backend_memory m = g.memory();
  EXPECT_GT(m.total_bytes, 0u);
  EXPECT_LE(m.free_bytes, m.total_bytes);
}

// The planner reads how far A's entries lie off the diagonal (measured once
// per stored matrix on the device) and whether B fits the device's L2 cache
// (planner/job_rules.hpp): uniformly random rows of moderate products go to
// the hash method where B is larger than the cache (er:1000000:16, 192 MB
// of columns and values), to RMerge where it fits, as rows in a narrow band
// do; the products exact.
TEST(GpuBackend, PlannerReadsHowFarRowsLieOffTheDiagonal) {
  SPGEMM_REQUIRE_GPU();
  backend& g = gpu();
  const auto method_of = [&](const csr_matrix<double>& a) {
    const auto sa = g.store(a);
    return g.estimate_multiply(*sa, *sa, {}).method;
  };
  const std::string beyond_cache = method_of(generate("er:1000000:16"));
  EXPECT_EQ(beyond_cache.rfind("auto: hash", 0), 0u) << beyond_cache;
  EXPECT_NE(beyond_cache.find("0.33 of the matrix off the diagonal, 256 products a row expected, B beyond the L2"),
            std::string::npos)
      << beyond_cache;
  const auto scattered = testing::with_random_values(generate("er:20000:8"), 5);
  const std::string random_rows = method_of(scattered);
  EXPECT_EQ(random_rows.rfind("auto: rmerge", 0), 0u) << random_rows;
  expect_product(scattered, scattered, algorithm::automatic);
  expect_product(scattered, scattered, algorithm::hash);
  const auto banded = testing::with_random_values(generate("band:20000:40:8"), 6);
  const std::string band_rows = method_of(banded);
  EXPECT_EQ(band_rows.rfind("auto: rmerge", 0), 0u) << band_rows;
  expect_product(banded, banded, algorithm::automatic);
}

TEST(GpuBackend, FreesWhatItStored) {
  SPGEMM_REQUIRE_GPU();
  backend& g = gpu();
  const std::size_t before = g.memory().in_use_bytes;
  {
    const auto a = testing::random_csr<double>(100, 100, 9, 71);
    const auto sa = g.store(a);
    EXPECT_EQ(g.memory().in_use_bytes, before + a.bytes());
    const auto sc = g.multiply(*sa, *sa, {});
    EXPECT_GT(g.memory().in_use_bytes, before + a.bytes());
  }
  EXPECT_EQ(g.memory().in_use_bytes, before);
}

TEST(GpuBackend, SamplesRowOffsetsAsTheHostArraysHoldThem) {
  SPGEMM_REQUIRE_GPU();
  backend& g = gpu();
  for (const std::int64_t rows : {0, 1, 7, 1000}) {
    const auto a = testing::random_csr<double>(rows, 50, 6, 91 + static_cast<std::uint64_t>(rows));
    const auto sa = g.store(a);
    for (const std::int64_t stride : {std::int64_t{1}, std::int64_t{3}, rows, rows + 5}) {
      if (stride < 1) continue;
      SCOPED_TRACE(std::to_string(rows) + " rows, every " + std::to_string(stride));
      EXPECT_EQ(g.sample_row_offsets(*sa, stride), sampled_row_offsets(a.row_offsets, stride));
    }
    EXPECT_THROW(g.sample_row_offsets(*sa, 0), error);
  }
}

TEST(GpuBackend, MixedValueTypes) {
  SPGEMM_REQUIRE_GPU();
  const auto a = testing::random_csr<double>(70, 60, 9, 81);
  const auto b = testing::random_csr<float>(60, 50, 9, 82);
  backend& g = gpu();
  const auto sa = g.store(a);
  const auto sb = g.store(b);
  // Default: the wider type.
  const auto c = std::get<csr_matrix<double>>(g.fetch(*g.multiply(*sa, *sb, {})));
  const auto bd = convert_values<double>(b);
  const auto ref = cpu_multiply(a, bd);
  EXPECT_EQ(c.col_indices, ref.col_indices);
  EXPECT_LE(scaled_max_error(c, ref, a, bd), 1e-12);
  // Asked for single precision.
  multiply_options options;
  options.output_type = value_type::f32;
  const auto cf = std::get<csr_matrix<float>>(g.fetch(*g.multiply(*sa, *sb, options)));
  const auto af = convert_values<float>(a);
  EXPECT_LE(scaled_max_error(cf, cpu_multiply(af, b), af, b), 1e-5);
}

TEST(GpuBackend, RejectsWhatItCannotRun) {
  SPGEMM_REQUIRE_GPU();
  backend& g = gpu();
  const auto a = testing::random_csr<double>(10, 10, 3, 91);
  const auto sa = g.store(a);
  const auto expect_bad_input = [&](const multiply_options& options, const std::string& what) {
    SCOPED_TRACE(what);
    try {
      (void)g.multiply(*sa, *sa, options);
      ADD_FAILURE() << "accepted";
    } catch (const error& e) {
      EXPECT_EQ(e.kind(), error_kind::bad_input) << e.what();
    }
  };
  multiply_options gustavson;
  gustavson.algo = algorithm::gustavson;
  expect_bad_input(gustavson, "gustavson");
  multiply_options bad_w;
  bad_w.tuning.rmerge = {3, 1};
  expect_bad_input(bad_w, "W = 3");
  multiply_options bad_r;
  bad_r.tuning.rmerge = {16, 3};
  expect_bad_input(bad_r, "R = 3");
  const auto b = testing::random_csr<double>(11, 10, 3, 92);
  const auto sb = g.store(b);
  EXPECT_THROW((void)g.multiply(*sa, *sb, {}), error);
}

TEST(GpuBackend, HonoursCancellation) {
  SPGEMM_REQUIRE_GPU();
  backend& g = gpu();
  const std::size_t before = g.memory().in_use_bytes;
  {
    const auto a = testing::random_csr<double>(100, 100, 9, 95);
    const auto sa = g.store(a);
    cancel_token cancel;
    cancel.cancel();
    try {
      (void)g.multiply(*sa, *sa, {}, cancel);
      ADD_FAILURE() << "a cancelled job ran";
    } catch (const error& e) {
      EXPECT_EQ(e.kind(), error_kind::cancelled);
    }
  }
  EXPECT_EQ(g.memory().in_use_bytes, before);
}

TEST(GpuBackend, ConcurrentCallsOnOwnStreams) {
  SPGEMM_REQUIRE_GPU();
  backend& g = gpu();
  constexpr int threads = 4;
  std::vector<csr_matrix<double>> inputs;
  std::vector<csr_matrix<double>> expected;
  for (int t = 0; t < threads; ++t) {
    inputs.push_back(testing::random_csr<double>(400, 400, 20 + 40 * t, 500 + static_cast<std::uint64_t>(t)));
    expected.push_back(cpu_multiply(inputs.back(), inputs.back()));
  }
  std::vector<std::thread> pool;
  std::vector<int> mismatches(threads, 0);
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int round = 0; round < 5; ++round) {
        const auto s = g.store(inputs[t]);
        const auto c = std::get<csr_matrix<double>>(g.fetch(*g.multiply(*s, *s, {})));
        const auto ct = std::get<csr_matrix<double>>(g.fetch(*g.transpose(*s)));
        if (c.col_indices != expected[t].col_indices ||
            scaled_max_error(c, expected[t], inputs[t], inputs[t]) > 1e-12 ||
            ct.col_indices != cpu_transpose(inputs[t]).col_indices) {
          ++mismatches[t];
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  for (int t = 0; t < threads; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

// Every matrix of the shared folder: A * A (A * A^T where A is not square).
class GpuSharedMatrices : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { SPGEMM_REQUIRE_GPU(); }
};

TEST_P(GpuSharedMatrices, SquareMatchesTheCpu) {
  const auto a = testing::with_random_values(read_matrix_market(GetParam()), 42);
  const auto b = a.rows == a.cols ? a : cpu_transpose(a);
  expect_product(a, b);
}

std::string file_test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param.substr(info.param.find_last_of('/') + 1);
  name = name.substr(0, name.find('.'));
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name + "_" + std::to_string(info.index);
}

INSTANTIATE_TEST_SUITE_P(Files, GpuSharedMatrices, ::testing::ValuesIn(testing::shared_matrix_files()),
                         file_test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GpuSharedMatrices);

}  // namespace
}  // namespace spgemm
