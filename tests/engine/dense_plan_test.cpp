// The dense method's plan (engine/dense/dense_tuning.hpp): tiles, warps and
// clusters from the shape of a product and the device. CPU only.
#include <gtest/gtest.h>

#include "dense/dense_tuning.hpp"

namespace spgemm::dense {
namespace {

constexpr std::size_t h100_shared = 227 * 1024 - 1024;

TEST(DensePlan, TilesCoverBsColumnsInPowersOfTwo) {
  EXPECT_EQ(tile_width(1), min_tile);
  EXPECT_EQ(tile_width(36), min_tile);
  EXPECT_EQ(tile_width(65), 128);
  EXPECT_EQ(tile_width(507), 512);
  EXPECT_EQ(tile_width(4096), max_tile);
  EXPECT_EQ(tile_width(100000), max_tile);
  EXPECT_EQ(make_plan(10, 100, 100000, 8, h100_shared, 132).tiles, (100000 + max_tile - 1) / max_tile);
  EXPECT_EQ(make_plan(10, 100, 0, 8, h100_shared, 132).tiles, 1);
}

TEST(DensePlan, WarpsFitTheSharedMemory) {
  for (const int tile : {64, 512, 4096}) {
    for (const std::size_t value_bytes : {4u, 8u}) {
      const int w = warps_for(tile, value_bytes, h100_shared);
      EXPECT_GE(w, min_warps);
      EXPECT_LE(w, max_warps);
      EXPECT_LE(shared_bytes(tile, w, value_bytes), h100_shared) << tile << " " << value_bytes;
    }
  }
  EXPECT_EQ(warps_for(64, 8, h100_shared), max_warps);
  EXPECT_EQ(warps_for(4096, 8, h100_shared), 4);
  // The symbolic pass holds bits only.
  EXPECT_LT(shared_bytes(4096, 8, 0), shared_bytes(4096, 8, 8) / 8);
}

TEST(DensePlan, ClustersWhereAHasFewLongRows) {
  // nw04 * nw04^T: 36 rows of 17,700 entries: the largest cluster.
  EXPECT_EQ(cluster_for(36, 636666, 8, 132), max_cluster);
  // fast0507 * fast0507^T: 507 rows: about four blocks per SM already.
  EXPECT_EQ(cluster_for(507, 409349, 8, 132), 1);
  // Few rows, but short: no block gets less than a warp-run of entries per warp.
  EXPECT_EQ(cluster_for(36, 36 * 40, 8, 132), 1);
  EXPECT_EQ(cluster_for(36, 36 * 2 * 8 * min_entries_per_warp, 8, 132), 2);
  EXPECT_EQ(cluster_for(0, 0, 8, 132), 1);
  EXPECT_EQ(cluster_for(1000000, 8000000, 8, 132), 1);
}

}  // namespace
}  // namespace spgemm::dense
