// RMerge's plan (engine/rmerge/rmerge_tuning.hpp): the sub-warp and rows per
// thread of each pass from A's longest row, the split levels, the stages, and
// where a numeric-only product runs RMerge's passes. CPU only.
#include <gtest/gtest.h>

#include "rmerge/rmerge_tuning.hpp"

namespace spgemm::rmerge {
namespace {

constexpr int h100_sms = 132;

row_stats longest(std::int64_t rows, std::int64_t nnz, std::int64_t max_row_length) {
  row_stats s;
  s.rows = rows;
  s.nnz = nnz;
  s.max_row_length = max_row_length;
  return s;
}

TEST(RmergePlan, OnePassUpToTheLargestMergeFactor) {
  for (const std::int64_t l : {1, 2, 3, 4, 5, 7, 8, 9, 64, 127, 128}) {
    const plan p = make_plan(longest(1000, 1000 * l, l), {});
    EXPECT_EQ(p.split_levels, 0) << l;
    EXPECT_GE(p.last.merge_factor(), l) << l;
    // The smallest sub-warp that holds the row at its rows per thread.
    EXPECT_TRUE(p.last.subwarp == 2 || p.last.subwarp * p.last.rows_per_thread / 2 < l) << l;
  }
  EXPECT_EQ(make_plan(longest(10, 10, 1), {}).last.rows_per_thread, 1);
  EXPECT_EQ(make_plan(longest(10, 40, 4), {}).last.rows_per_thread, 2);
  EXPECT_EQ(make_plan(longest(10, 50, 5), {}).last.rows_per_thread, 4);
  EXPECT_EQ(describe(make_plan(longest(10, 500, 50), {})), "rmerge w16r4");
}

TEST(RmergePlan, LongerRowsSplitByTheMergeFactor) {
  const plan one = make_plan(longest(10, 1000, 129), {});
  EXPECT_EQ(one.split_levels, 1);
  EXPECT_EQ(one.split.merge_factor(), max_merge_factor);
  EXPECT_EQ(one.last_max_length, 2);
  EXPECT_EQ(describe(one), "rmerge 1x w32r4 + w2r4");
  const plan two = make_plan(longest(10, 100000, 128 * 128 + 1), {});
  EXPECT_EQ(two.split_levels, 2);
  EXPECT_EQ(two.last_max_length, 2);
  // An explicit configuration sets the splitting pass; the last keeps its R.
  const plan set = make_plan(longest(10, 1000, 200), {16, 1});
  EXPECT_EQ(set.split.subwarp, 16);
  EXPECT_EQ(set.split.rows_per_thread, 1);
  EXPECT_EQ(set.split_levels, 1);
  EXPECT_EQ(set.last.rows_per_thread, 1);
  EXPECT_GE(set.last.merge_factor(), set.last_max_length);
}

TEST(RmergePlan, NumericPassByLevelsOnFewSplitRows) {
  const std::int64_t few = numeric_levels_max_rows_per_sm * h100_sms - 1;
  const plan split = make_plan(longest(few, few * 300, 600), {});
  ASSERT_GT(split.split_levels, 0);
  EXPECT_TRUE(numeric_by_levels(split, few, h100_sms));
  EXPECT_FALSE(numeric_by_levels(split, few + 1, h100_sms));
  // One pass: its value pass anyway, not by levels.
  EXPECT_FALSE(numeric_by_levels(make_plan(longest(100, 5000, 100), {}), 100, h100_sms));
  // Split rows of another rows per thread have no last pass on a known structure.
  EXPECT_FALSE(numeric_by_levels(make_plan(longest(100, 30000, 600), {32, 2}), 100, h100_sms));
}

// The structure pass skips repeated rows where a quarter of A's rows look
// skippable and they hold 2^24 products in the mean; shifted rows count only
// where B's look shifted too, and not in a split plan.
TEST(RmergePlan, SkipsRepeatsWhereTheyPay) {
  row_stats stencil = longest(1'000'000, 7'000'000, 7);  // 49 products a row
  stencil.shifted_candidates = 900'000;
  const plan one_pass = make_plan(stencil, {});
  EXPECT_TRUE(skips_repeats(one_pass, stencil, true, 7.0));
  EXPECT_FALSE(skips_repeats(one_pass, stencil, false, 7.0));  // B's rows not shifted
  EXPECT_TRUE(looks_shifted(stencil));

  row_stats small = stencil;  // 0.9 million products in repeated rows
  small.rows = 20'000;
  small.nnz = 140'000;
  small.shifted_candidates = 18'000;
  EXPECT_FALSE(skips_repeats(make_plan(small, {}), small, true, 7.0));

  row_stats nodes = longest(100'000, 5'400'000, 81);  // 2,916 products a row
  nodes.same_candidates = 30'000;
  EXPECT_TRUE(skips_repeats(make_plan(nodes, {}), nodes, false, 54.0));
  nodes.same_candidates = 20'000;  // a fifth
  EXPECT_FALSE(skips_repeats(make_plan(nodes, {}), nodes, false, 54.0));

  row_stats split = nodes;
  split.same_candidates = 60'000;
  split.max_row_length = 162;
  EXPECT_TRUE(skips_repeats(make_plan(split, {}), split, false, 54.0));
  split.same_candidates = 0;
  split.shifted_candidates = 60'000;
  EXPECT_FALSE(skips_repeats(make_plan(split, {}), split, true, 54.0));
}

TEST(RmergePlan, StagesOnlyWhereTheyPay) {
  // The value pass stages C's rows of narrow sub-warps only, in multiples of 32.
  EXPECT_EQ(stage_capacity({32, 4}, 1000, 100000), 0);
  const int c = stage_capacity({4, 4}, 1000, 30000);
  EXPECT_GT(c, 0);
  EXPECT_EQ(c % 32, 0);
  EXPECT_LE(c, max_stage_capacity);
  EXPECT_EQ(stage_capacity({2, 4}, 0, 0), 0);
  // B staged only where a warp's rows are expected to fit.
  const row_stats a = longest(1000, 8000, 12), b = longest(1000, 8000, 12);
  EXPECT_EQ(b_stage_capacity({8, 4}, a, b, 0), 0);
  const int staged = b_stage_capacity({8, 4}, a, b, 1024);
  EXPECT_GT(staged, 0);
  EXPECT_LE(staged, 1024);
  EXPECT_EQ(b_stage_capacity({2, 4}, longest(1000, 100000, 100), longest(1000, 100000, 100), 1024), 0);
}

}  // namespace
}  // namespace spgemm::rmerge
