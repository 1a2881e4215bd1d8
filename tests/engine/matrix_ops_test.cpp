// The matrix ops between products (spgemm/matrix_ops.hpp) on the CPU:
// cpu_run_op against an oracle over (row, column) -> value maps, the shapes
// and bounds result_bound gives and refuses, the names, and the CPU
// backend's run_op within its estimate. python-graphblas checks the same
// ops through the service (client/python/tests/test_graph_ops.py).
#include <cmath>
#include <map>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "matrix_ops/op_functions.hpp"
#include "spgemm/backend.hpp"
#include "spgemm/errors.hpp"
#include "spgemm/generate.hpp"
#include "spgemm/matrix_ops.hpp"
#include "spgemm/reference.hpp"
#include "spgemm/validate.hpp"
#include "test_matrices.hpp"

namespace spgemm {
namespace {

using entries = std::map<std::pair<std::int64_t, std::int64_t>, double>;

entries entries_of(const csr_matrix<double>& m) {
  entries out;
  for (std::int64_t r = 0; r < m.rows; ++r) {
    for (offset_t k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k) out[{r, m.col_indices[k]}] = m.values[k];
  }
  return out;
}

csr_matrix<double> run(const matrix_op& op, const csr_matrix<double>& a, const csr_matrix<double>* b = nullptr) {
  const any_csr x = a;
  std::vector<const any_csr*> operands = {&x};
  any_csr y;
  if (b != nullptr) {
    y = *b;
    operands.push_back(&y);
  }
  auto c = std::get<csr_matrix<double>>(cpu_run_op(op, operands));
  EXPECT_EQ(find_csr_problem(c), "");
  return c;
}

void expect_entries(const csr_matrix<double>& c, const entries& want) {
  const entries got = entries_of(c);
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [at, v] : want) {
    const auto it = got.find(at);
    ASSERT_NE(it, got.end()) << at.first << "," << at.second;
    if (std::isnan(v)) {
      EXPECT_TRUE(std::isnan(it->second));
    } else {
      EXPECT_EQ(it->second, v) << at.first << "," << at.second;
    }
  }
}

class MatrixOps : public ::testing::Test {
 protected:
  csr_matrix<double> a = testing::with_small_integers(testing::random_csr<double>(60, 50, 9, 1), 2);
  csr_matrix<double> b = testing::with_small_integers(testing::random_csr<double>(60, 50, 9, 3), 4);
};

TEST_F(MatrixOps, ElementWiseAddAndMultiply) {
  const entries ea = entries_of(a), eb = entries_of(b);
  for (const binary_op op : {binary_op::plus, binary_op::min, binary_op::minus, binary_op::second, binary_op::gt}) {
    entries add = ea, mult;
    for (const auto& [at, v] : eb) {
      const auto it = ea.find(at);
      if (it == ea.end()) {
        add[at] = v;
      } else {
        add[at] = mult[at] = ops::apply(op, it->second, v);
      }
    }
    expect_entries(run(ewise_add{op}, a, &b), add);
    expect_entries(run(ewise_mult{op}, a, &b), mult);
  }
}

TEST_F(MatrixOps, ApplyUnaryAndBoundScalars) {
  entries e = entries_of(a);
  entries abs = e, inflated = e, scaled = e, inverse = e, one = e;
  for (auto& [at, v] : abs) v = std::fabs(v);
  for (auto& [at, v] : inflated) v = std::pow(v, 2.0);
  for (auto& [at, v] : scaled) v = 0.5 - v;
  for (auto& [at, v] : inverse) v = 1.0 / v;
  for (auto& [at, v] : one) v = 1.0;
  expect_entries(run(apply_unary{unary_op::abs}, a), abs);
  expect_entries(run(apply_unary{unary_op::minv}, a), inverse);
  expect_entries(run(apply_unary{unary_op::one}, a), one);
  expect_entries(run(apply_scalar{binary_op::pow, 2.0, false}, a), inflated);
  expect_entries(run(apply_scalar{binary_op::minus, 0.5, true}, a), scaled);
}

TEST_F(MatrixOps, SelectKeepsWhatGraphBlasKeeps) {
  const entries e = entries_of(a);
  const auto kept = [&](auto keep) {
    entries out;
    for (const auto& [at, v] : e)
      if (keep(at.first, at.second, v)) out[at] = v;
    return out;
  };
  expect_entries(run(select_entries{selector::tril, 0}, a), kept([](auto i, auto j, double) { return j <= i; }));
  expect_entries(run(select_entries{selector::tril, -1}, a), kept([](auto i, auto j, double) { return j < i; }));
  expect_entries(run(select_entries{selector::triu, 2}, a), kept([](auto i, auto j, double) { return j >= i + 2; }));
  expect_entries(run(select_entries{selector::diag, 0}, a), kept([](auto i, auto j, double) { return j == i; }));
  expect_entries(run(select_entries{selector::offdiag, 0}, a), kept([](auto i, auto j, double) { return j != i; }));
  expect_entries(run(select_entries{selector::value_ge, 1}, a), kept([](auto, auto, double v) { return v >= 1; }));
  expect_entries(run(select_entries{selector::value_ne, 0}, a), kept([](auto, auto, double v) { return v != 0; }));
  expect_entries(run(select_entries{selector::rowgt, 30}, a), kept([](auto i, auto, double) { return i > 30; }));
  expect_entries(run(select_entries{selector::colle, 7}, a), kept([](auto, auto j, double) { return j <= 7; }));
}

TEST_F(MatrixOps, TopKPerRowAndColumnBreakTiesByPosition) {
  for (const bool columns : {false, true}) {
    for (const std::int64_t k : {0, 1, 3, 100}) {
      // Group the entries by row (or column), largest first, the earlier index first among equals.
      std::map<std::int64_t, std::vector<std::pair<double, std::int64_t>>> groups;
      for (const auto& [at, v] : entries_of(a)) {
        groups[columns ? at.second : at.first].push_back({-v, columns ? at.first : at.second});
      }
      entries want;
      for (auto& [line, members] : groups) {
        std::sort(members.begin(), members.end());
        for (std::size_t i = 0; i < members.size() && static_cast<std::int64_t>(i) < k; ++i) {
          const std::int64_t other = members[i].second;
          want[columns ? std::make_pair(other, line) : std::make_pair(line, other)] = -members[i].first;
        }
      }
      SCOPED_TRACE(std::string(columns ? "columns" : "rows") + " k = " + std::to_string(k));
      expect_entries(run(top_k{k, columns}, a), want);
    }
  }
}

TEST_F(MatrixOps, ReductionsByRowColumnAndAll) {
  std::map<std::int64_t, double> row_sum, col_max, row_count;
  double total = 0;
  std::int64_t count = 0;
  for (const auto& [at, v] : entries_of(a)) {
    row_sum[at.first] += v;
    col_max[at.second] = col_max.count(at.second) ? std::max(col_max[at.second], v) : v;
    row_count[at.first] += 1;
    total += v;
    ++count;
  }
  entries sums, maxima, counts;
  for (const auto& [r, v] : row_sum) sums[{r, 0}] = v;
  for (const auto& [c, v] : col_max) maxima[{0, c}] = v;
  for (const auto& [r, v] : row_count) counts[{r, 0}] = v;
  const auto rows = run(reduce{reduce_axis::rows, monoid::plus, false}, a);
  EXPECT_EQ(rows.rows, a.rows);
  EXPECT_EQ(rows.cols, 1);
  expect_entries(rows, sums);
  const auto cols = run(reduce{reduce_axis::columns, monoid::max, false}, a);
  EXPECT_EQ(cols.rows, 1);
  EXPECT_EQ(cols.cols, a.cols);
  expect_entries(cols, maxima);
  expect_entries(run(reduce{reduce_axis::rows, monoid::plus, true}, a), counts);
  expect_entries(run(reduce{reduce_axis::all, monoid::plus, false}, a), {{{0, 0}, total}});
  expect_entries(run(reduce{reduce_axis::all, monoid::plus, true}, a), {{{0, 0}, static_cast<double>(count)}});
  // No entries, no entry.
  EXPECT_EQ(run(reduce{reduce_axis::all, monoid::min, false}, testing::empty_csr<double>(4, 5)).nnz(), 0);
}

TEST_F(MatrixOps, ScaleByAVectorOfEitherOrientation) {
  // v: every third column absent, so those entries of A go.
  csr_matrix<double> row_vector = testing::empty_csr<double>(1, a.cols);
  row_vector.row_offsets = {0};
  for (std::int64_t j = 0; j < a.cols; ++j) {
    if (j % 3 == 0) continue;
    row_vector.col_indices.push_back(static_cast<index_t>(j));
    row_vector.values.push_back(0.25 * static_cast<double>(j));
  }
  row_vector.row_offsets.push_back(row_vector.nnz());
  entries want;
  for (const auto& [at, v] : entries_of(a)) {
    if (at.second % 3 != 0) want[at] = v * 0.25 * static_cast<double>(at.second);
  }
  expect_entries(run(scale{true, binary_op::times}, a, &row_vector), want);
  const csr_matrix<double> column_vector = cpu_transpose(row_vector);
  expect_entries(run(scale{true, binary_op::times}, a, &column_vector), want);
  // Rows: A's 60 rows scaled by a 60 x 1 vector of the rows' indices.
  csr_matrix<double> column = testing::empty_csr<double>(a.rows, 1);
  column.row_offsets = {0};
  for (std::int64_t i = 0; i < a.rows; ++i) {
    column.col_indices.push_back(0);
    column.values.push_back(static_cast<double>(i));
    column.row_offsets.push_back(column.nnz());
  }
  want.clear();
  for (const auto& [at, v] : entries_of(a)) want[at] = v / static_cast<double>(at.first);
  expect_entries(run(scale{false, binary_op::div}, a, &column), want);
  EXPECT_THROW(run(scale{false, binary_op::div}, a, &row_vector), error);  // 50 elements, A has 60 rows
}

TEST_F(MatrixOps, ExtractRowsInTheirOrderWithRepeats) {
  const std::vector<std::int64_t> taken = {5, 0, 5, 59};
  const auto c = run(extract_rows{taken}, a);
  ASSERT_EQ(c.rows, 4);
  for (std::size_t i = 0; i < taken.size(); ++i) {
    const auto want = row_block(a, taken[i], taken[i] + 1);
    const auto got = row_block(c, static_cast<std::int64_t>(i), static_cast<std::int64_t>(i) + 1);
    EXPECT_EQ(got.col_indices, want.col_indices);
    EXPECT_EQ(got.values, want.values);
  }
  EXPECT_THROW(run(extract_rows{{60}}, a), error);
}

TEST(MatrixOpsShapes, BoundsAndRefusals) {
  const matrix_info a{10, 20, 50, value_type::f32}, b{10, 20, 30, value_type::f64};
  EXPECT_EQ(result_bound(ewise_add{}, {a, b}).nnz, 80);
  EXPECT_EQ(result_bound(ewise_add{}, {a, b}).type, value_type::f64);
  EXPECT_EQ(result_bound(ewise_mult{}, {a, b}).nnz, 30);
  EXPECT_EQ(result_bound(top_k{2, false}, {a}).nnz, 20);
  EXPECT_EQ(result_bound(top_k{2, true}, {a}).nnz, 40);
  const matrix_info cols = result_bound(reduce{reduce_axis::columns}, {a});
  EXPECT_EQ(cols.rows, 1);
  EXPECT_EQ(cols.cols, 20);
  EXPECT_THROW(result_bound(ewise_add{}, {a, {10, 21, 3, value_type::f32}}), error);
  EXPECT_THROW(result_bound(ewise_add{}, {a}), error);
  EXPECT_THROW(result_bound(top_k{-1, false}, {a}), error);
  EXPECT_THROW(result_bound(scale{true}, {a, {1, 10, 3, value_type::f32}}), error);
  EXPECT_NO_THROW(result_bound(scale{true}, {a, {20, 1, 3, value_type::f32}}));
  EXPECT_EQ(parse_selector("valuege"), selector::value_ge);
  EXPECT_EQ(parse_unary_op("minv"), unary_op::minv);
  EXPECT_EQ(parse_reduce_axis("columns"), reduce_axis::columns);
  EXPECT_THROW(parse_selector("lower"), error);
  EXPECT_EQ(describe(apply_scalar{binary_op::pow, 2, false}), "apply pow 2");
}

TEST(MatrixOpsShapes, CpuBackendRunsOpsWithinTheirEstimates) {
  auto cpu = make_cpu_backend(2);
  const auto a = testing::random_csr<double>(200, 150, 10, 5);
  const auto b = testing::random_csr<float>(200, 150, 10, 6);
  const auto sa = cpu->store(a);
  const auto sb = cpu->store(b);
  const std::vector<matrix_op> ops = {ewise_add{}, ewise_mult{}, apply_scalar{binary_op::pow, 2, false},
                                      select_entries{selector::triu, 0}, top_k{3, true},
                                      reduce{reduce_axis::columns, monoid::plus, false}, extract_rows{{3, 3, 9}}};
  for (const matrix_op& op : ops) {
    SCOPED_TRACE(describe(op));
    std::vector<const stored_matrix*> operands = {sa.get()};
    if (operand_count(op) == 2) operands.push_back(sb.get());
    const memory_estimate e = cpu->estimate_op(op, operands);
    std::size_t peak = 0;
    const auto c = cpu->run_op(op, operands, e.total(), {}, &peak);
    EXPECT_LE(peak, e.total());
    EXPECT_LE(c->info().bytes(), e.output_bytes);
    EXPECT_THROW(cpu->run_op(op, operands, e.total() / 2), error);
  }
}

}  // namespace
}  // namespace spgemm
