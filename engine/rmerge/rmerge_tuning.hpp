// RMerge tuning: which sub-warp size W and rows per thread R each pass uses.
// Host-only (no CUDA headers); the one place these constants live. The
// measurements behind them are in docs/planner.md ("RMerge").
//
// A pass of MulLimited merges, per output row, up to M = W * R rows of the
// right-hand factor: W threads (a sub-warp) each hold R cursors. A left factor
// whose longest row has L > M entries is split first (Gremse et al. 2015,
// section 2.3): every split divides L by M (rounded up), and the last product
// then uses the smallest sufficient sub-warp.
//
// The rule, from the row-length statistics of A (the longest row L):
//  * L <= 128: one pass, no intermediates (Becker 2016, section 2.3: several
//    rows per thread reach merge factors 64 and 128 in one pass, and use
//    fewer shuffles per output entry than a wider sub-warp). R = 4 for L > 4,
//    R = 2 for 2 < L <= 4, R = 1 for L <= 2; W = the smallest power of two
//    >= 2 with W * R >= L: fewer, fuller sub-warps than Gremse's one-row
//    kernel (R = 1).
//  * L > 128: split with W = 32, R = 4 (M = 128, the fewest levels) and finish
//    with R = 4 and the smallest sufficient W. Gremse (section 3, Fig. 3.5)
//    found W = 16, R = 1 best on a GTX Titan; on Hopper the wider merge wins.
//  * The mean row length (row_stats) is reported for the planner's callers
//    but does not enter the rule.
//  * An explicit tuning::rmerge sets the splitting pass (a missing
//    W means 32, a missing R means 4); rows of length <= W * R take one pass.
//    The last pass keeps R and takes the smallest sufficient W.
// Block size: 128 threads (Gremse, section 2.2), i.e. 128 / W rows per block.
//
// Staging (value pass): with W <= max_staged_subwarp a warp computes 32 / W
// consecutive rows, i.e. one contiguous range of C, and stages it in shared
// memory to write it with coalesced stores: 1.25 x the mean row length of C
// per row, in multiples of 32 entries, at most 512. Wider sub-warps write
// each row in order from one lane already, and the shared memory a stage
// takes from L1 costs their reuse of B.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "planner/job_rules.hpp"
#include "spgemm/multiply.hpp"

