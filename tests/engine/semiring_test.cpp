// Semirings and masked products on the CPU: the reference (cpu_multiply,
// cpu_masked_multiply) against an independent oracle written out per
// semiring, the operators' values, names, and the CPU backend's masked
// products within their estimates. python-graphblas checks the same
// products through the service (client/python/tests/test_semirings.py).
#include <cmath>
#include <functional>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "semiring/semiring_ops.hpp"
#include "spgemm/backend.hpp"
#include "spgemm/errors.hpp"
#include "spgemm/generate.hpp"
#include "spgemm/reference.hpp"
#include "spgemm/semiring.hpp"
#include "spgemm/validate.hpp"
#include "test_matrices.hpp"

namespace spgemm {
namespace {

// A semiring written out by hand, independently of semiring_ops.hpp.
template <typename T>
struct oracle_ring {
  std::string name;
  std::function<T(T, T)> add;
  std::function<T(T, T)> mul;
};

template <typename T>
std::vector<oracle_ring<T>> oracle_rings() {
  const auto b = [](bool v) { return v ? T(1) : T(0); };
  return {
      {"plus_times", [](T x, T y) { return x + y; }, [](T x, T y) { return x * y; }},
      {"min_plus", [](T x, T y) { return std::fmin(x, y); }, [](T x, T y) { return x + y; }},
      {"max_plus", [](T x, T y) { return std::fmax(x, y); }, [](T x, T y) { return x + y; }},
      {"max_min", [](T x, T y) { return std::fmax(x, y); }, [](T x, T y) { return std::fmin(x, y); }},
      {"min_max", [](T x, T y) { return std::fmin(x, y); }, [](T x, T y) { return std::fmax(x, y); }},
      {"lor_land", [b](T x, T y) { return b(x != 0 || y != 0); }, [b](T x, T y) { return b(x != 0 && y != 0); }},
      {"plus_pair", [](T x, T y) { return x + y; }, [](T, T) { return T(1); }},
      {"any_pair", [](T, T y) { return y; }, [](T, T) { return T(1); }},
      {"plus_min", [](T x, T y) { return x + y; }, [](T x, T y) { return std::fmin(x, y); }},
      {"max_times", [](T x, T y) { return std::fmax(x, y); }, [](T x, T y) { return x * y; }},
      {"min_first", [](T x, T y) { return std::fmin(x, y); }, [](T x, T) { return x; }},
      {"any_second", [](T, T y) { return y; }, [](T, T y) { return y; }},
      {"plus_minus", [](T x, T y) { return x + y; }, [](T x, T y) { return x - y; }},
      {"land_gt", [b](T x, T y) { return b(x != 0 && y != 0); }, [b](T x, T y) { return b(x > y); }},
  };
}

// C<M> (allowed: M's entry, or its nonzero value), C<!M>, or no mask.
enum class oracle_mask { none, allow, forbid };

// One ordered map per row; a product outside the mask is skipped.
template <typename T>
csr_matrix<T> oracle_multiply(const csr_matrix<T>& a, const csr_matrix<T>& b, const oracle_ring<T>& ring,
                              oracle_mask mode = oracle_mask::none, const csr_matrix<T>* mask = nullptr,
                              bool structural = true) {
  csr_matrix<T> c;
  c.rows = a.rows;
  c.cols = b.cols;
  for (std::int64_t r = 0; r < a.rows; ++r) {
    std::map<index_t, bool> in_mask;
    if (mask != nullptr) {
      for (offset_t k = mask->row_offsets[r]; k < mask->row_offsets[r + 1]; ++k) {
        if (structural || mask->values[k] != 0) in_mask[mask->col_indices[k]] = true;
      }
    }
    std::map<index_t, T> row;
    for (offset_t k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k) {
      const index_t j = a.col_indices[k];
      for (offset_t l = b.row_offsets[j]; l < b.row_offsets[j + 1]; ++l) {
        const index_t col = b.col_indices[l];
        const bool masked = in_mask.count(col) > 0;
        if ((mode == oracle_mask::allow && !masked) || (mode == oracle_mask::forbid && masked)) continue;
        const T p = ring.mul(a.values[k], b.values[l]);
        auto it = row.find(col);
        if (it == row.end()) {
          row.emplace(col, p);
        } else {
          it->second = ring.add(it->second, p);
        }
      }
    }
    for (const auto& [col, v] : row) {
      c.col_indices.push_back(col);
      c.values.push_back(v);
    }
    c.row_offsets.push_back(c.nnz());
  }
  return c;
}

template <typename T>
void expect_same(const csr_matrix<T>& c, const csr_matrix<T>& ref) {
  EXPECT_EQ(find_csr_problem(c), "");
  ASSERT_EQ(c.rows, ref.rows);
  ASSERT_EQ(c.cols, ref.cols);
  ASSERT_EQ(c.row_offsets, ref.row_offsets);
  ASSERT_EQ(c.col_indices, ref.col_indices);
  for (std::size_t k = 0; k < c.values.size(); ++k) {
    // Same order of operations: equal, bit for bit but for the sign of zero.
    ASSERT_EQ(c.values[k], ref.values[k]) << "entry " << k;
  }
}

template <typename T>
class Semirings : public ::testing::Test {};
using value_types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Semirings, value_types);

TYPED_TEST(Semirings, MatchTheOracleOnRandomAndStructuredShapes) {
  using T = TypeParam;
  struct operands {
    std::string what;
    csr_matrix<T> a, b;
  };
  std::vector<operands> cases;
  const std::int64_t shapes[][4] = {{0, 0, 0, 0}, {1, 1, 1, 1}, {3, 0, 0, 5}, {37, 50, 50, 11}, {200, 30, 30, 300}};
  std::uint64_t seed = 7;
  for (const auto& s : shapes) {
    cases.push_back({"random " + std::to_string(s[0]) + "x" + std::to_string(s[1]) + " * " + std::to_string(s[2]) +
                         "x" + std::to_string(s[3]),
                     testing::random_csr<T>(s[0], s[1], 6, seed), testing::random_csr<T>(s[2], s[3], 9, seed + 1)});
    seed += 2;
  }
  const auto grid = convert_values<T>(generate("poisson2d5:9"));
  cases.push_back({"poisson2d5:9 squared, small integers", testing::with_small_integers(grid, 3), testing::with_small_integers(grid, 4)});
  const auto graph = testing::with_random_values(convert_values<T>(generate("rmat:8:8")), 5);
  cases.push_back({"rmat:8:8 squared", graph, graph});
  for (const auto& c : cases) {
    for (const oracle_ring<T>& ring : oracle_rings<T>()) {
      SCOPED_TRACE(c.what + ", " + ring.name);
      expect_same(cpu_multiply(c.a, c.b, parse_semiring(ring.name), 3), oracle_multiply(c.a, c.b, ring));
    }
  }
}

TYPED_TEST(Semirings, KeepEntriesWhoseSumIsTheIdentity) {
  using T = TypeParam;
  // Row 0 of A times B: products 1 * 1 and 1 * -1 cancel under plus_times,
  // and min_plus of +inf-free values never gives +inf; the entry stays.
  csr_matrix<T> a;
  a.rows = 1;
  a.cols = 2;
  a.row_offsets = {0, 2};
  a.col_indices = {0, 1};
  a.values = {T(1), T(1)};
  csr_matrix<T> b;
  b.rows = 2;
  b.cols = 1;
  b.row_offsets = {0, 1, 2};
  b.col_indices = {0, 0};
  b.values = {T(1), T(-1)};
  const auto c = cpu_multiply(a, b, parse_semiring("plus_times"));
  ASSERT_EQ(c.nnz(), 1);
  EXPECT_EQ(c.values[0], T(0));
  b.values = {T(0), T(0)};
  const auto l = cpu_multiply(a, b, parse_semiring("lor_land"));
  ASSERT_EQ(l.nnz(), 1);  // false, but an entry
  EXPECT_EQ(l.values[0], T(0));
}

TYPED_TEST(Semirings, MaskedProductsMatchTheOracle) {
  using T = TypeParam;
  const auto a = testing::with_small_integers(testing::random_csr<T>(150, 80, 7, 11), 12);
  const auto b = testing::with_small_integers(testing::random_csr<T>(80, 120, 9, 13), 14);
  // A mask with empty rows, rows denser than the product's and zeros among its values.
  auto mask = testing::with_small_integers(
      testing::random_csr_rows<T>(150, 120, 15,
                                  [](std::int64_t r, std::mt19937_64& rng) -> std::int64_t {
                                    return r % 5 == 0 ? 0 : r % 7 == 0 ? 120 : static_cast<std::int64_t>(rng() % 30);
                                  }),
      16);
  for (const char* name : {"plus_times", "min_plus", "plus_pair", "lor_land", "any_pair", "max_min"}) {
    const oracle_ring<T> ring = [&] {
      for (const auto& r : oracle_rings<T>())
        if (r.name == name) return r;
      throw std::logic_error(name);
    }();
    for (const bool complement : {false, true}) {
      for (const bool structural : {true, false}) {
        SCOPED_TRACE(std::string(name) + (complement ? " C<!M>" : " C<M>") + (structural ? " structural" : " value"));
        const mask_options how{complement, structural};
        const auto c = cpu_masked_multiply(a, b, mask, how, parse_semiring(name), 3);
        expect_same(c, oracle_multiply(a, b, ring, complement ? oracle_mask::forbid : oracle_mask::allow, &mask,
                                       structural));
      }
    }
  }
  // A mask of another value type reads the same.
  const auto c = cpu_masked_multiply(a, b, convert_values<float>(mask), {false, false}, {}, 2);
  expect_same(c, cpu_masked_multiply(a, b, mask, {false, false}, {}, 2));
}

TEST(Semirings, MaskedProductsOfEmptyAndFullMasks) {
  const auto a = testing::random_csr<double>(40, 30, 6, 21);
  const auto b = testing::random_csr<double>(30, 50, 6, 22);
  const auto empty = testing::empty_csr<double>(40, 50);
  EXPECT_EQ(cpu_masked_multiply(a, b, empty, {}).nnz(), 0);
  const auto everything = cpu_multiply(a, b);
  expect_same(cpu_masked_multiply(a, b, empty, {true, true}), everything);
  expect_same(cpu_masked_multiply(a, b, everything, {}), everything);
  EXPECT_EQ(cpu_masked_multiply(a, b, everything, {true, true}).nnz(), 0);
  EXPECT_THROW(cpu_masked_multiply(a, b, testing::empty_csr<double>(40, 49), {}), error);
}

TEST(Semirings, OperatorsGiveGraphBlasValues) {
  using ops::apply;
  EXPECT_EQ(apply(binary_op::first, 3.0, 5.0), 3.0);
  EXPECT_EQ(apply(binary_op::second, 3.0, 5.0), 5.0);
  EXPECT_EQ(apply(binary_op::pair, 3.0, 5.0), 1.0);
  EXPECT_EQ(apply(binary_op::rminus, 3.0, 5.0), 2.0);
  EXPECT_EQ(apply(binary_op::rdiv, 2.0, 5.0), 2.5);
  EXPECT_EQ(apply(binary_op::min, 3.0, static_cast<double>(NAN)), 3.0);  // fmin: NaN is omitted
  EXPECT_EQ(apply(binary_op::pow, 2.0, 10.0), 1024.0);
  EXPECT_EQ(apply(binary_op::land, 0.5, -2.0), 1.0);
  EXPECT_EQ(apply(binary_op::lor, 0.0, 0.0), 0.0);
  EXPECT_EQ(apply(binary_op::lxor, 1.0, 2.0), 0.0);
  EXPECT_EQ(apply(binary_op::ge, 2.0f, 2.0f), 1.0f);
  EXPECT_EQ(apply(monoid::any, 3.0, 5.0), 5.0);
  EXPECT_EQ(ops::identity<double>(monoid::min), INFINITY);
  EXPECT_EQ(ops::identity<float>(monoid::max), -INFINITY);
  EXPECT_EQ(ops::identity<double>(monoid::times), 1.0);
  for (const monoid m : {monoid::plus, monoid::times, monoid::min, monoid::max, monoid::any}) {
    for (const double x : {-2.5, 0.0, 7.0}) EXPECT_EQ(apply(m, ops::identity<double>(m), x), x) << to_string(m);
  }
}

TEST(Semirings, NamesRoundTripAndBadOnesAreRefused) {
  for (const std::string_view m : monoid_names()) {
    for (const std::string_view op : {"times", "pair", "land", "min", "second"}) {
      const std::string name = std::string(m) + "_" + std::string(op);
      const bool logical = m == "lor" || m == "land" || m == "lxor";
      if (logical && op != "pair" && op != "land") {
        EXPECT_THROW(parse_semiring(name), error) << name;
        continue;
      }
      EXPECT_EQ(to_string(parse_semiring(name)), name);
    }
  }
  EXPECT_TRUE(parse_semiring("").is_plus_times());
  EXPECT_THROW(parse_semiring("minplus"), error);
  EXPECT_THROW(parse_semiring("min_foo"), error);
  EXPECT_THROW(parse_semiring("foo_plus"), error);
  try {
    parse_semiring("lor_plus");
    ADD_FAILURE();
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("1 or 0"), std::string::npos) << e.what();
  }
}

