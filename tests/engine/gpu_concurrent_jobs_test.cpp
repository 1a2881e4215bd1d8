// Many products at once on one GPU backend, from several threads, each
// needing a different amount of a kernel's dynamic shared memory (hash
// tables of 1024 to 16384 slots, segment rows, block accumulators). The
// largest dynamic shared memory a kernel may take is a process-wide
// attribute: set per launch, concurrent jobs raced, and about one product in
// 3,500 failed with "invalid argument" under load (issue 26). Every result
// must equal the CPU reference. The race window is short: run it repeated
// (--gtest_repeat) to look for it. Skips where no CUDA device is visible.
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "spgemm/backend.hpp"
#include "spgemm/errors.hpp"
#include "spgemm/reference.hpp"
#include "gpu_test_support.hpp"
#include "test_matrices.hpp"

namespace spgemm {
namespace {

struct product_case {
  csr_matrix<double> a;
  csr_matrix<double> b;
  csr_matrix<double> c;  // the CPU reference
  std::shared_ptr<stored_matrix> sa;
  std::shared_ptr<stored_matrix> sb;
};

std::vector<product_case> cases_of_every_table_size(backend& g) {
  std::vector<product_case> cases;
  auto add = [&](csr_matrix<double> a, csr_matrix<double> b) {
    product_case p;
    p.c = cpu_multiply(a, b);
    p.sa = g.store(a);
    p.sb = g.store(b);
    p.a = std::move(a);
    p.b = std::move(b);
    cases.push_back(std::move(p));
  };
  // Rows of A of 75 .. 2400 entries over rows of B of about 6 in a million
  // columns (too wide for segment rows): rows of C of about 450 .. 15000
  // entries, so a different largest table (1024 .. 16384 slots, then dense
  // rows) in every case, beside short rows and copies.
  const auto wide = testing::random_csr<double>(30000, 1000000, 12, 950);
  for (int k = 0; k < 6; ++k) {
    const std::int64_t length = std::int64_t{75} << k;
    add(testing::with_lengths<double>(48, 30000, {length, 1, 40, length / 2}, 900 + static_cast<std::uint64_t>(k)),
        wide);
  }
  // Rows dense in B's 30000 columns: segment rows.
  for (int k = 0; k < 2; ++k) {
    add(testing::with_lengths<double>(48, 30000, {300 << k, 1, 40}, 910 + static_cast<std::uint64_t>(k)),
        testing::random_csr<double>(30000, 30000, 12, 960 + static_cast<std::uint64_t>(k)));
  }
  // Dense blocks: the block method's shared accumulators.
  const auto blocked = testing::random_blocked<double>(400, 400, 3, 30, 990);
  add(blocked, blocked);
  return cases;
}

TEST(GpuConcurrentJobs, DifferentSharedMemoryFromManyThreads) {
  SPGEMM_REQUIRE_GPU();
  backend& g = testing::gpu();
  const std::vector<product_case> cases = cases_of_every_table_size(g);
  const std::vector<algorithm> methods = cuda_algorithms();
  constexpr int threads = 8;
  constexpr int rounds = 40;
  std::vector<std::string> failures(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int round = 0; round < rounds && failures[t].empty(); ++round) {
        const product_case& p = cases[static_cast<std::size_t>(t + round) % cases.size()];
        multiply_options options;
        options.algo = methods[static_cast<std::size_t>(t + 2 * round) % methods.size()];
        if (round % 2 == 1) options.tuning.fuse_max_products = 0;  // a launch per table bin, not fused
        try {
          const auto c = std::get<csr_matrix<double>>(g.fetch(*g.multiply(*p.sa, *p.sb, options)));
          if (c.row_offsets != p.c.row_offsets || c.col_indices != p.c.col_indices ||
              scaled_max_error(c, p.c, p.a, p.b) > testing::tolerance<double>()) {
            failures[t] = std::string(to_string(options.algo)) + ": a wrong product";
          }
        } catch (const error& e) {
          failures[t] = std::string(to_string(options.algo)) + ": " + e.what();
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  for (int t = 0; t < threads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
}

}  // namespace
}  // namespace spgemm
