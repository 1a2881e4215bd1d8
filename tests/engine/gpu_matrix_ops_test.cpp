// The matrix ops between products on the GPU (run_op) against the CPU's
// (cpu_run_op), every op on random, power-law, empty and 1 x 1 matrices of
// both value types (and of mixed types where two meet), each within its
// estimate. Equal exactly, but for the plus sums of a reduction of all
// entries (CUB's tree against the CPU's sequential order: rounding only).
// Skips where no CUDA device is visible.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gpu_test_support.hpp"
#include "spgemm/backend.hpp"
#include "spgemm/generate.hpp"
#include "spgemm/matrix_ops.hpp"
#include "test_matrices.hpp"

namespace spgemm {
namespace {

using testing::gpu;

std::vector<matrix_op> every_op() {
  return {ewise_add{binary_op::plus},
          ewise_add{binary_op::min},
          ewise_mult{binary_op::times},
          ewise_mult{binary_op::second},
          apply_unary{unary_op::abs},
          apply_unary{unary_op::minv},
          apply_scalar{binary_op::pow, 2, false},
          apply_scalar{binary_op::minus, 1.5, true},
          select_entries{selector::tril, -1},
          select_entries{selector::triu, 0},
          select_entries{selector::diag, 0},
          select_entries{selector::value_ge, 1},
          select_entries{selector::colgt, 10},
          top_k{1, false},
          top_k{3, false},
          top_k{2, true},
          reduce{reduce_axis::rows, monoid::plus, false},
          reduce{reduce_axis::rows, monoid::min, false},
          reduce{reduce_axis::columns, monoid::plus, false},
          reduce{reduce_axis::columns, monoid::max, true},
          reduce{reduce_axis::all, monoid::plus, false},
          reduce{reduce_axis::all, monoid::max, false},
          reduce{reduce_axis::all, monoid::plus, true},
          scale{false, binary_op::times},
          scale{true, binary_op::div},
          extract_rows{{0, 3, 3, 1}}};
}

// The vector a scale op takes for A: every other element present.
template <typename T>
csr_matrix<T> vector_for(const matrix_info& a, bool columns) {
  const std::int64_t n = columns ? a.cols : a.rows;
  csr_matrix<T> v = testing::empty_csr<T>(columns ? 1 : n, columns ? n : 1);
  v.row_offsets = {0};
  for (std::int64_t i = 0; i < n; ++i) {
    if (i % 2 == 0) {
      v.col_indices.push_back(columns ? static_cast<index_t>(i) : 0);
      v.values.push_back(static_cast<T>(0.5 + static_cast<double>(i)));
    }
    if (!columns) v.row_offsets.push_back(v.nnz());
  }
  if (columns) v.row_offsets.push_back(v.nnz());
  return v;
}

// How exactly the GPU must match the CPU: bit for bit; within rounding (a
// sum over every entry, in another order); or within a few ulps (exp, log
// and pow: CUDA's libm and glibc's differ in the last bits).
enum class match { exact, rounding, ulps };

template <typename T>
void expect_same(const csr_matrix<T>& c, const csr_matrix<T>& ref, match how) {
  ASSERT_EQ(c.rows, ref.rows);
  ASSERT_EQ(c.cols, ref.cols);
  ASSERT_EQ(c.row_offsets, ref.row_offsets);
  ASSERT_EQ(c.col_indices, ref.col_indices);
  for (std::size_t k = 0; k < c.values.size(); ++k) {
    if (std::isnan(ref.values[k])) {
      EXPECT_TRUE(std::isnan(c.values[k]));
    } else if (how == match::rounding) {
      EXPECT_NEAR(c.values[k], ref.values[k], 1e-4 * (1 + std::fabs(ref.values[k])));
    } else if (how == match::ulps) {
      EXPECT_NEAR(c.values[k], ref.values[k], 4 * std::numeric_limits<T>::epsilon() * std::fabs(ref.values[k]))
          << "entry " << k;
    } else {
      ASSERT_EQ(c.values[k], ref.values[k]) << "entry " << k;
    }
  }
}

// Every op on A (and B, or A's vector) on the GPU against the CPU.
template <typename T, typename U>
void expect_ops(const std::string& what, const csr_matrix<T>& a, const csr_matrix<U>& b) {
  backend& g = gpu();
  const auto sa = g.store(a);
  const auto sb = g.store(b);
  for (const matrix_op& op : every_op()) {
    if (const auto* rows = std::get_if<extract_rows>(&op); rows != nullptr && a.rows < 4) continue;
    SCOPED_TRACE(what + ": " + describe(op));
    const any_csr ha = a;
    any_csr hb = b;
    std::shared_ptr<stored_matrix> second = sb;
    if (const auto* s = std::get_if<scale>(&op)) {
      hb = vector_for<U>(info_of(a), s->columns);
      second = g.store(hb);
    }
    std::vector<const stored_matrix*> operands = {sa.get()};
    std::vector<const any_csr*> host = {&ha};
    if (operand_count(op) == 2) {
      operands.push_back(second.get());
      host.push_back(&hb);
    }
    const memory_estimate e = g.estimate_op(op, operands);
    std::size_t peak = 0;
    const auto c = g.run_op(op, operands, e.total(), {}, &peak);
    EXPECT_LE(peak, e.total()) << e.method;
    const any_csr got = g.fetch(*c);
    const any_csr want = cpu_run_op(op, host);
    const auto* r = std::get_if<reduce>(&op);
    const auto* unary = std::get_if<apply_unary>(&op);
    const auto* bound = std::get_if<apply_scalar>(&op);
    match how = match::exact;
    if (r != nullptr && r->axis == reduce_axis::all && r->add == monoid::plus && !r->count) how = match::rounding;
    if ((unary != nullptr && (unary->op == unary_op::exp || unary->op == unary_op::log)) ||
        (bound != nullptr && bound->op == binary_op::pow)) {
      how = match::ulps;
    }
    std::visit(
        [&](const auto& x, const auto& y) {
          if constexpr (std::is_same_v<decltype(x), decltype(y)>) {
            expect_same(x, y, how);
          } else {
            ADD_FAILURE() << "value types differ";
          }
        },
        got, want);
  }
}

class GpuMatrixOps : public ::testing::Test {
 protected:
  void SetUp() override { SPGEMM_REQUIRE_GPU(); }
};

TEST_F(GpuMatrixOps, MatchTheCpuOnRandomMatrices) {
  expect_ops("random f64", testing::with_small_integers(testing::random_csr<double>(300, 200, 12, 1), 2),
             testing::with_small_integers(testing::random_csr<double>(300, 200, 12, 3), 4));
  expect_ops("random f32 and f64", testing::with_small_integers(testing::random_csr<float>(300, 200, 12, 5), 6),
             testing::with_small_integers(testing::random_csr<double>(300, 200, 12, 7), 8));
}

TEST_F(GpuMatrixOps, MatchTheCpuOnAPowerLawGraph) {
  const auto g = testing::with_random_values(generate("rmat:12:16"), 9);
  expect_ops("rmat:12:16", g, cpu_transpose(g));
}

TEST_F(GpuMatrixOps, MatchTheCpuOnEmptyAndTinyMatrices) {
  expect_ops("empty 5 x 7", testing::empty_csr<double>(5, 7), testing::empty_csr<double>(5, 7));
  csr_matrix<float> one = testing::empty_csr<float>(1, 1);
  one.row_offsets = {0, 1};
  one.col_indices = {0};
  one.values = {2.5f};
  expect_ops("1 x 1", one, one);
}

}  // namespace
}  // namespace spgemm