namespace spgemm::rmerge {

inline constexpr int block_threads = 128;
inline constexpr int default_split_subwarp = 32;
inline constexpr int default_split_rows_per_thread = 4;
inline constexpr std::int64_t max_merge_factor = 128;  // W = 32, R = 4

using planner::row_stats;

struct pass_config {
  int subwarp = 2;          // W: 2, 4, 8, 16, 32
  int rows_per_thread = 1;  // R: 1, 2, 4
  std::int64_t merge_factor() const { return static_cast<std::int64_t>(subwarp) * rows_per_thread; }
};

struct plan {
  pass_config split;           // the passes G_i * B (used when split_levels > 0)
  pass_config last;            // the last product A_k * (G_{k-1} ... G_1 B)
  int split_levels = 0;        // k - 1: number of products before the last
  std::int64_t last_max_length = 0;  // longest row of the last left factor
};

// How a plan reads in job statistics, e.g. "rmerge w8r4" or "rmerge 2x w32r4 + w16r4".
inline std::string describe(const plan& p) {
  auto pass = [](const pass_config& c) {
    return "w" + std::to_string(c.subwarp) + "r" + std::to_string(c.rows_per_thread);
  };
  std::string text = "rmerge ";
  if (p.split_levels > 0) text += std::to_string(p.split_levels) + "x " + pass(p.split) + " + ";
  return text + pass(p.last);
}

inline constexpr int max_staged_subwarp = 4;
inline constexpr std::int64_t max_stage_capacity = 512;

// Entries of C a warp of the value pass stages (0: none); rows and nnz of C.
inline int stage_capacity(const pass_config& pass, std::int64_t rows, std::int64_t nnz) {
  if (pass.subwarp > max_staged_subwarp || rows == 0) return 0;
  const std::int64_t per_warp = (32 / pass.subwarp) * nnz / rows * 5 / 4 + 1;
  return static_cast<int>(std::min<std::int64_t>((per_warp + 31) / 32 * 32, max_stage_capacity));
}

// Staging of B (rmerge_kernels.cuh, both passes; off unless
// tuning::rmerge_stage_b is set: docs/planner.md): in one-pass plans where
// a warp's rows are expected to merge at most `most` entries of B
// (tuning::rmerge_stage_b, at most max_b_stage; 32 / W rows of A's mean row
// length, rows of B of their mean length), each warp copies its rows of B
// into shared memory; capacity: 32 / W rows of the longest row of A times
// the longest row of B, rounded up to 32, at most `most` (a warp whose rows
// hold more merges from global memory). Not in split plans: their rows of B
// are the intermediates, of unknown shape.
inline constexpr std::int64_t max_b_stage = 2048;

inline int b_stage_capacity(const pass_config& pass, const row_stats& a, const row_stats& b, std::int64_t most) {
  most = std::min(most, max_b_stage) / 32 * 32;
  const std::int64_t rows_per_warp = 32 / pass.subwarp;
  const double expected = static_cast<double>(rows_per_warp) * a.mean_row_length() * b.mean_row_length();
  if (most <= 0 || expected <= 0 || expected > static_cast<double>(most)) return 0;
  const std::int64_t bound = rows_per_warp * a.max_row_length * b.max_row_length;
  return static_cast<int>(std::min<std::int64_t>((bound + 31) / 32 * 32, most));
}

// Repeated rows (planner/row_repeats.hpp): the structure pass of a one-pass
// plan skips the rows of C that repeat the row before (the rows of a FEM
// node's unknowns, a stencil's rows along its first axis); a split plan's
// first pass skips the chunk of a row of A of one chunk that has the columns
// of the row before, itself of one chunk (the rows of a FEM node of more
// unknowns, most of them short of the merge factor), at the price of a
// pass over A (and over B where it is another matrix) and a scan that fills
// their lengths in, about 20 us on an H200 whatever they save: taken where
// at least a quarter of A's rows look skippable (row_stats::same_candidates,
// and shifted_candidates where B's rows look shifted too: a shifted row of A
// repeats in C only where its rows of B do) and they hold 2^24 products in
// the mean (the structure pass merges about 2^24 products in 50 us there:
// poisson3d7:100's 48 million in 128 us; bodyy5, fe_pwt and luxembourg_osm,
// a million or less, were 10-20 us slower with the skip).
inline constexpr double repeats_min_products = double{1 << 24};

inline bool looks_shifted(const row_stats& b) { return 4 * b.shifted_candidates >= b.rows; }

inline bool skips_repeats(const plan& p, const row_stats& a, bool b_looks_shifted, double b_mean_row) {
  // A split plan's chunks of rows of the same columns alone.
  const bool shifted = b_looks_shifted && p.split_levels == 0;
  const std::int64_t skippable = a.same_candidates + (shifted ? a.shifted_candidates : 0);
  const double products = static_cast<double>(skippable) * a.mean_row_length() * b_mean_row;
  return 4 * skippable >= a.rows && products >= repeats_min_products;
}

// The numeric pass alone of a split plan (rmerge.cu, run_numeric): on A of
// few rows, RMerge's passes with the last one writing values alone on the
// known structure; on more, the table's numeric pass (the block method's: a
// group of lanes a row walks the row's entries of A one after another, which
// few long rows cannot hide; docs/planner.md, RMerge). Needs the split's
// rows per thread 4 (the last pass's instantiations on a known structure).
inline constexpr std::int64_t numeric_levels_max_rows_per_sm = 16;

inline bool numeric_by_levels(const plan& p, std::int64_t rows, int sm_count) {
  return p.split_levels > 0 && p.last.rows_per_thread == default_split_rows_per_thread &&
         rows < numeric_levels_max_rows_per_sm * std::max(sm_count, 1);
}

// Smallest power of two >= 2 (and <= 32) with W * R >= length.
inline int smallest_subwarp(std::int64_t length, int rows_per_thread) {
  int w = 2;
  while (w < 32 && static_cast<std::int64_t>(w) * rows_per_thread < length) w *= 2;
  return w;
}

// The plan for A of row shape `stats` and the explicit `config` (valid:
// spgemm::require_valid(tuning)).
inline plan make_plan(const row_stats& stats, const rmerge_config& config) {
  const std::int64_t max_len = stats.max_row_length;
  plan p;
  if (config.subwarp == 0 && config.rows_per_thread == 0) {
    if (max_len <= max_merge_factor) {
      const int r = max_len > 4 ? 4 : (max_len > 2 ? 2 : 1);
      p.split = {smallest_subwarp(max_len, r), r};
      p.last = p.split;
      p.split_levels = 0;
      p.last_max_length = max_len;
      return p;
    }
    p.split = {default_split_subwarp, default_split_rows_per_thread};
  } else {
    p.split = {config.subwarp != 0 ? config.subwarp : default_split_subwarp,
               config.rows_per_thread != 0 ? config.rows_per_thread : default_split_rows_per_thread};
  }
  const std::int64_t m = p.split.merge_factor();
  std::int64_t len = max_len;
  while (len > m) {
    len = (len + m - 1) / m;
    ++p.split_levels;
  }
  p.last = {smallest_subwarp(len, p.split.rows_per_thread), p.split.rows_per_thread};
  p.last_max_length = len;
  return p;
}

}  // namespace spgemm::rmerge
