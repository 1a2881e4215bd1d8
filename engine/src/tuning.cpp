#include "spgemm/tuning.hpp"

#include <cstdlib>
#include <string>

#include "spgemm/errors.hpp"

namespace spgemm {
namespace {

// Overrides `value` with the environment variable `name` where it is set.
void read_setting(const char* name, std::int64_t& value) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return;
  char* end = nullptr;
  const long long x = std::strtoll(text, &end, 10);
  if (*end != '\0') throw_bad_input(std::string(name) + "='" + text + "' is not an integer");
  value = x < 0 ? 0 : x;
}

}  // namespace

void require_valid(const tuning& t) {
  const int w = t.rmerge.subwarp;
  if (w != 0 && w != 2 && w != 4 && w != 8 && w != 16 && w != 32) {
    throw_bad_input("rmerge sub-warp size " + std::to_string(w) +
                    " is not supported (use 2, 4, 8, 16 or 32, or 0 to choose automatically)");
  }
  const int r = t.rmerge.rows_per_thread;
  if (r != 0 && r != 1 && r != 2 && r != 4) {
    throw_bad_input("rmerge rows per thread " + std::to_string(r) +
                    " is not supported (use 1, 2 or 4, or 0 to choose automatically)");
  }
}

std::string to_string(const tuning& t) {
  return "rmerge=w" + std::to_string(t.rmerge.subwarp) + "r" + std::to_string(t.rmerge.rows_per_thread) +
         " rmerge_stage_b=" + std::to_string(t.rmerge_stage_b) +
         " segment_min_bound=" + std::to_string(t.segment_min_bound) +
         " segment_min_width=" + std::to_string(t.segment_min_width) +
         " segment_max_width=" + std::to_string(t.segment_max_width) +
         " segment_entry_passes=" + std::to_string(t.segment_entry_passes) +
         " fuse_max_products=" + std::to_string(t.fuse_max_products) +
         " fused_block_rows_per_sm=" + std::to_string(t.fused_block_rows_per_sm) +
         " esc_slice_products=" + std::to_string(t.esc_slice_products) +
         " bhsparse_segmented_merge=" + std::to_string(t.bhsparse_segmented_merge) +
         " segmerge_slice_products=" + std::to_string(t.segmerge_slice_products);
}

tuning tuning_from_environment() {
  tuning t;
  read_setting("SPGEMM_RMERGE_STAGE_B", t.rmerge_stage_b);
  read_setting("SPGEMM_SEGMENT_MIN_BOUND", t.segment_min_bound);
  read_setting("SPGEMM_SEGMENT_MIN_WIDTH", t.segment_min_width);
  read_setting("SPGEMM_SEGMENT_MAX_WIDTH", t.segment_max_width);
  read_setting("SPGEMM_SEGMENT_ENTRY_PASSES", t.segment_entry_passes);
  read_setting("SPGEMM_FUSE_MAX_PRODUCTS", t.fuse_max_products);
  read_setting("SPGEMM_FUSED_BLOCK_ROWS_PER_SM", t.fused_block_rows_per_sm);
  read_setting("SPGEMM_ESC_SLICE_PRODUCTS", t.esc_slice_products);
  read_setting("SPGEMM_SEGMERGE_SLICE_PRODUCTS", t.segmerge_slice_products);
  return t;
}

}  // namespace spgemm
