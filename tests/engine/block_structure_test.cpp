// The rule for dense b x b block structure (engine/planner/block_structure.hpp),
// on the CPU: the host detection the GPU kernel mirrors, the common size of a
// product, and that the CPU reference keeps a blocked product blocked (every
// structural entry, so the block method's b * b entries per block agree with
// it); and the block method's numeric tuning (engine/block/block_tuning.hpp).
#include <gtest/gtest.h>

#include "block/block_tuning.hpp"
#include "planner/block_structure.hpp"
#include "spgemm/generate.hpp"
#include "spgemm/reference.hpp"
#include "test_matrices.hpp"

namespace spgemm::planner {
namespace {

constexpr size_mask bit(int b) { return 1u << b; }

TEST(BlockRule, GeneratorsAndRandomBlockedMatrices) {
  // Elasticity: 3 unknowns per node, node-major. Pairs and sextets of rows
  // belong to different nodes, so neither 2 nor 6 holds.
  EXPECT_EQ(detect_sizes(generate("elasticity3d:4")), bit(3));
  EXPECT_EQ(detect_sizes(generate("elasticity3d:3")), bit(3));
  // Scalar stencils: no blocks.
  EXPECT_EQ(detect_sizes(generate("poisson3d7:8")), 0u);
  EXPECT_EQ(detect_sizes(generate("poisson2d9:12")), 0u);
  EXPECT_EQ(detect_sizes(testing::random_csr<double>(60, 60, 12, 1)), 0u);
  // Random block patterns, square and rectangular, empty block rows among them.
  EXPECT_EQ(detect_sizes(testing::random_blocked<double>(40, 30, 2, 6, 2)), bit(2));
  EXPECT_EQ(detect_sizes(testing::random_blocked<float>(40, 30, 3, 6, 3)), bit(3));
  EXPECT_EQ(detect_sizes(testing::random_blocked<double>(17, 50, 4, 9, 4)), bit(4) | bit(2));
  EXPECT_EQ(detect_sizes(testing::random_blocked<double>(20, 10, 6, 5, 5)), bit(6) | bit(3) | bit(2));
  EXPECT_EQ(largest_size(bit(6) | bit(3) | bit(2)), 6);
  EXPECT_EQ(largest_size(0), 1);
}

TEST(BlockRule, ShapeAndEmptyMatrices) {
  // A matrix without entries has every size its shape allows.
  EXPECT_EQ(detect_sizes(testing::empty_csr<double>(12, 18)), bit(6) | bit(3) | bit(2));
  EXPECT_EQ(detect_sizes(testing::empty_csr<double>(8, 4)), bit(4) | bit(2));
  EXPECT_EQ(detect_sizes(testing::empty_csr<double>(0, 0)), bit(6) | bit(4) | bit(3) | bit(2));
  EXPECT_EQ(detect_sizes(testing::empty_csr<double>(7, 6)), 0u);
  EXPECT_EQ(shape_candidates(12, 12, 36 * 5), bit(6) | bit(3) | bit(2));
  EXPECT_EQ(shape_candidates(12, 12, 9 * 3), bit(3));  // nnz a multiple of b * b
  EXPECT_EQ(shape_candidates(12, 10, 4), bit(2));
}

TEST(BlockRule, OneEntryOffBreaksTheRule) {
  const auto blocked = testing::random_blocked<double>(30, 30, 3, 8, 6);
  ASSERT_EQ(detect_sizes(blocked), bit(3));
  // The last entry of a row moved one column right: groups no longer aligned
  // (same nnz, columns still sorted).
  std::int64_t row = 0;
  while (blocked.row_length(row) == 0 || blocked.col_indices[blocked.row_offsets[row + 1] - 1] + 1 >= blocked.cols) ++row;
  auto shifted = blocked;
  ++shifted.col_indices[shifted.row_offsets[row + 1] - 1];
  EXPECT_EQ(detect_sizes(shifted), 0u);
  // The second row of a block row with its last block elsewhere: aligned
  // groups, but the rows of the block row differ.
  std::int64_t block_row = 0;
  while (blocked.row_length(3 * block_row) == 0 ||
         blocked.col_indices[blocked.row_offsets[3 * block_row + 1] - 1] + 3 >= blocked.cols)
    ++block_row;
  auto moved = blocked;
  const offset_t end = moved.row_offsets[3 * block_row + 2];
  for (offset_t k = end - 3; k < end; ++k) moved.col_indices[k] += 3;
  EXPECT_EQ(detect_sizes(moved), 0u);
  // One entry fewer: the shape rules b out (nnz no longer a multiple of 9).
  auto fewer = blocked;
  fewer.col_indices.pop_back();
  fewer.values.pop_back();
  --fewer.row_offsets.back();
  EXPECT_EQ(detect_sizes(fewer), 0u);
}

TEST(BlockRule, CommonSizeOfAProduct) {
  EXPECT_EQ(common_size(bit(6) | bit(3) | bit(2), bit(3)), 3);
  EXPECT_EQ(common_size(bit(6) | bit(3) | bit(2), bit(4) | bit(2)), 2);
  EXPECT_EQ(common_size(bit(4) | bit(2), bit(3)), 1);
  EXPECT_EQ(common_size(bit(3), 0), 1);
}

TEST(BlockRule, TheReferenceProductOfBlockedOperandsIsBlocked) {
  for (const int b : {2, 3, 6}) {
    SCOPED_TRACE(b);
    const auto a = testing::random_blocked<double>(25, 18, b, 5, 10 + b);
    const auto c = cpu_multiply(a, testing::random_blocked<double>(18, 31, b, 4, 20 + b));
    EXPECT_TRUE(detect_sizes(c) & bit(b));
  }
}

}  // namespace
}  // namespace spgemm::planner

