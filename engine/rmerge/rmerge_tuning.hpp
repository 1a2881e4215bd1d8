// RMerge tuning: which sub-warp size W and rows per thread R each pass uses.
// Host-only (no CUDA headers); the one place these constants live.
//
// A pass of MulLimited merges, per output row, up to M = W * R rows of the
// right-hand factor: W threads (a sub-warp) each hold R cursors. A left factor
// whose longest row has L > M entries is split first (Gremse et al. 2015,
// section 2.3): every split divides L by M (rounded up), and the last product
// then uses the smallest sufficient sub-warp.
//
// The rule, from the row-length statistics of A (max L, mean mu = nnz / rows):
//  * L <= 128: one pass, no intermediates. W_mu = the power of two >= mu,
//    clamped to [2, 32]: a sub-warp about as wide as a typical row, so short
//    rows leave few lanes idle. R = the smallest of {1, 2, 4} with W_mu * R >= L
//    (4 if none), then W = the smallest power of two >= 2 with W * R >= L.
//    So L <= 32 with rows of similar length gives R = 1, W = pow2(L) (Gremse's
//    kernel); 32 < L <= 128 gives R = 2 or 4 (Becker 2016, section 2.3: more
//    rows per thread reach merge factors 64 and 128 in one pass, with fewer
//    shuffles per output entry than a wider sub-warp).
//  * L > 128: split with W = 16, R = 1 (M = 16; Gremse's measured default,
//    section 3, Fig. 3.5) and finish with R = 1 and the smallest sufficient W.
//  * An explicit multiply_options::rmerge sets the splitting pass (a missing
//    W means 16, a missing R means 1); rows of length <= W * R take one pass.
//    The last pass keeps R and takes the smallest sufficient W.
// Block size: 128 threads (Gremse, section 2.2), i.e. 128 / W rows per block.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "spgemm/errors.hpp"
#include "spgemm/multiply.hpp"

namespace spgemm::rmerge {

inline constexpr int block_threads = 128;
inline constexpr int default_split_subwarp = 16;
inline constexpr int default_split_rows_per_thread = 1;
inline constexpr std::int64_t max_merge_factor = 128;  // W = 32, R = 4

struct row_stats {
  std::int64_t rows = 0;
  std::int64_t nnz = 0;
  std::int64_t max_row_length = 0;
  double mean_row_length() const { return rows > 0 ? static_cast<double>(nnz) / static_cast<double>(rows) : 0.0; }
};

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

inline bool is_valid_subwarp(int w) { return w == 2 || w == 4 || w == 8 || w == 16 || w == 32; }
inline bool is_valid_rows_per_thread(int r) { return r == 1 || r == 2 || r == 4; }

// Smallest power of two >= 2 (and <= 32) with W * R >= length.
inline int smallest_subwarp(std::int64_t length, int rows_per_thread) {
  int w = 2;
  while (w < 32 && static_cast<std::int64_t>(w) * rows_per_thread < length) w *= 2;
  return w;
}

// Throws error(bad_input) for unsupported explicit values.
inline void validate_config(const rmerge_config& config) {
  if (config.subwarp != 0 && !is_valid_subwarp(config.subwarp)) {
    throw_bad_input("rmerge sub-warp size " + std::to_string(config.subwarp) +
                    " is not supported (use 2, 4, 8, 16 or 32, or 0 to choose automatically)");
  }
  if (config.rows_per_thread != 0 && !is_valid_rows_per_thread(config.rows_per_thread)) {
    throw_bad_input("rmerge rows per thread " + std::to_string(config.rows_per_thread) +
                    " is not supported (use 1, 2 or 4, or 0 to choose automatically)");
  }
}

inline plan make_plan(const row_stats& stats, const rmerge_config& config) {
  validate_config(config);
  const std::int64_t max_len = stats.max_row_length;
  plan p;
  if (config.subwarp == 0 && config.rows_per_thread == 0) {
    if (max_len <= max_merge_factor) {
      const double mean = stats.mean_row_length();
      int w_mean = 2;
      while (w_mean < 32 && static_cast<double>(w_mean) < mean) w_mean *= 2;
      int r = 4;
      for (int candidate : {1, 2, 4}) {
        if (static_cast<std::int64_t>(w_mean) * candidate >= max_len) {
          r = candidate;
          break;
        }
      }
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
