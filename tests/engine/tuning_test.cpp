// The engine's tuning (engine/include/spgemm/tuning.hpp): data with valid
// defaults, checked before a job runs, and named for keys and logs.
#include <string>

#include <gtest/gtest.h>

#include "spgemm/errors.hpp"
#include "spgemm/tuning.hpp"

namespace spgemm {
namespace {

TEST(Tuning, DefaultsAreValid) {
  const tuning t;
  EXPECT_NO_THROW(require_valid(t));
  EXPECT_EQ(t.esc_slice_products, std::int64_t{1} << 24);
  EXPECT_EQ(t.fuse_max_products, std::int64_t{1} << 23);
}

TEST(Tuning, RejectsRmergeConfigurationsWithoutKernels) {
  for (const rmerge_config config : {rmerge_config{3, 1}, rmerge_config{64, 0}, rmerge_config{16, 3}}) {
    tuning t;
    t.rmerge = config;
    try {
      require_valid(t);
      FAIL() << config.subwarp << ", " << config.rows_per_thread;
    } catch (const error& e) {
      EXPECT_EQ(e.kind(), error_kind::bad_input);
    }
  }
  for (const rmerge_config config : {rmerge_config{0, 0}, rmerge_config{2, 1}, rmerge_config{32, 4}, rmerge_config{8, 0}}) {
    tuning t;
    t.rmerge = config;
    EXPECT_NO_THROW(require_valid(t));
  }
}

TEST(Tuning, NamesEveryField) {
  tuning t;
  t.segment_entry_passes = 7;
  t.rmerge = {8, 2};
  t.segment_min_width = 1024;
  t.segment_max_width = 256;
  const std::string text = to_string(t);
  EXPECT_NE(text.find("segment_entry_passes=7"), std::string::npos) << text;
  EXPECT_NE(text.find("segment_min_width=1024"), std::string::npos) << text;
  EXPECT_NE(text.find("segment_max_width=256"), std::string::npos) << text;
  EXPECT_NE(text.find("rmerge=w8r2"), std::string::npos) << text;
  EXPECT_NE(to_string(t), to_string(tuning{}));
}

}  // namespace
}  // namespace spgemm
