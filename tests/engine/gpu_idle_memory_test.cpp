// What a GPU backend holds once its jobs are done: freed device memory stays
// in its pool for the next jobs (backend_memory::cached_bytes) until
// release_idle gives it back to the driver down to what it is told to keep,
// and products run as before afterwards. Skips where no CUDA device is visible.
#include <cstddef>

#include <gtest/gtest.h>

#include "gpu_test_support.hpp"
#include "test_matrices.hpp"

namespace spgemm {
namespace {

using testing::gpu;

// The pool reserves memory from the driver in blocks (32 MiB and more) and
// gives back only whole blocks that nothing is allocated from.
constexpr std::size_t pool_block = 32u << 20;

TEST(GpuIdleMemory, ReleaseIdleGivesThePoolBackDownToWhatItKeeps) {
  SPGEMM_REQUIRE_GPU();
  const auto a = testing::random_csr<double>(100000, 100000, 16, 7301);
  testing::expect_product(a, a);  // its workspace and C, freed, stay in the pool
  gpu().release_idle(std::size_t{1} << 40);  // keeps them all, once the frees queued on streams have run
  const std::size_t cached = gpu().memory().cached_bytes;
  EXPECT_GE(cached, 2 * pool_block);

  gpu().release_idle(pool_block);
  EXPECT_LT(gpu().memory().cached_bytes, cached);

  testing::expect_product(a, a);
  gpu().release_idle(0);
  EXPECT_LE(gpu().memory().cached_bytes, pool_block);  // a block a live allocation elsewhere holds at most
  testing::expect_product(a, a);
}

}  // namespace
}  // namespace spgemm
