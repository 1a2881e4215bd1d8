// What the server's row panels need of the GPU backend: rows copied into a
// matrix of their own (on the device, and peer-to-peer from another GPU),
// the work per row, rows handed to a sink and whole matrices copied into
// pinned host memory and stored from it (the server's regions), and products of
// row panels that put together equal the product of the whole (same
// structure, values bit for bit where the method sums each entry in A's order).
#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "collected_rows.hpp"
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

// Rows appended to host matrices as the server's drain threads take a kept
// panel off its device: pieces one after another into one matrix (small ones
// copied at once, large ones through the pinned staging buffers in several
// pieces, empty ones too), then four threads at once, each into a matrix of
// its own; rows out of range, other columns or another value type are refused.
TEST(GpuRowPanels, AppendsRowsToHostMatrices) {
  SPGEMM_REQUIRE_GPU();
  const auto a = random_csr<double>(60000, 50000, 100, 15);  // ~3M entries: 24 MB of values
  const auto sa = gpu().store(a);
  auto empty = [&](auto zero) {
    csr_matrix<decltype(zero)> m;
    m.cols = a.cols;
    return any_csr(std::move(m));
  };
  any_csr joined = empty(0.0);
  const std::int64_t cuts[] = {0, 0, 1, 100, 30000, 30000, 30001, a.rows};
  for (int p = 0; p + 1 < 8; ++p) gpu().append_rows(*sa, cuts[p], cuts[p + 1], joined);
  expect_same(std::get<csr_matrix<double>>(joined), a);

  std::vector<any_csr> quarters(4, empty(0.0));
  std::vector<std::exception_ptr> failed(4);
  std::vector<std::thread> threads;
  auto bound = [&](int q) { return a.rows * q / 4; };
  for (int q = 0; q < 4; ++q) {
    threads.emplace_back([&, q] {
      try {
        gpu().append_rows(*sa, bound(q), bound(q + 1), quarters[static_cast<std::size_t>(q)]);
      } catch (...) {
        failed[static_cast<std::size_t>(q)] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int q = 0; q < 4; ++q) {
    SCOPED_TRACE(q);
    ASSERT_FALSE(failed[static_cast<std::size_t>(q)]);
    expect_same(std::get<csr_matrix<double>>(quarters[static_cast<std::size_t>(q)]),
                row_block(a, bound(q), bound(q + 1)));
  }

  any_csr other_type = empty(0.0f);
  EXPECT_THROW(gpu().append_rows(*sa, 0, 10, other_type), error);
  any_csr other_cols = csr_matrix<double>{};
  std::get<csr_matrix<double>>(other_cols).cols = a.cols - 1;
  EXPECT_THROW(gpu().append_rows(*sa, 0, 10, other_cols), error);
  EXPECT_THROW(gpu().append_rows(*sa, 10, a.rows + 1, joined), error);
}

// Rows handed to a sink: small ranges in one piece an array, large ones in
// several pieces straight from the pinned staging buffers; together they are
// the rows fetch copies. A range outside the matrix is refused.
TEST(GpuRowPanels, HandsRowsToASink) {
  SPGEMM_REQUIRE_GPU();
  const auto a = random_csr<double>(60000, 50000, 100, 16);  // ~3M entries: 24 MB of values
  const auto sa = gpu().store(a);
  for (const auto& [begin, end] : {std::pair<std::int64_t, std::int64_t>{0, 0}, {5, 6}, {0, a.rows}, {100, 59000}}) {
    SCOPED_TRACE(end);
    testing::collected_rows<double> sink(a.cols);
    gpu().fetch_to(*sa, begin, end, sink);
    expect_same(sink.rows(), row_block(a, begin, end));
    if (end - begin > 10000) EXPECT_GT(sink.pieces(), 3);
  }
  testing::collected_rows<double> sink(a.cols);
  EXPECT_THROW(gpu().fetch_to(*sa, 10, a.rows + 1, sink), error);
}

// A whole matrix copied by the copy engines into mapped pages pinned for them
// (as a client's shared-memory region is), poisoned first: the matrix exactly.
// Memory not pinned is refused (a CPU copy could fault on pages taken away);
// a host backend pins nothing.
TEST(GpuRowPanels, CopiesAWholeMatrixIntoPinnedMemory) {
  SPGEMM_REQUIRE_GPU();
  const auto a = random_csr<double>(60000, 50000, 100, 17);
  const auto sa = gpu().store(a);
  const std::size_t offsets = (a.row_offsets.size() * sizeof(offset_t) + 63) / 64 * 64;
  const std::size_t columns = (a.col_indices.size() * sizeof(index_t) + 63) / 64 * 64;
  const std::size_t bytes = offsets + columns + a.values.size() * sizeof(double);
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  std::memset(p, 0xff, bytes);
  auto* base = static_cast<char*>(p);
  const host_csr_targets to{reinterpret_cast<offset_t*>(base), reinterpret_cast<index_t*>(base + offsets),
                            base + offsets + columns};
  EXPECT_THROW(gpu().fetch_into_pinned(*sa, to), error);
  ASSERT_TRUE(gpu().pin_host(p, bytes));
  gpu().fetch_into_pinned(*sa, to);
  gpu().unpin_host(p);
  csr_matrix<double> got;
  got.rows = a.rows;
  got.cols = a.cols;
  got.row_offsets.assign(to.row_offsets, to.row_offsets + a.row_offsets.size());
  got.col_indices.assign(to.col_indices, to.col_indices + a.col_indices.size());
  got.values.assign(static_cast<const double*>(to.values), static_cast<const double*>(to.values) + a.values.size());
  expect_same(got, a);
  munmap(p, bytes);
  EXPECT_FALSE(make_cpu_backend(1)->pin_host(base, 4096));
}

// A matrix stored from pinned host memory by the copy engines is the matrix,
// checked on the device: unsorted columns and memory not pinned are refused.
TEST(GpuRowPanels, StoresAMatrixFromPinnedMemory) {
  SPGEMM_REQUIRE_GPU();
  const auto a = random_csr<float>(40000, 30000, 60, 18);
  const std::size_t offsets = a.row_offsets.size() * sizeof(offset_t), columns = a.col_indices.size() * sizeof(index_t);
  const std::size_t bytes = offsets + columns + a.values.size() * sizeof(float);
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  auto* base = static_cast<char*>(p);
  std::memcpy(base, a.row_offsets.data(), offsets);
  std::memcpy(base + offsets, a.col_indices.data(), columns);
  std::memcpy(base + offsets + columns, a.values.data(), a.values.size() * sizeof(float));
  const host_csr_arrays from{reinterpret_cast<const offset_t*>(base),
                             reinterpret_cast<const index_t*>(base + offsets), base + offsets + columns};
  const matrix_info info{a.rows, a.cols, a.nnz(), value_type::f32};
  EXPECT_THROW(gpu().store_from_pinned(info, from), error);
  ASSERT_TRUE(gpu().pin_host(p, bytes));
  expect_same(std::get<csr_matrix<float>>(gpu().fetch(*gpu().store_from_pinned(info, from))), a);
  auto* cols = reinterpret_cast<index_t*>(base + offsets);
  std::int64_t r = 0;
  while (a.row_length(r) < 2) ++r;
  std::swap(cols[a.row_offsets[r]], cols[a.row_offsets[r] + 1]);
  EXPECT_THROW(gpu().store_from_pinned(info, from), error);
  gpu().unpin_host(p);
  munmap(p, bytes);
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
  const auto a = random_csr<float>(4000, 4000, 50, 14);  // square: it is squared below
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
