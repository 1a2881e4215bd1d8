// Tuning of the GPU methods: data with documented defaults, carried in
// multiply_options, so that two jobs may run with different tuning side by
// side and tests set it explicitly. The defaults were measured on the H100
// (sm_90; docs/planner.md gives the measurements); no other architecture has
// been measured, so they apply to every GPU until one is.
#pragma once

#include <cstdint>
#include <string>

namespace spgemm {

// RMerge's sub-warp size W (threads merging one row) and rows of B per
// thread R; a row of the left factor holding up to W * R entries (the merge
// factor) is merged in one pass. 0 lets the method choose from A's rows
// (engine/rmerge/rmerge_tuning.hpp).
struct rmerge_config {
  int subwarp = 0;          // 0, 2, 4, 8, 16, 32
  int rows_per_thread = 0;  // 0, 1, 2, 4
};

struct tuning {
  rmerge_config rmerge;
  // RMerge, one-pass plans: the most entries of B each warp copies into
  // shared memory before merging its rows, where they are expected to fit
  // (the cursors then read the copy, not a 32-byte sector of global memory
  // per entry); 0 (the default) merges from global memory; at most 2048
  // (engine/rmerge/rmerge_tuning.hpp). Off: on an H100 it lost on stencils,
  // FEM and meshes (poisson3d7:100 1.55 ms with 1024 against 0.82 without)
  // and won only on uniform random rows (docs/planner.md, RMerge).
  std::int64_t rmerge_stage_b = 0;
  // Hash method, segment rows: the least output bound of a row computed per
  // segment of B's columns (docs/planner.md, "Segment rows").
  std::int64_t segment_min_bound = 1024;
  // Hash method, segment rows: the narrowest segment a job may take where a
  // few heavy rows would be the numeric kernel's tail (planner::segment_width_for;
  // 4096, the widest, keeps every job at the full width).
  std::int64_t segment_min_width = 512;
  // Hash method, segment rows: the widest segment, in columns (rounded down to
  // a power of two, at least 64; 0: planner::segment_width_for's rules).
  std::int64_t segment_max_width = 0;
  // Hash method, segment rows: a round of products spanning at most this
  // many entries of A orders its additions by one pass per entry (else by
  // claims and warp turns).
  std::int64_t segment_entry_passes = 32;
  // Hash method: products up to which a pass launches all its table bins of
  // up to 2048 slots in one fused launch (0: every bin launches on its own).
  std::int64_t fuse_max_products = std::int64_t{1} << 23;
  // Hash method, fused launches: a bin of 256 slots or more takes a block per
  // row where it has at most this many rows per SM (else a warp per row).
  std::int64_t fused_block_rows_per_sm = 4;
  // ESC: products expanded at once (the slice budget; clamped to 2 .. 2^30).
  // Trades a fixed workspace (up to 36 bytes per product) for launches.
  std::int64_t esc_slice_products = std::int64_t{1} << 24;
  // bhsparse: 1 computes the long rows (more than 512 products) by Ji et
  // al.'s segmented merge instead of merge path (the segmerge method runs
  // bhsparse so).
  std::int64_t bhsparse_segmented_merge = 0;
  // Segmented merge: products of the long rows expanded at once (at least
  // twice the largest long row's bound plus B's longest row; clamped to 2^30).
  std::int64_t segmerge_slice_products = std::int64_t{1} << 24;
};

// Throws error(bad_input) for values no method accepts (an explicit RMerge
// sub-warp size or rows per thread it has no kernel for).
void require_valid(const tuning& t);

// The fields as "name=value" pairs, for keys and logs.
std::string to_string(const tuning& t);

// The defaults with the overrides a benchmark sweep sets in the environment
// (SPGEMM_RMERGE_STAGE_B, SPGEMM_SEGMENT_MIN_BOUND, SPGEMM_SEGMENT_ENTRY_PASSES,
// SPGEMM_FUSE_MAX_PRODUCTS, SPGEMM_FUSED_BLOCK_ROWS_PER_SM,
// SPGEMM_ESC_SLICE_PRODUCTS, SPGEMM_SEGMERGE_SLICE_PRODUCTS; integers,
// negative read as 0). Read once, at
// start-up, never on a job's path. Throws error(bad_input) naming a variable
// that does not hold an integer.
tuning tuning_from_environment();

}  // namespace spgemm