namespace spgemm::block {
namespace {

TEST(BlockRule, NumericTuning) {
  EXPECT_EQ(group_lanes(0), min_group);
  EXPECT_EQ(group_lanes(8), 8);
  EXPECT_EQ(group_lanes(9), 16);
  EXPECT_EQ(group_lanes(27), 32);  // elasticity
  EXPECT_EQ(group_lanes(5000), 32);
  // elasticity, f64 on an H100: a block row of C (125 blocks) fits; a
  // block of 128 threads takes at most half the shared memory.
  const std::size_t h100 = 232448 - 1024;
  const int rows32 = rows_per_block(32, 1), rows8 = rows_per_block(8, 1);
  EXPECT_EQ(rows32, 4);
  EXPECT_EQ(shared_blocks(125, 3, 8, rows32, h100), 125);
  EXPECT_LE(numeric_shared_bytes(shared_blocks(100000, 3, 8, rows32, h100), 3, 8, rows32), h100 / 2);
  EXPECT_LE(numeric_shared_bytes(shared_blocks(100000, 6, 8, rows8, h100), 6, 8, rows8), h100 / 2);
  EXPECT_EQ(numeric_shared_bytes(0, 3, 8, rows32), 0u);
}

// Scalar rows split only where their groups leave the GPU idle, into ranges
// of at least min_split_positions of C's mean row, one row's groups in a block.
TEST(BlockRule, ScalarRowsSplitWhereFewAndLong) {
  const std::int64_t h100_threads = 132 * 2048;
  EXPECT_EQ(scalar_splits(1000000, 25, 8, h100_threads), 1);  // a fine level: rows enough
  EXPECT_EQ(scalar_splits(600, 400, 32, h100_threads), 16);   // a coarse level: 600 * 32 * 16 fill the GPU
  EXPECT_EQ(scalar_splits(300, 200, 32, h100_threads), 8);    // ranges of 25 positions
  EXPECT_EQ(scalar_splits(300, 4000, 32, h100_threads), 32);  // one row's groups fill a block
  EXPECT_EQ(scalar_splits(600, 20, 32, h100_threads), 1);     // short rows stay whole
  EXPECT_EQ(scalar_splits(4000, 4000, 32, h100_threads), 4);
  EXPECT_EQ(block_threads(32, 32), max_numeric_threads);
  EXPECT_EQ(rows_per_block(32, 32), 1);
  EXPECT_EQ(rows_per_block(1, 1), numeric_threads);
  EXPECT_EQ(rows_per_block(8, 4), 4);
}

}  // namespace
}  // namespace spgemm::block
