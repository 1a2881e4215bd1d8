#include <algorithm>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "collected_rows.hpp"
#include "spgemm/backend.hpp"
#include "spgemm/errors.hpp"
#include "spgemm/reference.hpp"
#include "test_matrices.hpp"

namespace spgemm {
namespace {

TEST(CpuBackend, IsTheDefaultWithoutAGpu) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "a GPU is present: the default backends are GPUs";
  const auto backends = open_default_backends();
  ASSERT_EQ(backends.size(), 1u);
  EXPECT_EQ(backends[0]->name(), "cpu");
  EXPECT_FALSE(backends[0]->is_gpu());
}

TEST(CpuBackend, MultipliesStoredMatricesWithinItsEstimate) {
  auto cpu = make_cpu_backend(2);
  const auto a = testing::random_csr<double>(120, 90, 8, 1);
  const auto b = testing::random_csr<double>(90, 70, 8, 2);
  {
    const auto sa = cpu->store(a);
    const auto sb = cpu->store(b);
    EXPECT_EQ(cpu->memory().in_use_bytes, a.bytes() + b.bytes());
    const auto estimate = cpu->estimate_multiply(*sa, *sb, {});
    cpu->reset_peak();
    const auto sc = cpu->multiply(*sa, *sb, {});
    const std::size_t used = cpu->memory().peak_bytes - a.bytes() - b.bytes();
    EXPECT_LE(used, estimate.total());
    const auto c = std::get<csr_matrix<double>>(cpu->fetch(*sc));
    EXPECT_EQ(scaled_max_error(c, cpu_multiply(a, b), a, b), 0.0);
    // Row blocks come back rebased.
    const auto block = std::get<csr_matrix<double>>(cpu->fetch(*sc, 10, 20));
    EXPECT_EQ(block.rows, 10);
    EXPECT_EQ(block.row_offsets[0], 0);
    EXPECT_EQ(block.nnz(), c.row_offsets[20] - c.row_offsets[10]);
  }
  EXPECT_EQ(cpu->memory().in_use_bytes, 0u);
}

// An n x n band: row r holds the columns r - half .. r + half within the matrix.
csr_matrix<double> band(std::int64_t n, std::int64_t half) {
  csr_matrix<double> m;
  m.rows = m.cols = n;
  for (std::int64_t r = 0; r < n; ++r) {
    for (std::int64_t c = std::max<std::int64_t>(0, r - half); c <= std::min(n - 1, r + half); ++c) {
      m.col_indices.push_back(static_cast<index_t>(c));
      m.values.push_back(1.0 + 0.001 * static_cast<double>((r + c) % 7));
    }
    m.row_offsets.push_back(m.nnz());
  }
  return m;
}

// A band's products overcount C by half the band; the span of the columns a
// row reaches bounds it (issue 26: the estimate refused jobs that fit).
TEST(CpuBackend, BandProductsEstimateTheirOutputClosely) {
  auto cpu = make_cpu_backend(2);
  const auto a = band(3000, 20);
  const auto sa = cpu->store(a);
  const memory_estimate estimate = cpu->estimate_multiply(*sa, *sa, {});
  const csr_matrix<double> c = cpu_multiply(a, a);
  EXPECT_EQ(estimate.products, compute_product_stats(a, a).products);
  EXPECT_GE(estimate.output_bytes, c.bytes());
  EXPECT_LE(estimate.output_bytes, c.bytes() + c.bytes() / 20) << "products " << estimate.products << ", nnz(C) " << c.nnz();
  std::size_t peak = 0;
  const auto sc = cpu->multiply(*sa, *sa, {}, estimate.total(), {}, &peak);
  EXPECT_LE(peak, estimate.total());
  EXPECT_GE(peak, c.bytes());
  EXPECT_EQ(std::get<csr_matrix<double>>(cpu->fetch(*sc)).col_indices, c.col_indices);
}

// A limit below what the product takes fails it with does_not_fit, naming
// the method and both numbers, and leaves nothing counted.
TEST(CpuBackend, SamplesRowOffsets) {
  auto cpu = make_cpu_backend(1);
  const auto a = testing::random_csr<double>(10, 20, 4, 5);
  const auto sa = cpu->store(a);
  const std::vector<offset_t>& off = a.row_offsets;
  EXPECT_EQ(cpu->sample_row_offsets(*sa, 1), off);
  EXPECT_EQ(cpu->sample_row_offsets(*sa, 4), (std::vector<offset_t>{off[0], off[4], off[8], off[10]}));
  EXPECT_EQ(cpu->sample_row_offsets(*sa, 10), (std::vector<offset_t>{off[0], off[10]}));
  EXPECT_EQ(cpu->sample_row_offsets(*sa, 99), (std::vector<offset_t>{off[0], off[10]}));
  EXPECT_THROW(cpu->sample_row_offsets(*sa, 0), error);
}

TEST(CpuBackend, RefusesToPassItsLimit) {
  auto cpu = make_cpu_backend(2);
  const auto a = testing::random_csr<double>(200, 200, 10, 7);
  const auto sa = cpu->store(a);
  const std::size_t limit = cpu->estimate_multiply(*sa, *sa, {}).total() / 4;
  try {
    cpu->multiply(*sa, *sa, {}, limit);
    FAIL() << "the product ran beyond its limit";
  } catch (const error& e) {
    EXPECT_EQ(e.kind(), error_kind::does_not_fit);
    const std::string message = e.what();
    EXPECT_NE(message.find("gustavson"), std::string::npos) << message;
    EXPECT_NE(message.find(std::to_string(limit)), std::string::npos) << message;
  }
  EXPECT_EQ(cpu->memory().in_use_bytes, a.bytes());
}

TEST(CpuBackend, ConvertsValueTypes) {
  auto cpu = make_cpu_backend(1);
  const auto a = testing::random_csr<float>(30, 30, 4, 3);
  const auto sa = cpu->store(a);
  const auto sb = cpu->store(convert_values<double>(a));
  const auto wide = cpu->multiply(*sa, *sb, {});
  EXPECT_EQ(wide->info().type, value_type::f64);
  multiply_options narrow;
  narrow.output_type = value_type::f32;
  // The converted operand is counted, within the estimate.
  const memory_estimate estimate = cpu->estimate_multiply(*sa, *sb, narrow);
  std::size_t peak = 0;
  EXPECT_EQ(cpu->multiply(*sa, *sb, narrow, estimate.total(), {}, &peak)->info().type, value_type::f32);
  EXPECT_GE(peak, a.bytes());
  EXPECT_LE(peak, estimate.total());
}

TEST(CpuBackend, RejectsGpuAlgorithmsMismatchesAndHonoursCancel) {
  auto cpu = make_cpu_backend(1);
  const auto a = cpu->store(testing::random_csr<double>(5, 6, 3, 4));
  multiply_options rmerge;
  rmerge.algo = algorithm::rmerge;
  EXPECT_THROW(cpu->multiply(*a, *a, rmerge), error);
  multiply_options block;
  block.algo = algorithm::block;
  EXPECT_THROW(cpu->estimate_multiply(*a, *a, block), error);
  try {
    cpu->multiply(*a, *a, {});
    FAIL();
  } catch (const error& e) {
    EXPECT_EQ(e.kind(), error_kind::bad_input);
  }
  const auto square = cpu->store(testing::random_csr<double>(6, 6, 3, 5));
  cancel_token cancel;
  cancel.cancel();
  try {
    cpu->multiply(*square, *square, {}, cancel);
    FAIL();
  } catch (const error& e) {
    EXPECT_EQ(e.kind(), error_kind::cancelled);
  }
}

TEST(CpuBackend, Transposes) {
  auto cpu = make_cpu_backend(1);
  const auto a = testing::random_csr<double>(13, 29, 7, 6);
  const auto sa = cpu->store(a);
  std::size_t peak = 0;
  const auto t = std::get<csr_matrix<double>>(cpu->fetch(*cpu->transpose(*sa, {}, &peak)));
  EXPECT_EQ(peak, cpu->estimate_transpose(*sa).total());
  const auto ref = cpu_transpose(a);
  EXPECT_EQ(t.col_indices, ref.col_indices);
  EXPECT_EQ(t.values, ref.values);
}

// Rows copied into a matrix of their own, here or from another CPU backend
// (a stand-in for a peer GPU), counted where they are stored.
TEST(CpuBackend, CopiesRowsFromItselfAndFromAnotherBackend) {
  auto one = make_cpu_backend(1);
  auto two = make_cpu_backend(1, 1);
  EXPECT_EQ(two->name(), "cpu:1");
  const auto a = testing::random_csr<double>(50, 40, 6, 3);
  const auto sa = one->store(a);
  for (const auto& [begin, end] : {std::pair<std::int64_t, std::int64_t>{0, 50}, {7, 31}, {49, 50}, {20, 20}}) {
    const auto rows = two->copy_rows(*sa, begin, end);
    const auto got = std::get<csr_matrix<double>>(two->fetch(*rows));
    const auto want = row_block(a, begin, end);
    EXPECT_EQ(got.row_offsets, want.row_offsets);
    EXPECT_EQ(got.col_indices, want.col_indices);
    EXPECT_EQ(got.values, want.values);
    EXPECT_EQ(two->memory().in_use_bytes, want.bytes());
  }
  EXPECT_EQ(two->memory().in_use_bytes, 0u);
  EXPECT_THROW(one->copy_rows(*sa, 10, 51), error);
}

// Rows appended to a host matrix piece by piece (as a kept product in row
// panels is gathered): together they are the matrix; rows out of range,
// other columns or another value type are refused.
TEST(CpuBackend, AppendsRowsToAHostMatrix) {
  auto cpu = make_cpu_backend(1);
  const auto a = testing::random_csr<float>(70, 40, 8, 6);
  const auto sa = cpu->store(a);
  csr_matrix<float> start;
  start.cols = a.cols;
  any_csr joined = start;
  for (const auto& [begin, end] :
       {std::pair<std::int64_t, std::int64_t>{0, 0}, {0, 1}, {1, 33}, {33, 33}, {33, 34}, {34, 70}}) {
    cpu->append_rows(*sa, begin, end, joined);
  }
  const auto& got = std::get<csr_matrix<float>>(joined);
  EXPECT_EQ(got.rows, a.rows);
  EXPECT_EQ(got.row_offsets, a.row_offsets);
  EXPECT_EQ(got.col_indices, a.col_indices);
  EXPECT_EQ(got.values, a.values);
  csr_matrix<double> doubles;
  doubles.cols = a.cols;
  any_csr other_type = doubles;
  EXPECT_THROW(cpu->append_rows(*sa, 0, 5, other_type), error);
  csr_matrix<float> narrow;
  narrow.cols = a.cols - 1;
  any_csr other_cols = narrow;
  EXPECT_THROW(cpu->append_rows(*sa, 0, 5, other_cols), error);
  EXPECT_THROW(cpu->append_rows(*sa, 60, 71, joined), error);
}

// Rows handed to a sink straight from the stored arrays are the rows fetch
// copies, for every range; a range outside the matrix is refused.
TEST(CpuBackend, HandsRowsToASink) {
  auto cpu = make_cpu_backend(1);
  const auto a = testing::random_csr<float>(70, 40, 8, 6);
  const auto sa = cpu->store(a);
  for (const auto& [begin, end] : {std::pair<std::int64_t, std::int64_t>{0, 0}, {0, 70}, {1, 33}, {33, 34}, {69, 70}}) {
    SCOPED_TRACE(begin);
    testing::collected_rows<float> sink(a.cols);
    cpu->fetch_to(*sa, begin, end, sink);
    const csr_matrix<float> want = row_block(a, begin, end);
    EXPECT_EQ(sink.rows().row_offsets, want.row_offsets);
    EXPECT_EQ(sink.rows().col_indices, want.col_indices);
    EXPECT_EQ(sink.rows().values, want.values);
  }
  testing::collected_rows<float> sink(a.cols);
  EXPECT_THROW(cpu->fetch_to(*sa, 60, 71, sink), error);
}

// The work per row sums to the product's statistics, and the method an
// estimate names is the one that runs.
TEST(CpuBackend, MeasuresTheWorkOfEachRow) {
  auto cpu = make_cpu_backend(2);
  const auto a = testing::random_csr<double>(80, 60, 9, 4);
  const auto b = testing::random_csr<float>(60, 70, 7, 5);
  const auto sa = cpu->store(a);
  const auto sb = cpu->store(b);
  const row_work w = cpu->work_per_row(*sa, *sb);
  ASSERT_EQ(w.entries.size(), 80u);
  ASSERT_EQ(w.products.size(), 80u);
  std::int64_t entries = 0, products = 0;
  for (std::size_t r = 0; r < 80; ++r) {
    EXPECT_EQ(w.entries[r], a.row_length(static_cast<std::int64_t>(r)));
    entries += w.entries[r];
    products += w.products[r];
  }
  EXPECT_EQ(entries, a.nnz());
  EXPECT_EQ(products, compute_product_stats(a, b).products);
  EXPECT_EQ(cpu->estimate_multiply(*sa, *sb, {}).algo, algorithm::gustavson);
  EXPECT_THROW(cpu->work_per_row(*sb, *sa), error);
}

TEST(Algorithms, ParseKnownNamesAndRejectOthers) {
  EXPECT_EQ(parse_algorithm("auto"), algorithm::automatic);
  EXPECT_EQ(parse_algorithm(""), algorithm::automatic);
  EXPECT_EQ(parse_algorithm("rmerge"), algorithm::rmerge);
  EXPECT_EQ(parse_algorithm("block"), algorithm::block);
  EXPECT_EQ(to_string(algorithm::block), "block");
  try {
    parse_algorithm("fastest");
    FAIL();
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("known: auto, gustavson, rmerge"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace spgemm
