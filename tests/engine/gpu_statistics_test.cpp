// What the GPU backend measures once per stored matrix for the planner
// (planner/statistics.hpp), against the host's rules, at every width of lanes
// a row takes (mean rows of 1 to 200 entries, rectangular and square): the
// mean distance of the entries from the diagonal, the longest row, and the
// sizes of dense blocks the matrix is made of. Skipped without a GPU.
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "gpu/cuda_stored_matrix.hpp"
#include "planner/block_structure.hpp"
#include "planner/job_rules.hpp"
#include "spgemm/generate.hpp"
#include "gpu_test_support.hpp"
#include "test_matrices.hpp"

namespace spgemm {
namespace {

using testing::gpu;

const gpu::cuda_stored_matrix& on_gpu(const std::shared_ptr<stored_matrix>& m) {
  return dynamic_cast<const gpu::cuda_stored_matrix&>(*m);
}

double mean_distance(const csr_matrix<double>& m) {
  double sum = 0;
  for (std::int64_t r = 0; r < m.rows; ++r)
    for (offset_t k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k)
      sum += planner::diagonal_offset(r, m.col_indices[k], m.rows, m.cols);
  return m.nnz() > 0 ? sum / static_cast<double>(m.nnz()) : 0.0;
}

TEST(GpuStatistics, RowShapeAtEveryLaneWidth) {
  SPGEMM_REQUIRE_GPU();
  for (std::int64_t length : {1, 3, 7, 30, 200}) {
    for (std::int64_t cols : {std::int64_t{5000}, std::int64_t{700}}) {
      SCOPED_TRACE(std::to_string(length) + " entries a row at most, " + std::to_string(cols) + " columns");
      const csr_matrix<double> a = testing::random_csr<double>(3000, cols, length, 300 + length);
      const auto s = gpu().store(a);
      const planner::row_stats& stats = on_gpu(s).row_stats(nullptr);
      std::int64_t longest = 0;
      for (std::int64_t r = 0; r < a.rows; ++r) longest = std::max<std::int64_t>(longest, a.row_length(r));
      EXPECT_EQ(stats.max_row_length, longest);
      EXPECT_NEAR(stats.diagonal_distance, mean_distance(a), 1e-6);
    }
  }
}

// Rows as long as the row before, their first and last columns the same
// (empty rows after empty rows too) or each one further
// (planner::row_stats::same_candidates, shifted_candidates).
std::pair<std::int64_t, std::int64_t> repeat_candidates(const csr_matrix<double>& m) {
  std::int64_t same = 0;
  std::int64_t shifted = 0;
  for (std::int64_t r = 1; r < m.rows; ++r) {
    const std::int64_t len = m.row_length(r);
    if (len != m.row_length(r - 1)) continue;
    if (len == 0) {
      ++same;
      continue;
    }
    const index_t step = m.col_indices[m.row_offsets[r]] - m.col_indices[m.row_offsets[r - 1]];
    if (m.col_indices[m.row_offsets[r + 1] - 1] - m.col_indices[m.row_offsets[r] - 1] != step) continue;
    same += step == 0 ? 1 : 0;
    shifted += step == 1 ? 1 : 0;
  }
  return {same, shifted};
}

TEST(GpuStatistics, RepeatCandidates) {
  SPGEMM_REQUIRE_GPU();
  const auto runs = testing::with_lengths<double>(900, 400, {0, 0, 3, 3}, 6);
  for (const char* spec : {"poisson3d7:12", "femblocks:6:3", "er:2000:4", ""}) {
    SCOPED_TRACE(spec);
    const csr_matrix<double> a = *spec != 0 ? testing::with_random_values(generate(spec), 5) : runs;
    const planner::row_stats stats = on_gpu(gpu().store(a)).row_stats(nullptr);
    const auto [same, shifted] = repeat_candidates(a);
    EXPECT_EQ(stats.same_candidates, same);
    EXPECT_EQ(stats.shifted_candidates, shifted);
  }
}

TEST(GpuStatistics, BlockSizesAtEveryLaneWidth) {
  SPGEMM_REQUIRE_GPU();
  for (int b : {2, 3, 6}) {
    for (std::int64_t blocks : {1, 4, 30}) {
      SCOPED_TRACE(std::to_string(b) + " x " + std::to_string(b) + " blocks, up to " + std::to_string(blocks) +
                   " a block row");
      csr_matrix<double> a = testing::random_blocked<double>(600, 600, b, blocks, 400 + b * 100 + blocks);
      EXPECT_EQ(on_gpu(gpu().store(a)).block_sizes(nullptr), planner::detect_sizes(a));
      // One entry moved a column to the right in the last row that has room: blocked no more.
      std::int64_t row = a.rows - 1;
      while (row > 0 && (a.row_length(row) == 0 || a.col_indices[a.row_offsets[row + 1] - 1] + 1 >= a.cols)) --row;
      ++a.col_indices[a.row_offsets[row + 1] - 1];
      EXPECT_EQ(on_gpu(gpu().store(a)).block_sizes(nullptr), planner::detect_sizes(a));
    }
  }
}

// The row shape and the block sizes are measured in one pass whichever is
// asked for first; after adopted row stats, the block sizes alone.
TEST(GpuStatistics, RowShapeAndBlockSizesInEitherOrder) {
  SPGEMM_REQUIRE_GPU();
  for (int b : {1, 3}) {
    SCOPED_TRACE(std::to_string(b) + " x " + std::to_string(b) + " blocks");
    const csr_matrix<double> a = b == 1 ? testing::random_csr<double>(1200, 900, 12, 77)
                                        : testing::random_blocked<double>(400, 300, b, 6, 78);
    std::int64_t longest = 0;
    for (std::int64_t r = 0; r < a.rows; ++r) longest = std::max<std::int64_t>(longest, a.row_length(r));
    const planner::size_mask sizes = planner::detect_sizes(a);

    const auto rows_first = gpu().store(a);
    EXPECT_EQ(on_gpu(rows_first).row_stats(nullptr).max_row_length, longest);
    EXPECT_EQ(on_gpu(rows_first).block_sizes(nullptr), sizes);

    const auto blocks_first = gpu().store(a);
    EXPECT_EQ(on_gpu(blocks_first).block_sizes(nullptr), sizes);
    EXPECT_EQ(on_gpu(blocks_first).row_stats(nullptr).max_row_length, longest);
    EXPECT_NEAR(on_gpu(blocks_first).row_stats(nullptr).diagonal_distance, mean_distance(a), 1e-6);

    const auto adopted = gpu().store(a);
    on_gpu(adopted).adopt_row_stats(on_gpu(rows_first).row_stats(nullptr));
    EXPECT_EQ(on_gpu(adopted).block_sizes(nullptr), sizes);
    EXPECT_EQ(on_gpu(adopted).row_stats(nullptr).max_row_length, longest);
  }
}

}  // namespace
}  // namespace spgemm