TEST(Semirings, CpuBackendRunsMaskedProductsWithinTheirEstimates) {
  auto cpu = make_cpu_backend(2);
  const auto a = testing::random_csr<double>(300, 200, 12, 31);
  const auto b = testing::random_csr<double>(200, 250, 12, 32);
  const auto m = testing::random_csr<float>(300, 250, 4, 33);
  const auto sa = cpu->store(a);
  const auto sb = cpu->store(b);
  const auto sm = cpu->store(m);
  multiply_options options;
  options.semiring = parse_semiring("min_plus");
  for (const bool complement : {false, true}) {
    const mask_options how{complement, true};
    const auto estimate = cpu->estimate_masked_multiply(*sa, *sb, *sm, how, options);
    std::size_t peak = 0;
    const auto sc = cpu->masked_multiply(*sa, *sb, *sm, how, options, estimate.total(), {}, &peak);
    EXPECT_LE(peak, estimate.total());
    const auto c = std::get<csr_matrix<double>>(cpu->fetch(*sc));
    expect_same(c, cpu_masked_multiply(a, b, m, how, options.semiring));
    const std::size_t within_mask = matrix_info{300, 250, m.nnz(), value_type::f64}.bytes();
    if (!complement) {
      EXPECT_LE(estimate.output_bytes, within_mask);
    }
  }
  // The mask's shape is checked.
  const auto wrong = cpu->store(testing::empty_csr<double>(300, 249));
  EXPECT_THROW(cpu->estimate_masked_multiply(*sa, *sb, *wrong, {}, options), error);
  options.semiring = {monoid::lor, binary_op::plus};
  EXPECT_THROW(cpu->estimate_multiply(*sa, *sb, options), error);
}

}  // namespace
}  // namespace spgemm
