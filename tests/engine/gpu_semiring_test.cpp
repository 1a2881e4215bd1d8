// Semirings and masked products on the GPU against the CPU reference
// (cpu_multiply over the semiring, cpu_masked_multiply): the methods that
// take semirings (auto, hash, esc) and masks (auto, esc, dot), every bin of
// the hash method (copy rows, warp and block tables, segment rows, dense
// rows) and ESC's long rows by bands, the job within its estimate, and the
// methods that refuse. Values are compared exactly: every method sums an
// entry's products in the order of A's entries, as the reference does.
// Skips where no CUDA device is visible.
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gpu_test_support.hpp"
#include "spgemm/backend.hpp"
#include "spgemm/errors.hpp"
#include "spgemm/generate.hpp"
#include "spgemm/reference.hpp"
#include "spgemm/semiring.hpp"
#include "test_matrices.hpp"

namespace spgemm {
namespace {

using testing::gpu;

const char* const semirings[] = {"plus_times", "min_plus", "max_plus", "max_min",  "min_max", "lor_land",
                                 "plus_pair",  "any_pair", "plus_min", "min_first", "max_second"};

template <typename T>
void expect_equal(const csr_matrix<T>& c, const csr_matrix<T>& ref) {
  ASSERT_EQ(c.rows, ref.rows);
  ASSERT_EQ(c.cols, ref.cols);
  ASSERT_EQ(c.row_offsets, ref.row_offsets);
  ASSERT_EQ(c.col_indices, ref.col_indices);
  for (std::size_t k = 0; k < c.values.size(); ++k) ASSERT_EQ(c.values[k], ref.values[k]) << "entry " << k;
}

// A mask of every other entry of the product `full` and a few entries
// outside it per row, with zeros among its values.
template <typename T>
csr_matrix<T> mask_for(const csr_matrix<T>& full, std::uint64_t seed) {
  const csr_matrix<T> extra = testing::random_csr<T>(full.rows, full.cols, 3, seed);
  csr_matrix<T> m;
  m.rows = full.rows;
  m.cols = full.cols;
  for (std::int64_t r = 0; r < full.rows; ++r) {
    std::set<index_t> cols(extra.col_indices.begin() + extra.row_offsets[r],
                           extra.col_indices.begin() + extra.row_offsets[r + 1]);
    for (offset_t k = full.row_offsets[r]; k < full.row_offsets[r + 1]; k += 2) cols.insert(full.col_indices[k]);
    m.col_indices.insert(m.col_indices.end(), cols.begin(), cols.end());
    m.row_offsets.push_back(m.nnz());
  }
  m.values.resize(m.col_indices.size());
  return testing::with_small_integers(std::move(m), seed + 1);
}

// The GPU product within its estimate, masked where `mask` is given.
template <typename T>
csr_matrix<T> on_gpu(const csr_matrix<T>& a, const csr_matrix<T>& b, const multiply_options& options,
                     const csr_matrix<T>* mask = nullptr, const mask_options& how = {}) {
  backend& g = gpu();
  const auto sa = g.store(a);
  const auto sb = g.store(b);
  std::shared_ptr<stored_matrix> sm;
  memory_estimate e;
  if (mask != nullptr) {
    sm = g.store(*mask);
    e = g.estimate_masked_multiply(*sa, *sb, *sm, how, options);
  } else {
    e = g.estimate_multiply(*sa, *sb, options);
  }
  std::size_t peak = 0;
  const auto sc = mask != nullptr ? g.masked_multiply(*sa, *sb, *sm, how, options, e.total(), {}, &peak)
                                  : g.multiply(*sa, *sb, options, e.total(), {}, &peak);
  EXPECT_LE(peak, e.total()) << e.method;
  return std::get<csr_matrix<T>>(g.fetch(*sc));
}

// Operands that reach every kind of row of the hash method.
template <typename T>
std::vector<std::pair<std::string, std::pair<csr_matrix<T>, csr_matrix<T>>>> operand_cases() {
  std::vector<std::pair<std::string, std::pair<csr_matrix<T>, csr_matrix<T>>>> cases;
  const auto add = [&](std::string what, csr_matrix<T> a, csr_matrix<T> b) {
    cases.push_back({std::move(what), {testing::with_small_integers(std::move(a), 1), testing::with_small_integers(std::move(b), 2)}});
  };
  add("random 300x200 * 200x250", testing::random_csr<T>(300, 200, 12, 3), testing::random_csr<T>(200, 250, 12, 4));
  add("rows of one entry (copied rows)", testing::with_lengths<T>(500, 400, {1, 1, 0, 2}, 5),
      testing::random_csr<T>(400, 300, 20, 6));
  const auto graph = convert_values<T>(generate("rmat:12:16"));  // hub rows: segment and dense rows
  add("rmat:12:16 squared", graph, graph);
  add("a dense row of A, B of 40000 columns", testing::with_lengths<T>(20, 3000, {3000, 2, 40}, 7),
      testing::random_csr<T>(3000, 40000, 30, 8));
  const auto grid = convert_values<T>(generate("poisson3d7:12"));
  add("poisson3d7:12 squared", grid, grid);
  return cases;
}

template <typename T>
class GpuSemirings : public ::testing::Test {
 protected:
  void SetUp() override { SPGEMM_REQUIRE_GPU(); }
};
using value_types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(GpuSemirings, value_types);

TYPED_TEST(GpuSemirings, EveryMethodThatTakesOneMatchesTheReference) {
  using T = TypeParam;
  for (const auto& [what, ab] : operand_cases<T>()) {
    const auto& [a, b] = ab;
    for (const char* name : semirings) {
      const semiring ring = parse_semiring(name);
      const csr_matrix<T> ref = cpu_multiply(a, b, ring);
      for (const algorithm algo : {algorithm::automatic, algorithm::hash, algorithm::esc}) {
        SCOPED_TRACE(what + ", " + name + ", " + std::string(to_string(algo)));
        multiply_options options;
        options.algo = algo;
        options.semiring = ring;
        expect_equal(on_gpu(a, b, options), ref);
      }
    }
  }
}

TYPED_TEST(GpuSemirings, MaskedProductsMatchTheReference) {
  using T = TypeParam;
  for (const auto& [what, ab] : operand_cases<T>()) {
    const auto& [a, b] = ab;
    const csr_matrix<T> mask = mask_for(cpu_multiply(a, b), 9);
    for (const char* name : {"plus_times", "plus_pair", "any_pair", "lxor_pair", "min_plus", "lor_land"}) {
      multiply_options options;
      options.semiring = parse_semiring(name);
      for (const bool complement : {false, true}) {
        for (const bool structural : {true, false}) {
          const mask_options how{complement, structural};
          const csr_matrix<T> ref = cpu_masked_multiply(a, b, mask, how, options.semiring);
          for (const algorithm algo : cuda_masked_algorithms()) {
            if (algo == algorithm::dot && complement) continue;
            SCOPED_TRACE(what + ", " + name + (complement ? ", C<!M>" : ", C<M>") +
                         (structural ? " structural, " : " value, ") + std::string(to_string(algo)));
            options.algo = algo;
            expect_equal(on_gpu(a, b, options, &mask, how), ref);
          }
        }
      }
    }
  }
}

TYPED_TEST(GpuSemirings, EscLongRowsByBandsWithAMask) {
  using T = TypeParam;
  // Slices of 64 products: A's long rows run by bands and chunks, and a mask
  // drops some of every chunk (or all of some).
  const auto a = testing::with_small_integers(testing::with_lengths<T>(40, 500, {300, 5, 0, 120}, 11), 12);
  const auto b = testing::with_small_integers(testing::random_csr<T>(500, 700, 15, 13), 14);
  const auto mask = mask_for(cpu_multiply(a, b), 15);
  multiply_options options;
  options.algo = algorithm::esc;
  options.tuning.esc_slice_products = 64;
  for (const char* name : {"plus_times", "max_min"}) {
    options.semiring = parse_semiring(name);
    expect_equal(on_gpu(a, b, options), cpu_multiply(a, b, options.semiring));
    for (const bool complement : {false, true}) {
      SCOPED_TRACE(std::string(name) + (complement ? " C<!M>" : " C<M>"));
      const mask_options how{complement, true};
      expect_equal(on_gpu(a, b, options, &mask, how), cpu_masked_multiply(a, b, mask, how, options.semiring));
    }
  }
}

TEST(GpuMaskedProducts, CountTheTrianglesOfAGraph) {
  SPGEMM_REQUIRE_GPU();
  // L<L> = L L over plus_pair on the strictly lower triangle: the sum of C
  // is the number of triangles.
  const csr_matrix<double> g = generate("rmat:12:8");
  csr_matrix<double> l;
  l.rows = l.cols = g.rows;
  for (std::int64_t r = 0; r < g.rows; ++r) {
    for (offset_t k = g.row_offsets[r]; k < g.row_offsets[r + 1]; ++k) {
      if (g.col_indices[k] < r) {
        l.col_indices.push_back(g.col_indices[k]);
        l.values.push_back(1.0);
      }
    }
    l.row_offsets.push_back(l.nnz());
  }
  multiply_options options;
  options.semiring = parse_semiring("plus_pair");
  const auto c = on_gpu(l, l, options, &l);
  const auto ref = cpu_masked_multiply(l, l, l, {}, options.semiring);
  expect_equal(c, ref);
  double triangles = 0;
  for (const double v : c.values) triangles += v;
  EXPECT_GT(triangles, 0);
}

// The entries of m on one side of the diagonal (and on it).
template <typename T>
csr_matrix<T> triangle(const csr_matrix<T>& m, bool lower) {
  csr_matrix<T> t;
  t.rows = m.rows;
  t.cols = m.cols;
  for (std::int64_t r = 0; r < m.rows; ++r) {
    for (offset_t k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k) {
      if (lower ? m.col_indices[k] <= r : m.col_indices[k] >= r) {
        t.col_indices.push_back(m.col_indices[k]);
        t.values.push_back(m.values[k]);
      }
    }
    t.row_offsets.push_back(t.nnz());
  }
  return t;
}

TEST(GpuMaskedProducts, TriangularRightFactorsMatchTheReference) {
  SPGEMM_REQUIRE_GPU();
  // A B with B lower (upper) triangular: the dot method searches only A's
  // entries at or after (before) the mask entry's column.
  const auto a = testing::with_small_integers(testing::random_csr<double>(400, 300, 14, 31), 32);
  const auto square = testing::with_small_integers(testing::random_csr<double>(300, 300, 20, 33), 34);
  for (const bool lower : {true, false}) {
    const csr_matrix<double> b = triangle(square, lower);
    const csr_matrix<double> mask = mask_for(cpu_multiply(a, b), 35);
    for (const char* name : {"plus_times", "plus_pair"}) {
      for (const algorithm algo : {algorithm::dot, algorithm::automatic}) {
        SCOPED_TRACE(std::string(lower ? "lower B, " : "upper B, ") + name + ", " + std::string(to_string(algo)));
        multiply_options options;
        options.algo = algo;
        options.semiring = parse_semiring(name);
        expect_equal(on_gpu(a, b, options, &mask), cpu_masked_multiply(a, b, mask, {}, options.semiring));
      }
    }
  }
}

TEST(GpuMaskedProducts, MethodsThatCannotRunAProductSaySo) {
  SPGEMM_REQUIRE_GPU();
  backend& g = gpu();
  const auto a = g.store(testing::random_csr<double>(50, 40, 5, 21));
  const auto b = g.store(testing::random_csr<double>(40, 60, 5, 22));
  const auto m = g.store(testing::random_csr<double>(50, 60, 5, 23));
  multiply_options options;
  options.semiring = parse_semiring("min_plus");
  for (const algorithm algo : {algorithm::rmerge, algorithm::block}) {
    options.algo = algo;
    EXPECT_THROW(g.estimate_multiply(*a, *b, options), error) << to_string(algo);
  }
  options = {};
  options.algo = algorithm::dot;
  EXPECT_THROW(g.estimate_multiply(*a, *b, options), error);  // masked products only
  EXPECT_THROW(g.estimate_masked_multiply(*a, *b, *m, {true, true}, options), error);  // C<!M>
  options.algo = algorithm::hash;
  EXPECT_THROW(g.estimate_masked_multiply(*a, *b, *m, {}, options), error);  // no masks
  options.algo = algorithm::automatic;
  const auto wrong = g.store(testing::random_csr<double>(50, 59, 5, 24));
  EXPECT_THROW(g.estimate_masked_multiply(*a, *b, *wrong, {}, options), error);
}

}  // namespace
}  // namespace spgemm
