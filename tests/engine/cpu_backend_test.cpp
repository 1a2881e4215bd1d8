#include <gtest/gtest.h>

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

TEST(CpuBackend, ConvertsValueTypes) {
  auto cpu = make_cpu_backend(1);
  const auto a = testing::random_csr<float>(30, 30, 4, 3);
  const auto sa = cpu->store(a);
  const auto sb = cpu->store(convert_values<double>(a));
  const auto wide = cpu->multiply(*sa, *sb, {});
  EXPECT_EQ(wide->info().type, value_type::f64);
  multiply_options narrow;
  narrow.output_type = value_type::f32;
  EXPECT_EQ(cpu->multiply(*sa, *sb, narrow)->info().type, value_type::f32);
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
  const auto t = std::get<csr_matrix<double>>(cpu->fetch(*cpu->transpose(*cpu->store(a))));
  const auto ref = cpu_transpose(a);
  EXPECT_EQ(t.col_indices, ref.col_indices);
  EXPECT_EQ(t.values, ref.values);
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
