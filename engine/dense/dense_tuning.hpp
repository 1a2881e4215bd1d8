// The dense method's plan (dense_kernels.cuh): how wide a tile of B's
// columns one accumulator covers, how many warps a block has (one private
// accumulator each), and how many blocks of a thread-block cluster share a
// row. Host-only (no CUDA headers), unit-tested on the CPU
// (tests/engine/dense_plan_test.cpp).
//
// The rule:
//  * tile: the columns of B rounded up to a power of two, 64 at least and
//    max_tile at most; B wider than max_tile is taken a tile at a time;
//  * warps: as many private accumulators (values and a bit per column) as fit
//    the block's shared memory, min_warps .. max_warps, a power of two;
//  * cluster: enough blocks in flight for the GPU (target_blocks_per_sm per
//    SM) where A has few rows, one block per row where it has many; a power
//    of two up to max_cluster (the portable cluster size), and no more
//    blocks than a row has entries of A per warp-run of min_entries_per_warp.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

namespace spgemm::dense {

inline constexpr int min_tile = 64;
inline constexpr int max_tile = 4096;
inline constexpr int min_warps = 2;
inline constexpr int max_warps = 8;
inline constexpr int max_cluster = 8;
inline constexpr int target_blocks_per_sm = 4;
inline constexpr std::int64_t min_entries_per_warp = 8;

struct plan {
  int tile = min_tile;  // columns of B per accumulator
  int tiles = 1;        // ceil(cols of B / tile)
  int warps = min_warps;
  int cluster = 1;      // blocks per row (a thread-block cluster)
  int block_threads() const { return 32 * warps; }
};

// Dynamic shared memory of a block (dense_kernels.cuh, block_space): per
// warp, a bit per column of the tile and (numeric: value_bytes > 0) a value
// per column, the stage of 32 entries of A (where their part of B begins,
// the inclusive prefix of its lengths, A's value) and the commit scratch (a
// value per lane); then two parity slots of the count the cluster exchanges.
inline std::size_t shared_bytes(int tile, int warps, std::size_t value_bytes) {
  const auto t = static_cast<std::size_t>(tile);
  return static_cast<std::size_t>(warps) * (t / 8 + t * value_bytes + 32 * (16 + 2 * value_bytes)) +
         2 * sizeof(long long);
}

inline int tile_width(std::int64_t b_cols) {
  int t = min_tile;
  while (t < max_tile && t < b_cols) t *= 2;
  return t;
}

// The largest power of two of warps (min_warps .. max_warps) whose numeric
// accumulators fit `max_shared` bytes.
inline int warps_for(int tile, std::size_t value_bytes, std::size_t max_shared) {
  int w = max_warps;
  while (w > min_warps && shared_bytes(tile, w, value_bytes) > max_shared) w /= 2;
  return w;
}

inline int cluster_for(std::int64_t rows, std::int64_t nnz_a, int warps, int sm_count) {
  if (rows <= 0) return 1;
  const std::int64_t wanted = static_cast<std::int64_t>(std::max(sm_count, 1)) * target_blocks_per_sm;
  const std::int64_t mean_entries = nnz_a / rows;
  int k = 1;
  while (k < max_cluster && rows * (2 * k) <= wanted &&
         mean_entries >= static_cast<std::int64_t>(2 * k) * warps * min_entries_per_warp)
    k *= 2;
  return k;
}

inline plan make_plan(std::int64_t rows, std::int64_t nnz_a, std::int64_t b_cols, std::size_t value_bytes,
                      std::size_t max_shared, int sm_count) {
  plan p;
  p.tile = tile_width(b_cols);
  p.tiles = b_cols > 0 ? static_cast<int>((b_cols + p.tile - 1) / p.tile) : 1;
  p.warps = warps_for(p.tile, value_bytes, max_shared);
  p.cluster = cluster_for(rows, nnz_a, p.warps, sm_count);
  return p;
}

// How a plan reads in job statistics, e.g. "dense tile 512 x1, 8 warps, cluster 8".
inline std::string describe(const plan& p) {
  return "dense tile " + std::to_string(p.tile) + " x" + std::to_string(p.tiles) + ", " + std::to_string(p.warps) +
         " warps, cluster " + std::to_string(p.cluster);
}

}  // namespace spgemm::dense
