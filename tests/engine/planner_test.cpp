// The planner's host-only rules (engine/planner/job_rules.hpp, row_bins.hpp), on the CPU.
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "planner/job_rules.hpp"
#include "planner/row_bins.hpp"

namespace spgemm::planner {
namespace {

TEST(Planner, SymbolicBins) {
  const limits lim;  // 32768 symbolic, 16384 numeric
  EXPECT_EQ(symbolic_bin(0, 0, 100, lim), bin_none);
  EXPECT_EQ(symbolic_bin(5, 0, 100, lim), bin_none);
  EXPECT_EQ(symbolic_bin(1, 7, 100, lim), bin_copy);
  EXPECT_EQ(symbolic_bin(2, 1, 100, lim), first_table_bin);       // 32 slots
  EXPECT_EQ(symbolic_bin(2, 26, 100000, lim), first_table_bin);   // 32: load at most 0.8 (26 + 26 / 4)
  EXPECT_EQ(symbolic_bin(2, 27, 100000, lim), first_table_bin + 1);  // 64
  EXPECT_EQ(symbolic_bin(2, 51, 100000, lim), first_table_bin + 1);  // 64
  EXPECT_EQ(symbolic_bin(2, 52, 100000, lim), first_table_bin + 2);  // 128
  EXPECT_EQ(table_of_bin(symbolic_bin(3, 729, 100000, lim)), 1024);  // poisson3d27
  EXPECT_EQ(table_of_bin(symbolic_bin(3, 32768, 100000, lim)), 32768);
  EXPECT_EQ(symbolic_bin(3, 32769, 100000, lim), dense_bin(lim.symbolic_max_table));
  // Long rows of A take a block table (1024 slots) at least.
  EXPECT_EQ(table_of_bin(symbolic_bin(129, 200, 100000, lim)), 1024);
  EXPECT_EQ(table_of_bin(symbolic_bin(128, 200, 100000, lim)), 256);
  EXPECT_EQ(table_of_bin(numeric_bin(500, 100, lim)), 1024);
  // Columns of B cap the distinct columns.
  EXPECT_EQ(table_of_bin(symbolic_bin(3, 1000000, 300, lim)), 512);
  // Table bins, dense, then the segment bins, with no bin between them.
  EXPECT_EQ(dense_bin(32768) + 1, first_segment_bin);
  EXPECT_EQ(first_segment_bin + segment_bin_count, max_bins);
}

TEST(Planner, SegmentRowsAreDenseInTheColumnsOfB) {
  limits lim;
  lim.segment_rows = true;
  EXPECT_TRUE(is_segment_bin(symbolic_bin(40, 1024, 65536, lim)));  // bound 1/64 of the columns
  EXPECT_FALSE(is_segment_bin(symbolic_bin(40, 1023, 65536, lim)));  // too sparse
  EXPECT_FALSE(is_segment_bin(symbolic_bin(40, 1000, 100000, lim)));  // under segment_min_bound
  EXPECT_TRUE(is_segment_bin(symbolic_bin(40, 250, 1000, lim)));  // narrow B: a quarter of its columns
  EXPECT_FALSE(is_segment_bin(symbolic_bin(40, 249, 1000, lim)));
  EXPECT_TRUE(is_segment_bin(symbolic_bin(40, 5000000, 4000, lim)));  // bound capped by the columns
  EXPECT_EQ(symbolic_bin(1, 5000, 4000, lim), bin_copy);             // one entry of A: a copy
  EXPECT_EQ(segments_of(segment_width), 1);
  EXPECT_EQ(segments_of(segment_width + 1), 2);
  // The table of segment starts: segments + 1 ints per row of B, at most 16
  // bytes per entry of A and B, and at most max_segments segments.
  EXPECT_TRUE(segment_table_fits(1000, 4 * segment_width, 500, 750));     // 20000 bytes, 20000 allowed
  EXPECT_FALSE(segment_table_fits(1000, 4 * segment_width, 500, 749));
  EXPECT_FALSE(segment_table_fits(10, segment_width * (max_segments + 1), 1 << 20, 1 << 20));
  // A segment row keeps its bin in the numeric pass while its exact nnz is dense
  // in B's columns; a sparse one takes its table; other rows the table of their nnz.
  EXPECT_EQ(numeric_bin(first_segment_bin, 40, 2000, 4000, lim), first_segment_bin);
  EXPECT_EQ(numeric_bin(first_segment_bin + 1, 67, 294, 8738, lim), first_segment_bin + 1);  // under the least bound
  EXPECT_EQ(numeric_bin(first_segment_bin + 3, 176, 50, 27063, lim), numeric_bin(176, 50, lim));
  EXPECT_EQ(numeric_bin(first_table_bin + 2, 8, 50, 27063, lim), numeric_bin(8, 50, lim));
  // Segment rows by their products, the heaviest in the first bin.
  EXPECT_EQ(segment_bin_of(250), first_segment_bin + segment_bin_count - 1);
  EXPECT_EQ(segment_bin_of(2047), first_segment_bin + segment_bin_count - 1);
  EXPECT_EQ(segment_bin_of(2048), first_segment_bin + segment_bin_count - 2);
  EXPECT_EQ(segment_bin_of(std::int64_t{1} << 17), first_segment_bin);
  EXPECT_EQ(segment_bin_of(std::int64_t{1} << 40), first_segment_bin);
  EXPECT_EQ(symbolic_bin(40, 5000000, 4000, lim), first_segment_bin);
  lim.segment_rows = false;  // no room for the accumulator
  EXPECT_FALSE(is_segment_bin(symbolic_bin(40, 1024, 65536, lim)));
  EXPECT_TRUE(limits_for(232448 - 1024, 8).segment_rows);
  EXPECT_FALSE(limits_for(48 * 1024, 8).segment_rows);
  // The symbolic pass holds a bit per column of B: 128 KiB at max_segments,
  // within the H100's 227 KB.
  EXPECT_EQ(segment_symbolic_shared_bytes(max_segments * segment_width), 128u * 1024 + 16 * segment_block_threads);
  EXPECT_LE(segment_symbolic_shared_bytes(max_segments * segment_width), 232448u - 1024);
  EXPECT_EQ(segment_symbolic_shared_bytes(1), segment_width / 8 + 16u * segment_block_threads);
}

TEST(Planner, NumericBinsKeepLoadAtMostFourFifths) {
  const limits lim;
  EXPECT_EQ(numeric_bin(4, 0, lim), bin_none);
  EXPECT_EQ(numeric_bin(1, 9, lim), bin_copy);
  for (std::int64_t nnz = 1; nnz <= 20000; nnz += 37) {
    const int bin = numeric_bin(3, nnz, lim);
    if (bin == dense_bin(lim.numeric_max_table)) {
      EXPECT_GT(nnz + nnz / 4, lim.numeric_max_table);
      continue;
    }
    const int table = table_of_bin(bin);
    EXPECT_GE(table, nnz + nnz / 4);
    EXPECT_TRUE(table == smallest_table || table / 2 < nnz + nnz / 4) << nnz;
  }
  EXPECT_LT(dense_bin(lim.symbolic_max_table), max_bins);
}

TEST(Planner, TableConfigsFitSharedMemory) {
  const std::size_t h100 = 232448 - 1024;
  const limits f64 = limits_for(h100, 8);
  EXPECT_EQ(f64.numeric_max_table, 16384);
  EXPECT_EQ(f64.symbolic_max_table, 32768);
  for (int table = smallest_table; table <= f64.numeric_max_table; table *= 2) {
    const table_config c = config_for_table(table, 8);
    EXPECT_LE(c.shared_bytes, h100) << table;
    EXPECT_EQ(c.warp_per_row, table <= warp_max_table);
    EXPECT_EQ(c.block_threads % 32, 0);
  }
  // Tables of f32 values from 8,192 slots take 8 bytes a slot for them (their write-out by rank
  // holds an f64 table's spans), and still reach 16,384 slots; smaller, warp and symbolic tables
  // keep their own sizes.
  EXPECT_EQ(limits_for(h100, 4).numeric_max_table, 16384);
  EXPECT_EQ(config_for_table(8192, 4).shared_bytes, 8192u * (4 + 8) + 1024u * (16 + 4) + 1024u * 4);
  EXPECT_EQ(config_for_table(4096, 4).shared_bytes, 4096u * (4 + 4) + 512u * (16 + 4) + 512u * 4);
  EXPECT_EQ(config_for_table(512, 4).shared_bytes, 8u * (512 * (4 + 4) + 32 * (16 + 4) + 32 * 4));
  EXPECT_EQ(config_for_table(8192, 0).shared_bytes, 8192u * 4 + 1024u * 16);
  // A GPU with 99 KB per block gets smaller tables.
  const limits small = limits_for(99 * 1024, 8);
  EXPECT_LT(small.numeric_max_table, 16384);
  EXPECT_LE(config_for_table(small.numeric_max_table, 8).shared_bytes, 99u * 1024);
}

TEST(Planner, FusedLaunchesForSmallProducts) {
  const std::int64_t fuse_max_products = tuning{}.fuse_max_products;
  EXPECT_TRUE(fuse_table_bins(fuse_max_products, fuse_max_products));
  EXPECT_FALSE(fuse_table_bins(fuse_max_products + 1, fuse_max_products));
  EXPECT_FALSE(fuse_table_bins(1, 0));  // 0 turns fusion off
  // Block rows for bins of at most the given rows and tables of a slot per
  // thread or more; warp rows for the rest up to warp_max_table.
  EXPECT_FALSE(fused_warp_rows(fused_block_threads, 10, 10));
  EXPECT_TRUE(fused_warp_rows(fused_block_threads, 11, 10));
  EXPECT_TRUE(fused_warp_rows(fused_block_threads / 2, 1, 10));
  EXPECT_TRUE(fused_warp_rows(warp_max_table, 100, 10));
  EXPECT_FALSE(fused_warp_rows(2 * warp_max_table, 100, 10));
  EXPECT_EQ(fused_max_table % fused_block_threads, 0);
}

TEST(Planner, DenseBlocksStayInBudget) {
  EXPECT_EQ(dense_blocks(0, 1000, 8, 1 << 30, 132), 0);
  EXPECT_EQ(dense_blocks(5, 1000, 8, 1 << 30, 132), 5);
  EXPECT_EQ(dense_blocks(5000, 1000, 8, std::size_t{1} << 30, 132), dense_blocks_per_sm * 132);
  const std::size_t per = dense_bytes_per_block(262144, 8);
  EXPECT_EQ(dense_blocks(5000, 262144, 8, 10 * per, 132), 10);
  EXPECT_EQ(dense_blocks(5000, 262144, 8, per / 2, 132), 1);  // at least one
}

job_stats stats(std::int64_t rows, std::int64_t nnz, std::int64_t max_len, std::int64_t products,
                std::int64_t max_products) {
  job_stats s;
  s.rows = rows;
  s.nnz_a = nnz;
  s.max_row_length = max_len;
  s.products = products;
  s.max_row_products = max_products;
  s.b_cols = rows;
  s.nnz_c_bound = products;
  return s;
}

// The shape of A's rows those statistics describe (B not empty where products > 0).
choice choose_method(const job_stats& s) {
  return planner::choose_method(row_shape{s.rows, s.nnz_a, s.max_row_length, s.products == 0});
}

TEST(Planner, ChoosesRmergeForShortRowsAndHashForTheRest) {
  // poisson3d27:64: rows of 8..27, 729 products at most.
  EXPECT_EQ(choose_method(stats(262144, 6859000, 27, 179000000, 729)).algo, algorithm::rmerge);
  // poisson3d7:100.
  EXPECT_EQ(choose_method(stats(1000000, 6940000, 7, 48200000, 49)).algo, algorithm::rmerge);
  // rmat:16:16: skewed, long rows, 6,100 products per row.
  EXPECT_EQ(choose_method(stats(65536, 960000, 9000, 401000000, 2000000)).algo, algorithm::hash);
  // email-Enron: short mean length, long tail, 1,400 products per row.
  EXPECT_EQ(choose_method(stats(36692, 367662, 1383, 51500000, 600000)).algo, algorithm::hash);
  // web-NotreDame: 200 products per row.
  EXPECT_EQ(choose_method(stats(325729, 1497134, 3445, 64500000, 500000)).algo, algorithm::hash);
  // wiki-Vote: long rows, a small product.
  EXPECT_EQ(choose_method(stats(8297, 103689, 893, 4540000, 90000)).algo, algorithm::hash);
  // rmat:17:16 and rmat:18:16: very large products.
  EXPECT_EQ(choose_method(stats(131072, 1940000, 20000, 1090000000, 5000000)).algo, algorithm::hash);
  EXPECT_EQ(choose_method(stats(262144, 3941447, 40000, 2930000000, 9000000)).algo, algorithm::hash);
  EXPECT_EQ(choose_method(job_stats{}).algo, algorithm::hash);
  // hep-th: short but skewed rows (longest 50, mean 3.8).
  EXPECT_EQ(choose_method(stats(8361, 31502, 50, 274000, 713)).algo, algorithm::hash);
  // cage11: regular rows (longest 33, mean 14.3).
  EXPECT_EQ(choose_method(stats(39082, 559722, 33, 8800000, 1089)).algo, algorithm::rmerge);
  // ct2010: short rows up to 10.6 times the mean (5.0, longest 53).
  EXPECT_EQ(choose_method(stats(67578, 336352, 53, 2250000, 1300)).algo, algorithm::hash);
  // fe_body: 3.9 times (7.3, longest 28).
  EXPECT_EQ(choose_method(stats(45087, 327680, 28, 2630000, 600)).algo, algorithm::rmerge);
}

TEST(Planner, ChoosesTheBlockMethodForOperandsOfDenseBlocks) {
  // elasticity3d:40: 3x3 blocks, rows of 81 entries.
  row_shape elasticity{192000, 14787288, 81, false, 3};
  EXPECT_EQ(planner::choose_method(elasticity).algo, algorithm::block);
  // 2x2 blocks win as well (measured on the H100, docs/planner.md).
  EXPECT_EQ(planner::choose_method(row_shape{65536, 3322336, 54, false, 2}).algo, algorithm::block);
  // Long block rows too: the block product picks its own method.
  EXPECT_EQ(planner::choose_method(row_shape{6000, 900000, 3000, false, 6}).algo, algorithm::block);
  // Without a common block size the rules of A's row shape apply.
  elasticity.block_size = 1;
  EXPECT_EQ(planner::choose_method(elasticity).algo, algorithm::rmerge);
  // An empty product stays trivial.
  EXPECT_EQ(planner::choose_method(row_shape{12, 0, 0, true, 6}).algo, algorithm::hash);
}

TEST(Planner, SemiringsAndMasksRunOnTheMethodsThatTakeThem) {
  // Another semiring: the hash method, whatever the rows (RMerge and the
  // block method run plus-times only).
  row_shape cage11{39082, 559722, 33, false, 1, false};
  EXPECT_EQ(planner::choose_method(cage11).algo, algorithm::hash);
  cage11.plus_times = true;
  EXPECT_EQ(planner::choose_method(cage11).algo, algorithm::rmerge);
  EXPECT_EQ(planner::choose_method(row_shape{192000, 14787288, 81, false, 3, false}).algo, algorithm::hash);
  // C<M>: a dot product per entry of M; C<!M>: ESC dropping what M forbids.
  EXPECT_EQ(planner::choose_masked_method(false).algo, algorithm::dot);
  EXPECT_EQ(planner::choose_masked_method(true).algo, algorithm::esc);
}

// A row shape with B's and the device's figures.
row_shape with_b(row_shape s, std::int64_t b_rows, std::int64_t b_cols, std::int64_t nnz_b, int sm_count = 132) {
  s.b_rows = b_rows;
  s.b_cols = b_cols;
  s.nnz_b = nnz_b;
  s.sm_count = sm_count;
  return s;
}

TEST(Planner, ChoosesRmergeWhereRowsOfAAreLongerThanANarrowBIsWide) {
  // nw04 * nw04^T: 36 rows of 17,700 entries; B = A^T, 87,482 rows of 7.3 entries, 36 columns.
  EXPECT_EQ(planner::choose_method(with_b({36, 636666, 42032, false, 1}, 87482, 36, 636666)).algo, algorithm::rmerge);
  // fast0507 * fast0507^T: rows of 807 entries into 507 columns.
  EXPECT_EQ(planner::choose_method(with_b({507, 409349, 7753, false, 1}, 63009, 507, 409349)).algo,
            algorithm::rmerge);
  // mbeacxc: rows of 100 entries into 496 columns: the hash method (its rows are longer than 128).
  EXPECT_EQ(planner::choose_method(with_b({496, 49920, 484, false, 1}, 496, 496, 49920)).algo, algorithm::hash);
  // pilot87 * pilot87^T: rows of 36 entries into 2,030 columns.
  EXPECT_EQ(planner::choose_method(with_b({2030, 73152, 383, false, 1}, 6680, 2030, 73152)).algo, algorithm::hash);
  // bcsstk13: rows of 42 into 2,003 columns, 15 rows per SM.
  EXPECT_EQ(planner::choose_method(with_b({2003, 83883, 95, false, 1}, 2003, 2003, 83883)).algo, algorithm::hash);
  // Rows as long as B is wide, but B wider than the rule's limit: A's row shape decides.
  EXPECT_EQ(planner::choose_method(
                with_b({36, 36 * (narrow_b_max_columns + 1), 42032, false, 1}, 87482, narrow_b_max_columns + 1, 636666))
                .algo,
            algorithm::hash);
  // Blocks first.
  EXPECT_EQ(planner::choose_method(with_b({496, 49920, 484, false, 2}, 496, 496, 49920)).algo, algorithm::block);
}

TEST(Planner, ChoosesRmergeForRegularLongRowsInALocalOrder) {
  // The method for `s` with A's entries `distance` of the matrix off the diagonal (< 0: unknown).
  const auto at = [](row_shape s, double distance) {
    s.a_diagonal_distance = distance;
    return planner::choose_method(s).algo;
  };
  // R (A P) of poisson3d27:101's first level: 27,063 rows of 176 entries (up to 343) over A P's
  // 1,030,301 rows of 12, 0.01 of the matrix off the diagonal.
  const row_shape rap = with_b({27063, 4752771, 343, false, 1}, 1030301, 27063, 12173792);
  EXPECT_EQ(at(rap, 0.01), algorithm::rmerge);
  // Long rows of B with rows enough for the levels: femblocks:30:6 squared, 94,702 rows of 89
  // entries (up to 131), 717 per SM.
  const row_shape fem = with_b({94702, 8470570, 131, false, 1}, 94702, 94702, 8470570);
  EXPECT_EQ(at(fem, 0.02), algorithm::rmerge);
  // Too few of them (bcsstk33 squared: 66 rows per SM), scattered rows (bio-CE-CX: 0.16), skewed
  // rows (email-Enron) or an unknown distance: the hash method.
  EXPECT_EQ(at(with_b({8738, 583166, 140, false, 1}, 8738, 8738, 583166), 0.03), algorithm::hash);
  EXPECT_EQ(at(with_b(fem, 94702, 94702, 8470570, 94702 / 100), 0.02), algorithm::hash);
  EXPECT_EQ(at(rap, 0.16), algorithm::hash);
  EXPECT_EQ(at(with_b({36692, 367662, 1383, false, 1}, 36692, 36692, 367662), 0.03), algorithm::hash);
  EXPECT_EQ(at(rap, -1), algorithm::hash);
  // Too few rows for RMerge's 32-lane sub-warps (394 rows: poisson3d27:101's second level).
  EXPECT_EQ(at(with_b({394, 152312, 600, false, 1}, 27063, 394, 410203), 0.01), algorithm::hash);
}

TEST(Planner, RmergeLevelsNeedRowsByTheLengthOfBsRows) {
  const auto local = [](row_shape s) {
    s.a_diagonal_distance = 0.02;
    return planner::choose_method(s).algo;
  };
  // The coarse Galerkin products of poisson3d7:101, 82 rows per SM: R (A P) over rows of 40 and
  // A P over rows of 24 take RMerge's levels.
  EXPECT_EQ(local(with_b({10838, 1101533, 250, false, 1}, 101442, 10838, 4093536)), algorithm::rmerge);
  EXPECT_EQ(local(with_b({10838, 1585020, 300, false, 1}, 10838, 608, 262000)), algorithm::rmerge);
  // Rows of B past local_b_medium_mean_row need rmerge_levels_min_rows_per_sm: R (A P) of
  // poisson3d27:101 (34 per SM over rows of 78) and bcsstk33 squared (66 over 67) take hash.
  EXPECT_EQ(local(with_b({4429, 514220, 300, false, 1}, 27063, 4429, 2118247)), algorithm::hash);
  EXPECT_EQ(local(with_b({8738, 583166, 140, false, 1}, 8738, 8738, 583166)), algorithm::hash);
  // Rows per SM at the boundary of each step.
  const std::int64_t medium = rmerge_levels_min_rows_per_sm_medium_b * 132;
  const auto b_of_mean = [](row_shape s, std::int64_t mean) { return with_b(s, 100000, 100000, 100000 * mean); };
  EXPECT_EQ(local(b_of_mean({medium, medium * 100, 200, false, 1}, 48)), algorithm::rmerge);
  EXPECT_EQ(local(b_of_mean({medium - 1, (medium - 1) * 100, 200, false, 1}, 48)), algorithm::hash);
  EXPECT_EQ(local(b_of_mean({medium, medium * 100, 200, false, 1}, 49)), algorithm::hash);
}

TEST(Planner, RmergeForSmallProductsOfFewRows) {
  // R (A P) of poisson2d5:1024's third level: 1,449 rows of 47 (up to 90) over rows of 19, 1.3
  // million products expected: RMerge's fixed costs are the lower.
  const choice c = planner::choose_method(with_b({1449, 68258, 90, false, 1}, 14996, 1449, 284860));
  EXPECT_EQ(c.algo, algorithm::rmerge);
  EXPECT_EQ(c.reason, "few rows of A in a small product: RMerge's fixed costs are the lower");
  // bcsstk13 squared (3.5 million) keeps the hash method's block tables.
  EXPECT_EQ(planner::choose_method(with_b({2003, 83883, 95, false, 1}, 2003, 2003, 83883)).algo, algorithm::hash);
  // Many rows: the rule before decides.
  EXPECT_EQ(planner::choose_method(with_b({100000, 5000000, 90, false, 1}, 100000, 100000, 500000)).reason,
            "regular rows of A that fit one merge pass");
}

TEST(Planner, HashWhereRmergeWouldRunFewWideSubwarps) {
  // bcsstk13: 2003 rows of up to 95 entries (32-lane sub-warps), 15 rows per SM.
  const row_shape bcsstk13 = with_b({2003, 83883, 95, false, 1}, 2003, 2003, 83883);
  EXPECT_EQ(planner::choose_method(bcsstk13).algo, algorithm::hash);
  // bcsstk16: 4884 rows of up to 81 entries, 37 per SM.
  EXPECT_EQ(planner::choose_method(with_b({4884, 290378, 81, false, 1}, 4884, 4884, 290378)).algo,
            algorithm::rmerge);
  // bcsstk15: rows of up to 44 entries take 16-lane sub-warps.
  EXPECT_EQ(planner::choose_method(with_b({3948, 117816, 44, false, 1}, 3948, 3948, 117816)).algo,
            algorithm::rmerge);
  // Where the device is unknown, the shape of A's rows decides alone.
  row_shape unknown = bcsstk13;
  unknown.sm_count = 0;
  EXPECT_EQ(planner::choose_method(unknown).algo, algorithm::rmerge);
}

// A square operand's row shape with its diagonal distance, B = A.
row_shape square(std::int64_t rows, std::int64_t nnz, std::int64_t max_len, double diagonal) {
  row_shape s = with_b({rows, nnz, max_len, false, 1}, rows, rows, nnz);
  s.a_diagonal_distance = diagonal;
  return s;
}

TEST(Planner, DiagonalOffsetIsTheShareOfTheMatrixOffTheDiagonal) {
  EXPECT_DOUBLE_EQ(diagonal_offset(0, 0, 10, 10), 0);
  EXPECT_DOUBLE_EQ(diagonal_offset(5, 5, 10, 10), 0);
  EXPECT_DOUBLE_EQ(diagonal_offset(0, 5, 10, 10), 0.5);
  EXPECT_DOUBLE_EQ(diagonal_offset(9, 0, 10, 10), 0.9);
  // Rectangular: rows and columns each as a share of their range.
  EXPECT_DOUBLE_EQ(diagonal_offset(50, 5, 100, 10), 0);
  EXPECT_DOUBLE_EQ(diagonal_offset(0, 25, 10, 100), 0.25);
  // A uniformly random matrix: 1/3 in the mean.
  const std::int64_t n = 400;
  double sum = 0;
  for (std::int64_t r = 0; r < n; ++r) {
    for (std::int64_t c = 0; c < n; ++c) sum += diagonal_offset(r, c, n, n);
  }
  EXPECT_NEAR(sum / static_cast<double>(n * n), 1.0 / 3.0, 0.01);
}

// The same with B's columns and values (f64) against an L2 cache of 50 MB.
row_shape square_on_device(std::int64_t rows, std::int64_t nnz, std::int64_t max_len, double diagonal,
                           std::size_t value_bytes = 8) {
  row_shape s = square(rows, nnz, max_len, diagonal);
  s.b_bytes = static_cast<std::size_t>(nnz) * (4 + value_bytes);
  s.cache_bytes = std::size_t{50} << 20;
  return s;
}

TEST(Planner, HashForScatteredRowsOfModerateProductsBeyondTheCache) {
  // er:1000000:8: uniformly random, 64 products a row, B of 96 MB (64 MB in f32).
  const row_shape er = square_on_device(1000000, 8000000, 8, 1.0 / 3);
  EXPECT_EQ(planner::choose_method(er).algo, algorithm::hash);
  EXPECT_NE(planner::choose_method(er).reason.find("0.33 of the matrix off the diagonal"), std::string::npos)
      << planner::choose_method(er).reason;
  EXPECT_EQ(planner::choose_method(square_on_device(1000000, 8000000, 8, 1.0 / 3, 4)).algo, algorithm::hash);
  // B within the cache keeps RMerge however scattered: finan512 (0.23, 49 products a row, 6 MB),
  // Andrews (0.30, 161, 9 MB), bayer10 (0.39, 50, 1 MB).
  EXPECT_EQ(planner::choose_method(square_on_device(74752, 522240, 54, 0.226)).algo, algorithm::rmerge);
  EXPECT_EQ(planner::choose_method(square_on_device(60000, 760154, 36, 0.297)).algo, algorithm::rmerge);
  EXPECT_EQ(planner::choose_method(square_on_device(13436, 94926, 18, 0.39)).algo, algorithm::rmerge);
  // Rows near the diagonal keep RMerge: a banded er-sized matrix (0.05).
  EXPECT_EQ(planner::choose_method(square_on_device(1000000, 8000000, 8, 0.05)).algo, algorithm::rmerge);
  // Few products a row keep RMerge however scattered: er:1000000:2 (4).
  EXPECT_EQ(planner::choose_method(square_on_device(1000000, 2000000, 2, 1.0 / 3)).algo, algorithm::rmerge);
  // More than a warp table holds: er:200000:32 (1,024 products a row) keeps RMerge.
  EXPECT_EQ(planner::choose_method(square_on_device(200000, 6400000, 32, 1.0 / 3)).algo, algorithm::rmerge);
  // The bounds themselves, B made larger than a cache of 1 byte.
  const auto beyond = [](row_shape s) {
    s.b_bytes = 2;
    s.cache_bytes = 1;
    return s;
  };
  const double at_least = scattered_min_row_products;
  EXPECT_TRUE(scattered_rows_for_hash(beyond(square(
      1000, static_cast<std::int64_t>(1000 * std::sqrt(at_least) + 1), 8, scattered_min_diagonal_distance))));
  EXPECT_FALSE(scattered_rows_for_hash(beyond(square(1000, 6000, 8, 0.5))));    // 36 products a row
  EXPECT_FALSE(scattered_rows_for_hash(beyond(square(1000, 21000, 30, 0.5))));  // 441
  EXPECT_TRUE(scattered_rows_for_hash(beyond(square(1000, 20000, 30, 0.5))));   // 400
  EXPECT_FALSE(scattered_rows_for_hash(beyond(square(1000, 8000, 8, 0.19))));   // near the diagonal
  EXPECT_FALSE(scattered_rows_for_hash(square(1000, 20000, 30, 0.5)));          // B and the cache unknown
  // Unknown distance or unknown B: the rule does not apply.
  EXPECT_FALSE(scattered_rows_for_hash(beyond(square(1000, 8000, 8, -1))));
  row_shape no_b{1000, 8000, 8, false, 1};
  no_b.a_diagonal_distance = 0.5;
  EXPECT_FALSE(scattered_rows_for_hash(beyond(no_b)));
  EXPECT_EQ(planner::choose_method(no_b).algo, algorithm::rmerge);
  // Rules before it still decide: few rows (bcsstk13-like) take hash for their own reason.
  EXPECT_EQ(planner::choose_method(beyond(square(2003, 83883, 95, 0.5))).reason,
            "too few rows of A for RMerge's 32-lane merges");
}

TEST(Planner, ColumnRangesWhereRowsOfBAreLong) {
  EXPECT_TRUE(use_column_ranges(stats(36692, 367662, 1383, 51500000, 600000)));     // email-Enron: 140 per entry
  EXPECT_FALSE(use_column_ranges(stats(325729, 1497134, 3445, 64500000, 500000)));  // web-NotreDame: 43
  EXPECT_FALSE(use_column_ranges(job_stats{}));
}

TEST(Planner, RowsSpanningFewColumnsSplitByTheirOwnSpan) {
  EXPECT_TRUE(split_by_row_span(12000, 94702));   // femblocks:30:6: a row's products over 12,000 columns
  EXPECT_TRUE(split_by_row_span(50000, 100000));  // half of B's columns
  EXPECT_FALSE(split_by_row_span(50001, 100000));
  EXPECT_FALSE(split_by_row_span(480000, 500000));  // circuit: a hub's row over nearly all of B
}

TEST(Planner, SegmentsNarrowWhereAFewHeavyRowsWouldBeTheTail) {
  const limits lim;
  // orani678 squared: 8 rows of 67,421 products into 2,529 columns, 5.0 million products in all:
  // at 4096 columns each heavy row is one item, 7x the mean products of a resident block.
  job_stats orani = stats(2529, 90158, 1110, 5018905, 67421);
  orani.b_rows = 2529;
  orani.nnz_b = 90158;
  EXPECT_EQ(segment_width_for(orani, lim, 132), 512);
  EXPECT_EQ(segments_of(orani.b_cols, segment_width_for(orani, lim, 132)), 5);
  // pilot87 A·Aᵀ: 20,563 products into 2,030 columns, 4.2 times the mean of a block.
  job_stats pilot = stats(2030, 73152, 383, 2613000, 20563);
  pilot.b_rows = 6680;
  pilot.nnz_b = 73152;
  EXPECT_EQ(segment_width_for(pilot, lim, 132), 512);
  // sts4098: 16,891 products into 4,098 columns, 3.2 times: the width stays.
  job_stats sts = stats(4098, 72356, 784, 2825000, 16891);
  sts.b_rows = 4098;
  sts.nnz_b = 72356;
  EXPECT_EQ(segment_width_for(sts, lim, 132), segment_width);
  // The same rows in a product 50 times larger: the heavy rows are no tail.
  job_stats larger = orani;
  larger.products *= 50;
  EXPECT_EQ(segment_width_for(larger, lim, 132), segment_width);
  // rmat:18:16: many columns, a huge product.
  job_stats rmat = stats(262144, 3941447, 40000, 2930000000, 9000000);
  rmat.b_rows = 262144;
  rmat.nnz_b = 3941447;
  EXPECT_EQ(segment_width_for(rmat, lim, 132), segment_width);
  // No narrower than the limit, nor more than max_segments segments.
  job_stats wide = orani;
  wide.b_cols = wide.b_rows = max_segments * segment_width;
  wide.max_row_products = wide.products;
  EXPECT_EQ(segment_width_for(wide, lim, 132), segment_width);
  job_stats narrow = orani;
  narrow.b_cols = 600;
  EXPECT_EQ(segment_width_for(narrow, lim, 132), lim.segment_min_width);
  limits full = lim;
  full.segment_min_width = segment_width;
  EXPECT_EQ(segment_width_for(orani, full, 132), segment_width);
  // An unknown device keeps the full width.
  EXPECT_EQ(segment_width_for(orani, lim, 0), segment_width);
}

TEST(Planner, SegmentsNarrowForTheOccupancyOfTheirBlocks) {
  // An H100's or H200's 227 KiB a block: eight blocks of 1024 f64 columns a SM, of 2048 in f32.
  const std::size_t h100 = 227 * 1024;
  EXPECT_EQ(full_occupancy_segment_width(h100, 8), 1024);
  EXPECT_EQ(full_occupancy_segment_width(h100, 4), 2048);
  EXPECT_GT(8 * (segment_shared_bytes(8, 2048) + 1024), h100 + 1024);
  limits lim = limits_for(h100, 8);
  ASSERT_EQ(lim.segment_full_width, 1024);
  // bcsstk33 squared: 71 products per entry of A over 8,738 columns: 16.6 an entry at 2048, 8.3 at 1024.
  job_stats bcsstk = stats(8738, 583166, 140, 41186880, 20000);
  bcsstk.b_rows = 8738;
  bcsstk.nnz_b = 583166;
  bcsstk.symbolic_bins[first_segment_bin] = 8738;
  EXPECT_EQ(segment_width_for(bcsstk, lim, 132), 2048);
  // mbeacxc squared: 496 rows into 496 columns, 120 products per entry: 128 columns make 1,984
  // items for the 1,056 blocks of 132 SMs.
  job_stats mbea = stats(496, 49920, 400, 5988684, 20000);
  mbea.b_rows = 496;
  mbea.nnz_b = 49920;
  mbea.symbolic_bins[first_segment_bin] = 496;
  EXPECT_EQ(segment_width_for(mbea, lim, 132), 128);
  // rmat:18:16: 743 products per entry spread over 262,144 columns: 5.8 an entry at 2048.
  job_stats rmat = stats(262144, 3941447, 40000, 2930000000, 9000000);
  rmat.b_rows = 262144;
  rmat.nnz_b = 3941447;
  rmat.symbolic_bins[first_segment_bin] = 30000;
  EXPECT_EQ(segment_width_for(rmat, lim, 132), segment_width);
  // A B of 300 columns: an accumulator of 512.
  job_stats narrow_b = mbea;
  narrow_b.b_cols = 300;
  narrow_b.symbolic_bins[first_segment_bin] = 5000;
  EXPECT_EQ(segment_width_for(narrow_b, lim, 132), 512);
  // The tuning's widest segment overrides the rules (rounded down to a power of two).
  limits capped = lim;
  capped.segment_max_width = 1500;
  EXPECT_EQ(segment_width_for(bcsstk, capped, 132), 1024);
  capped.segment_max_width = 1;
  EXPECT_EQ(segment_width_for(bcsstk, capped, 132), min_segment_width);
}

}  // namespace
}  // namespace spgemm::planner
