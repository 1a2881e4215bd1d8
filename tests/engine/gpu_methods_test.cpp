// Every GPU method by name (hash, auto, rmerge) and the GPU transpose against the CPU reference
// (spgemm::cpu_multiply): identical structure, values within 1e-12 (double)
// or 1e-5 (float) of |A||B| per entry, bit-identical across runs, and the
// job within its memory estimate. Skips where no CUDA device is visible.
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "spgemm/backend.hpp"
#include "spgemm/errors.hpp"
#include "spgemm/generate.hpp"
#include "spgemm/io.hpp"
#include "spgemm/reference.hpp"
#include "test_matrices.hpp"

namespace spgemm {
namespace {

backend& gpu() {
  static const std::shared_ptr<backend> instance = make_cuda_backend(0);
  return *instance;
}

template <typename T>
csr_matrix<T> product_on_gpu(const csr_matrix<T>& a, const csr_matrix<T>& b, algorithm algo) {
  backend& g = gpu();
  const auto sa = g.store(a);
  const auto sb = g.store(b);
  multiply_options options;
  options.algo = algo;
  const memory_estimate estimate = g.estimate_multiply(*sa, *sb, options);
  const std::size_t before = g.memory().in_use_bytes;
  g.reset_peak();
  const auto sc = g.multiply(*sa, *sb, options);
  const std::size_t peak = g.memory().peak_bytes;
  EXPECT_LE(peak - before, estimate.total()) << "the product allocated more than its estimate (" << estimate.method
                                             << ")";
  EXPECT_EQ(sc->info().rows, a.rows);
  EXPECT_EQ(sc->info().cols, b.cols);
  return std::get<csr_matrix<T>>(g.fetch(*sc));
}

template <typename T>
void expect_product(const csr_matrix<T>& a, const csr_matrix<T>& b, algorithm algo) {
  const csr_matrix<T> c = product_on_gpu(a, b, algo);
  const csr_matrix<T> ref = cpu_multiply(a, b);
  ASSERT_EQ(c.rows, ref.rows);
  ASSERT_EQ(c.cols, ref.cols);
  ASSERT_EQ(c.row_offsets, ref.row_offsets);
  ASSERT_EQ(c.col_indices, ref.col_indices);
  ASSERT_EQ(c.values.size(), ref.values.size());
  EXPECT_LE(scaled_max_error(c, ref, a, b), (std::is_same_v<T, float> ? 1e-5 : 1e-12));
}

// The GPU transpose equals the CPU transpose exactly (structure and values),
// within its (exact) memory estimate.
template <typename T>
void expect_transpose(const csr_matrix<T>& a) {
  backend& g = gpu();
  const auto sa = g.store(a);
  const memory_estimate estimate = g.estimate_transpose(*sa);
  const std::size_t before = g.memory().in_use_bytes;
  g.reset_peak();
  const auto st = g.transpose(*sa);
  EXPECT_LE(g.memory().peak_bytes - before, estimate.total());
  const auto t = std::get<csr_matrix<T>>(g.fetch(*st));
  const auto ref = cpu_transpose(a);
  ASSERT_EQ(t.rows, ref.rows);
  ASSERT_EQ(t.cols, ref.cols);
  ASSERT_EQ(t.row_offsets, ref.row_offsets);
  ASSERT_EQ(t.col_indices, ref.col_indices);
  ASSERT_EQ(t.values, ref.values);
}

// (algorithm name, double precision?)
using method_param = std::tuple<std::string, bool>;

class GpuMethod : public ::testing::TestWithParam<method_param> {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
  }
  algorithm algo() const { return parse_algorithm(std::get<0>(GetParam())); }
  bool f64() const { return std::get<1>(GetParam()); }

