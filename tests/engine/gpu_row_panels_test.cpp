// What the server's row panels need of the GPU backend: rows copied into a
// matrix of their own (on the device, and peer-to-peer from another GPU),
// the work per row, and products of row panels that put together equal the
// product of the whole (same structure, values bit for bit where the method
// sums each entry in A's order).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "gpu_test_support.hpp"
#include "spgemm/errors.hpp"
#include "spgemm/generate.hpp"
#include "test_matrices.hpp"

namespace spgemm::testing {
namespace {

template <typename T>
csr_matrix<T> fetched(backend& b, const stored_matrix& m) {
  return std::get<csr_matrix<T>>(b.fetch(m));
}

template <typename T>
void expect_same(const csr_matrix<T>& got, const csr_matrix<T>& want) {
  EXPECT_EQ(got.rows, want.rows);
  EXPECT_EQ(got.cols, want.cols);
  EXPECT_EQ(got.row_offsets, want.row_offsets);
  EXPECT_EQ(got.col_indices, want.col_indices);
  EXPECT_EQ(got.values, want.values);
}

TEST(GpuRowPanels, CopiesRowsOnTheDevice) {
  SPGEMM_REQUIRE_GPU();
  const auto a = random_csr<double>(3000, 2000, 40, 11);
  const auto sa = gpu().store(a);
  for (const auto& [begin, end] :
       {std::pair<std::int64_t, std::int64_t>{0, 3000}, {1, 2999}, {1234, 2345}, {2999, 3000}, {500, 500}}) {
    const auto rows = gpu().copy_rows(*sa, begin, end);
    expect_same(fetched<double>(gpu(), *rows), row_block(a, begin, end));
  }
  EXPECT_THROW(gpu().copy_rows(*sa, 2000, 3001), error);
}

TEST(GpuRowPanels, MeasuresTheWorkOfEachRow) {
  SPGEMM_REQUIRE_GPU();
  const auto a = random_csr<double>(5000, 3000, 60, 12);
  const auto b = random_csr<float>(3000, 4000, 30, 13);
  const auto sa = gpu().store(a);
  const auto sb = gpu().store(b);
  const row_work got = gpu().work_per_row(*sa, *sb);
  const row_work want = compute_row_work(a, b);
  EXPECT_EQ(got.entries, want.entries);
  EXPECT_EQ(got.products, want.products);
}

// Panels of A times B, put together in order, give the product of the whole.
TEST(GpuRowPanels, PanelProductsPutTogetherEqualTheWhole) {
  SPGEMM_REQUIRE_GPU();
  const csr_matrix<double> a = generate("rmat:14:16");
  const auto sa = gpu().store(a);
  for (const algorithm algo : cuda_algorithms()) {
    if (algo == algorithm::automatic) continue;
    multiply_options options;
    options.algo = algo;
    const csr_matrix<double> whole = fetched<double>(gpu(), *gpu().multiply(*sa, *sa, options));
    csr_matrix<double> joined;
    joined.rows = 0;
    joined.cols = a.cols;
    const std::int64_t cuts[] = {0, 1000, 1001, 7000, a.rows};
    for (int p = 0; p + 1 < 5; ++p) {
      const auto panel = gpu().copy_rows(*sa, cuts[p], cuts[p + 1]);
      const csr_matrix<double> c = fetched<double>(gpu(), *gpu().multiply(*panel, *sa, options));
      const offset_t base = joined.nnz();
      for (std::size_t r = 1; r < c.row_offsets.size(); ++r) joined.row_offsets.push_back(base + c.row_offsets[r]);
      joined.col_indices.insert(joined.col_indices.end(), c.col_indices.begin(), c.col_indices.end());
      joined.values.insert(joined.values.end(), c.values.begin(), c.values.end());
      joined.rows += c.rows;
    }
    SCOPED_TRACE(std::string(to_string(algo)));
    EXPECT_EQ(joined.row_offsets, whole.row_offsets);
    EXPECT_EQ(joined.col_indices, whole.col_indices);
    if (algo == algorithm::rmerge) {
      // Its plan follows the panel's longest row: sums may round otherwise.
      EXPECT_LE(scaled_max_error(joined, whole, a, a), tolerance<double>());
    } else {
      EXPECT_EQ(joined.values, whole.values);
    }
  }
}

// From one GPU to another, peer-to-peer.
TEST(GpuRowPanels, CopiesRowsFromAnotherGpu) {
  SPGEMM_REQUIRE_GPU();
  if (cuda_device_count() < 2) GTEST_SKIP() << "one CUDA device: peer copies need two";
  const auto backends = open_cuda_backends({0, 1});
  const auto a = random_csr<float>(4000, 3500, 50, 14);
  const auto on0 = backends[0]->store(a);
  const auto on1 = backends[1]->copy_rows(*on0, 100, 3900);
  expect_same(fetched<float>(*backends[1], *on1), row_block(a, 100, 3900));
  const auto whole = backends[1]->copy(*on0);
  const auto square = backends[1]->multiply(*whole, *whole, {});
  const auto reference = backends[0]->multiply(*on0, *on0, {});
  expect_same(fetched<float>(*backends[1], *square), fetched<float>(*backends[0], *reference));
}

}  // namespace
}  // namespace spgemm::testing
