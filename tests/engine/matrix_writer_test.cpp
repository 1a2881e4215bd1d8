// backend::open_writer: a matrix stored in row blocks as it arrives (an
// upload), on the CPU backend and on every visible GPU.
#include <gtest/gtest.h>

#include "spgemm/backend.hpp"
#include "spgemm/errors.hpp"
#include "test_matrices.hpp"

namespace spgemm {
namespace {

std::vector<std::shared_ptr<backend>> every_backend() {
  std::vector<std::shared_ptr<backend>> all{make_cpu_backend(2)};
  for (int d = 0; d < cuda_device_count(); ++d) all.push_back(make_cuda_backend(d));
  return all;
}

template <typename T>
host_csr_arrays arrays_of(const csr_matrix<T>& m) {
  return {m.row_offsets.data(), m.col_indices.data(), m.values.data()};
}

// Writes `m` through a writer in the given row ends, then checks what was stored.
template <typename T>
void store_in_blocks(backend& b, const csr_matrix<T>& m, const std::vector<std::int64_t>& row_ends) {
  SCOPED_TRACE(b.name());
  const matrix_info info = info_of(any_csr(m));
  auto writer = b.open_writer(info, arrays_of(m));
  for (std::int64_t end : row_ends) writer->write(end);
  const auto stored = writer->finish();
  EXPECT_EQ(stored->info().rows, info.rows);
  EXPECT_EQ(stored->info().nnz, info.nnz);
  EXPECT_EQ(stored->info().type, info.type);
  const auto back = std::get<csr_matrix<T>>(b.fetch(*stored));
  EXPECT_EQ(back.row_offsets, m.row_offsets);
  EXPECT_EQ(back.col_indices, m.col_indices);
  EXPECT_EQ(back.values, m.values);
}

TEST(MatrixWriter, StoresRowBlocksInOrder) {
  const auto m = testing::random_csr<double>(300, 250, 9, 7);
  const auto f = testing::random_csr<float>(64, 500, 20, 8);
  for (const auto& b : every_backend()) {
    store_in_blocks(*b, m, {0, 1, 1, 120, 299, 300});
    store_in_blocks(*b, m, {300});
    store_in_blocks(*b, f, {10, 64});
  }
}

TEST(MatrixWriter, StoresEmptyShapes) {
  csr_matrix<double> none;  // 0 x 0
  csr_matrix<double> empty_rows;
  empty_rows.rows = 40;
  empty_rows.cols = 7;
  empty_rows.row_offsets.assign(41, 0);
  for (const auto& b : every_backend()) {
    store_in_blocks(*b, none, {0});
    store_in_blocks(*b, empty_rows, {13, 40});
  }
}

TEST(MatrixWriter, RefusesRowsOutOfOrderAndAnUnfinishedMatrix) {
  const auto m = testing::random_csr<double>(50, 50, 4, 9);
  for (const auto& b : every_backend()) {
    SCOPED_TRACE(b->name());
    auto writer = b->open_writer(info_of(any_csr(m)), arrays_of(m));
    writer->write(20);
    EXPECT_THROW(writer->write(10), error);
    EXPECT_THROW(writer->write(51), error);
    EXPECT_THROW(writer->finish(), error);  // rows 20 .. 50 missing
    writer->write(50);
    EXPECT_EQ(writer->finish()->info().nnz, m.nnz());
  }
}

}  // namespace
}  // namespace spgemm