  // Runs `check` with float or double matrices as the parameter asks.
  template <typename F>
  void both(F&& check) {
    if (f64()) {
      check(double{});
    } else {
      check(float{});
    }
  }
};

TEST_P(GpuMethod, EmptyShapes) {
  both([&](auto tag) {
    using T = decltype(tag);
    expect_product(csr_matrix<T>{}, csr_matrix<T>{}, algo());
    expect_product(testing::empty_csr<T>(5, 0), testing::empty_csr<T>(0, 7), algo());
    expect_product(testing::empty_csr<T>(0, 5), testing::random_csr<T>(5, 3, 3, 4), algo());
    expect_product(testing::empty_csr<T>(4, 6), testing::random_csr<T>(6, 3, 3, 6), algo());
    expect_product(testing::random_csr<T>(4, 6, 3, 7), testing::empty_csr<T>(6, 3), algo());
  });
}

TEST_P(GpuMethod, OneByOne) {
  both([&](auto tag) {
    using T = decltype(tag);
    csr_matrix<T> a;
    a.rows = a.cols = 1;
    a.row_offsets = {0, 1};
    a.col_indices = {0};
    a.values = {T(0.75)};
    const csr_matrix<T> c = product_on_gpu(a, a, algo());
    ASSERT_EQ(c.values.size(), 1u);
    EXPECT_EQ(c.values[0], T(0.75) * T(0.75));
  });
}

TEST_P(GpuMethod, RectangularAndEmptyRows) {
  both([&](auto tag) {
    using T = decltype(tag);
    expect_product(testing::random_csr<T>(37, 50, 12, 11), testing::random_csr<T>(50, 11, 6, 12), algo());
    expect_product(testing::random_csr<T>(11, 50, 40, 13), testing::random_csr<T>(50, 37, 30, 14), algo());
    expect_product(testing::with_lengths<T>(200, 150, {0, 5, 0, 0, 17, 1}, 21), testing::with_lengths<T>(150, 180, {3, 0, 9, 0}, 22),
                   algo());
  });
}

// Rows in every bin: single entries (copy), warp tables, block tables, and
// dense rows beyond the largest shared table (a row of 4500 entries times
// rows of B of 40: 180000 products, up to 20000 distinct columns).
TEST_P(GpuMethod, EveryBin) {
  both([&](auto tag) {
    using T = decltype(tag);
    auto a = testing::random_csr_rows<T>(40, 5000, 31, [](std::int64_t r, std::mt19937_64& rng) {
      if (r == 3) return std::int64_t{4500};
      if (r % 7 == 1) return std::int64_t{1};
      return std::uniform_int_distribution<std::int64_t>(0, 400)(rng);
    });
    const auto b = testing::random_csr<T>(5000, 20000, 40, 32);
    expect_product(a, b, algo());
    const auto b_narrow = testing::random_csr<T>(5000, 300, 6, 33);
    expect_product(a, b_narrow, algo());
  });
}

TEST_P(GpuMethod, RowLengthBoundaries) {
  both([&](auto tag) {
    using T = decltype(tag);
    for (std::int64_t length : {1, 2, 31, 32, 33, 127, 128, 129, 511, 512, 513, 2047, 2049}) {
      SCOPED_TRACE(length);
      const auto a = testing::with_lengths<T>(24, 3000, {length, 1, 0, 3}, 100 + static_cast<std::uint64_t>(length));
      const auto b = testing::random_csr<T>(3000, 4000, 8, 200 + static_cast<std::uint64_t>(length));
      expect_product(a, b, algo());
    }
  });
}

// The hybrid plan's merge bins (auto on a matrix with one row longer than 128):
// rows of every merge class (2, 3-4, 5-8, 9-16, 17-32, 33-64, 65-128 entries)
// next to copy rows, table rows and the long row.
TEST_P(GpuMethod, MergeBins) {
  // The merge bins are off by default (planner::default_merge_max_bound): turn them on.
  setenv("SPGEMM_HYBRID_MERGE_MAX", "1024", 1);
  both([&](auto tag) {
    using T = decltype(tag);
    const auto a = testing::with_lengths<T>(300, 2000, {0, 1, 2, 3, 4, 5, 8, 9, 16, 17, 32, 33, 64, 65, 128, 129, 300, 7}, 61);
    const auto b = testing::random_csr<T>(2000, 3000, 6, 62);
    expect_product(a, b, algo());
    const auto b_wide = testing::random_csr<T>(2000, 50000, 30, 63);  // bounds above the merge limit too
    expect_product(a, b_wide, algo());
  });
  unsetenv("SPGEMM_HYBRID_MERGE_MAX");
}

TEST_P(GpuMethod, Generators) {
  both([&](auto tag) {
    using T = decltype(tag);
    for (const char* spec : {"poisson3d7:20", "poisson3d27:12", "poisson2d5:40", "elasticity3d:6", "rmat:10:8",
                             "rmat:12:16"}) {
      SCOPED_TRACE(spec);
      const auto a = convert_values<T>(testing::with_random_values(generate(spec), 7));
      expect_product(a, a, algo());
    }
  });
}

TEST_P(GpuMethod, Deterministic) {
  both([&](auto tag) {
    using T = decltype(tag);
    for (const char* spec : {"rmat:12:16", "poisson3d27:8"}) {
      const auto a = convert_values<T>(testing::with_random_values(generate(spec), 3));
      const auto first = product_on_gpu(a, a, algo());
      for (int run = 0; run < 3; ++run) {
        const auto again = product_on_gpu(a, a, algo());
        ASSERT_EQ(first.row_offsets, again.row_offsets);
        ASSERT_EQ(first.col_indices, again.col_indices);
        ASSERT_EQ(first.values.size(), again.values.size());
        EXPECT_EQ(std::memcmp(first.values.data(), again.values.data(), first.values.size() * sizeof(T)), 0);
      }
    }
  });
}

TEST_P(GpuMethod, SharedMatrices) {
  if (!f64()) GTEST_SKIP() << "double precision only";
  for (const std::string& file : testing::shared_matrix_files()) {
    SCOPED_TRACE(file);
    const auto a = testing::with_random_values(read_matrix_market(file), 42);
    const auto b = a.rows == a.cols ? a : cpu_transpose(a);
    expect_product(a, b, algo());
  }
}

TEST(GpuTranspose, EdgeCasesGeneratorsAndSharedMatrices) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU tests skipped";
  expect_transpose(testing::random_csr<float>(37, 50, 12, 11));
  expect_transpose(testing::with_lengths<double>(200, 150, {0, 5, 0, 0, 17, 1}, 21));
  expect_transpose(testing::empty_csr<double>(0, 4));
  expect_transpose(testing::empty_csr<float>(6, 0));
  expect_transpose(testing::random_csr<double>(300, 1000, 30, 64));
  for (const char* spec : {"poisson3d7:20", "elasticity3d:6", "rmat:12:16", "rmat:14:8"}) {
    SCOPED_TRACE(spec);
    expect_transpose(testing::with_random_values(generate(spec), 5));
    expect_transpose(convert_values<float>(testing::with_random_values(generate(spec), 6)));
  }
  // The shared matrices: in GpuMethod.SharedMatrices (hash_f64).
}

std::string param_name(const ::testing::TestParamInfo<method_param>& info) {
  return std::get<0>(info.param) + (std::get<1>(info.param) ? "_f64" : "_f32");
}

INSTANTIATE_TEST_SUITE_P(Methods, GpuMethod,
                         ::testing::Combine(::testing::Values(std::string("hash"), std::string("auto"), std::string("rmerge")),
                                            ::testing::Bool()),
                         param_name);

}  // namespace
}  // namespace spgemm
