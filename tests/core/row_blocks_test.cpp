// Blocks of a stored matrix as a result stream fetches them: about the bytes
// asked for however unequal its rows (a power-law graph's hubs first), every
// row once and in order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/row_blocks.hpp"
#include "spgemm/backend.hpp"

namespace spgemmd::testing {
namespace {

// `rows` rows of `cols` columns: the first `heavy` rows of `heavy_length`
// entries, the rest of one.
spgemm::csr_matrix<double> skewed(int64_t rows, int64_t cols, int64_t heavy, int64_t heavy_length) {
  spgemm::csr_matrix<double> m;
  m.rows = rows;
  m.cols = cols;
  m.row_offsets.push_back(0);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t length = r < heavy ? heavy_length : 1;
    for (int64_t k = 0; k < length; ++k) {
      m.col_indices.push_back(static_cast<spgemm::index_t>(length == 1 ? r % cols : k));
      m.values.push_back(static_cast<double>(r) + 0.5 * static_cast<double>(k));
    }
    m.row_offsets.push_back(static_cast<spgemm::offset_t>(m.col_indices.size()));
  }
  return m;
}

std::vector<int64_t> block_rows(core::row_blocks& blocks, const spgemm::csr_matrix<double>& m,
                                std::size_t* largest) {
  std::vector<int64_t> firsts;
  int64_t next = 0;
  while (blocks.more()) {
    const core::row_blocks::block b = blocks.next();
    EXPECT_EQ(b.first_row, next);
    const auto& rows = std::get<spgemm::csr_matrix<double>>(*b.rows);
    for (int64_t r = 0; r < rows.rows; ++r) {
      const auto from = static_cast<std::size_t>(m.row_offsets[static_cast<std::size_t>(b.first_row + r)]);
      for (auto k = rows.row_offsets[static_cast<std::size_t>(r)]; k < rows.row_offsets[static_cast<std::size_t>(r) + 1];
           ++k) {
        const auto at = from + static_cast<std::size_t>(k - rows.row_offsets[static_cast<std::size_t>(r)]);
        EXPECT_EQ(rows.col_indices[static_cast<std::size_t>(k)], m.col_indices[at]);
        EXPECT_EQ(rows.values[static_cast<std::size_t>(k)], m.values[at]);
      }
    }
    *largest = std::max(*largest, spgemm::info_of(rows).bytes());
    firsts.push_back(b.first_row);
    next = b.first_row + rows.rows;
  }
  EXPECT_EQ(next, m.rows);
  return firsts;
}

TEST(row_blocks, unequal_rows_make_blocks_of_about_the_bytes_asked_for) {
  const auto cpu = spgemm::make_cpu_backend(1);
  // 200 rows of 2,000 entries (4.8 MB), then 100,000 rows of one (1.6 MB):
  // blocks of rows of the mean length would put nearly all of it in the first.
  const spgemm::csr_matrix<double> m = skewed(100200, 5000, 200, 2000);
  const std::size_t block_bytes = 256 << 10;
  core::row_blocks blocks(cpu, cpu->store(spgemm::any_csr(m)), block_bytes);
  std::size_t largest = 0;
  const std::vector<int64_t> firsts = block_rows(blocks, m, &largest);
  EXPECT_LE(largest, block_bytes + 64);
  const std::size_t total = spgemm::info_of(m).bytes();
  EXPECT_LE(firsts.size(), total / (block_bytes / 2) + 2);  // no crumbs either
}

TEST(row_blocks, a_row_larger_than_a_block_is_a_block_of_its_own) {
  const auto cpu = spgemm::make_cpu_backend(1);
  const spgemm::csr_matrix<double> m = skewed(50, 100000, 3, 90000);
  core::row_blocks blocks(cpu, cpu->store(spgemm::any_csr(m)), 64 << 10);
  std::size_t largest = 0;
  const std::vector<int64_t> firsts = block_rows(blocks, m, &largest);
  ASSERT_GE(firsts.size(), 4u);
  EXPECT_EQ(firsts[1], 1);
  EXPECT_EQ(firsts[2], 2);
  EXPECT_EQ(firsts[3], 3);
}

TEST(row_blocks, a_small_matrix_is_one_block) {
  const auto cpu = spgemm::make_cpu_backend(1);
  const spgemm::csr_matrix<double> m = skewed(1000, 100, 10, 50);
  core::row_blocks blocks(cpu, cpu->store(spgemm::any_csr(m)), 1 << 20);
  std::size_t largest = 0;
  EXPECT_EQ(block_rows(blocks, m, &largest).size(), 1u);
}

}  // namespace
}  // namespace spgemmd::testing
