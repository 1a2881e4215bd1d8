// Products in row panels on real CPU backends (the stand-in for devices, with
// a small budget standing in for device memory), values and all: on the
// shared matrices and on random and structured ones, the product in panels,
// kept in host memory or streamed, equals the product in one piece exactly
// (each row is computed by the same method alone), no device ever holds more
// than its budget, over two devices too; a kept result in panels chains into
// the next product, from a spill file too where it passed the host budget,
// and goes into a client's shared-memory region as one matrix;
// masked products in panels equal them in one piece; a
// workspace as wide as B does not cut the panels to
// single rows; cancelled mid-panel, the job leaves nothing behind.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>

#include "core/job_run.hpp"
#include "core/panels/panel_stream.hpp"
#include "core/recipes/graph.hpp"
#include "core/region_transfer.hpp"
#include "core/spill_file.hpp"
#include "core_fixture.hpp"
#include "shm_file.hpp"
#include "spgemm/generate.hpp"
#include "spgemm/io.hpp"
#include "spgemm/reference.hpp"
#include "test_matrices.hpp"

namespace spgemmd::testing {
namespace {

using namespace std::chrono_literals;
using csr = spgemm::csr_matrix<double>;

// The core on `devices` CPU backends of `budget` bytes each.
struct cpu_core {
  std::vector<std::shared_ptr<spgemm::backend>> backends;
  std::unique_ptr<core::matrix_cache> cache;
  std::unique_ptr<core::scheduler> sched;
  core::estimate_memo memo{64};

  cpu_core(int devices, std::size_t budget, std::size_t host_budget = std::size_t{2} << 30) {
    for (int i = 0; i < devices; ++i) backends.push_back(spgemm::make_cpu_backend(2, i));
    cache = std::make_unique<core::matrix_cache>(backends, std::vector<std::size_t>(devices, budget), host_budget, 0);
    sched = std::make_unique<core::scheduler>(*cache, 64, 2);
    cache->set_on_freed([s = sched.get()] { s->poke(); });
  }
  ~cpu_core() {
    sched->stop();
    sched.reset();
    cache.reset();
  }

  std::string store(const csr& m) {
    spgemm::any_csr copy = m;
    return cache->insert_host(as_tenant(""), copy, "", 0).handle;
  }

  std::shared_ptr<core::job> product(const std::string& a, const std::string& b) {
    std::shared_ptr<core::job> j;
    EXPECT_TRUE(core::multiply_job(memo, cache->acquire(as_tenant(""), a), cache->acquire(as_tenant(""), b), {}, 0, &j).ok());
    return j;
  }

  // A B kept: the entry's matrix, wherever it lives.
  csr kept(const std::string& a, const std::string& b, core::entry_info* entry = nullptr) {
    core::job_run run(*cache, *sched, as_tenant(""), true, "", core::steady::now());
    return kept_from(run, product(a, b), entry);
  }
  // What job `j` kept, run by `run` (one that keeps its result).
  csr kept_from(core::job_run& run, std::shared_ptr<core::job> j, core::entry_info* entry = nullptr) {
    auto ended = submit(run, std::move(j));
    EXPECT_TRUE(ready_within(ended, 120s));
    const core::job_run::ending e = ended.get();
    EXPECT_TRUE(e.result.ok()) << e.result.message;
    if (entry != nullptr) *entry = e.kept;
    core::pin p = cache->acquire(as_tenant(""), e.kept.handle);
    int device = -1;
    std::shared_ptr<spgemm::stored_matrix> stored;
    std::shared_ptr<const core::host_matrix> host;
    cache->locate(*p, &device, &stored, &host);
    return std::get<csr>(host ? *host->whole() : backends[static_cast<std::size_t>(device)]->fetch(*stored));
  }

  // A B streamed in panels: their rows put together in order.
  csr streamed(const std::string& a, const std::string& b) {
    core::job_run run(*cache, *sched, as_tenant(""), false, "", core::steady::now());
    return streamed_from(run, product(a, b));
  }
  // The panels job `j` streamed, run by `run` (one that streams its result).
  csr streamed_from(core::job_run& run, std::shared_ptr<core::job> j) {
    auto ended = submit(run, std::move(j));
    csr c;
    c.rows = 0;
    std::thread consumer([&] {
      std::optional<core::device_panel> p;
      core::outcome why;
      while (run.panels()->next(&p, &why) == core::panel_stream::state::panel) {
        EXPECT_EQ(p->first_row, c.rows);
        spgemm::any_csr rows = csr{};
        std::get<csr>(rows).cols = p->rows->info().cols;
        std::get<csr>(rows).rows = 0;
        p->backend->append_rows(*p->rows, 0, p->rows->info().rows, rows);
        const csr& r = std::get<csr>(rows);
        const spgemm::offset_t base = c.nnz();
        for (std::size_t i = 1; i < r.row_offsets.size(); ++i) c.row_offsets.push_back(base + r.row_offsets[i]);
        c.col_indices.insert(c.col_indices.end(), r.col_indices.begin(), r.col_indices.end());
        c.values.insert(c.values.end(), r.values.begin(), r.values.end());
        c.rows += r.rows;
        c.cols = r.cols;
        p.reset();
      }
    });
    EXPECT_TRUE(ready_within(ended, 120s));
    consumer.join();
    const core::job_run::ending e = ended.get();
    EXPECT_TRUE(e.result.ok()) << e.result.message;
    EXPECT_EQ(e.product, nullptr) << "streamed in one piece, not in panels";
    return c;
  }

  void expect_within_budget(std::size_t budget) {
    for (std::size_t d = 0; d < backends.size(); ++d) {
      EXPECT_LE(backends[d]->memory().peak_bytes, budget) << backends[d]->name();
      EXPECT_LE(cache->stats().devices[d].peak_used, budget) << backends[d]->name();
    }
  }
};

void expect_identical(const csr& got, const csr& want) {
  ASSERT_EQ(got.rows, want.rows);
  ASSERT_EQ(got.cols, want.cols);
  ASSERT_EQ(got.row_offsets, want.row_offsets);
  ASSERT_EQ(got.col_indices, want.col_indices);
  EXPECT_EQ(got.values, want.values);
}

// A budget that holds A but not A A in one piece: about a fifth of the
// product's estimate per panel.
std::size_t budget_for(const csr& a, const csr& b) {
  auto cpu = spgemm::make_cpu_backend(2);
  const auto sa = cpu->store(a);
  const auto sb = cpu->store(b);
  const std::size_t estimate = cpu->estimate_multiply(*sa, *sb, {}).total();
  return a.bytes() + b.bytes() + estimate / 2;
}

// A A in panels, kept and streamed, on one device and on two.
void expect_panels_equal_one_piece(const csr& a, int devices) {
  const csr want = spgemm::cpu_multiply(a, a, 2);
  const std::size_t budget = budget_for(a, a);
  cpu_core core(devices, budget);
  const std::string h = core.store(a);
  for (auto& b : core.backends) b->reset_peak();
  core::entry_info entry;
  expect_identical(core.kept(h, h, &entry), want);
  EXPECT_FALSE(entry.on_device);
  expect_identical(core.streamed(h, h), want);
  core.expect_within_budget(budget);
  if (devices > 1) {
    EXPECT_GT(core.cache->stats().devices[1].bytes_from_peer, 0);
  }
}

TEST(panels_cpu, the_shared_matrices_in_panels_equal_their_products_in_one_piece) {
  const auto files = spgemm::testing::shared_matrix_files();
  if (files.empty()) GTEST_SKIP() << "no shared matrices found (set SPGEMM_MATRICES): skipped";
  for (const auto& file : files) {
    SCOPED_TRACE(file);
    const csr a = spgemm::testing::with_random_values(spgemm::read_matrix_market(file), 42);
    if (a.rows != a.cols) continue;
    expect_panels_equal_one_piece(a, 1);
  }
}

TEST(panels_cpu, a_workspace_as_wide_as_b_leaves_panels_of_many_rows) {
  // About two entries a row over 10^5 columns, a road network's shape: every
  // panel's accumulators, as wide as B, take about what A does. Cut as if
  // the estimate grew with the rows alone, the panels shrank to single rows.
  const csr a = spgemm::testing::random_csr<double>(100000, 100000, 4, 7);
  const std::size_t budget = budget_for(a, a);
  cpu_core core(1, budget);
  const std::string h = core.store(a);
  core::job_run run(*core.cache, *core.sched, as_tenant(""), true, "", core::steady::now());
  const std::shared_ptr<core::job> j = core.product(h, h);
  auto ended = submit(run, j);
  ASSERT_TRUE(ready_within(ended, 60s));
  ASSERT_TRUE(ended.get().result.ok());
  const std::string& method = j->step_sized.method;  // "row panels (N on cpu): gustavson"
  ASSERT_EQ(method.rfind("row panels (", 0), 0u) << method;
  EXPECT_LE(std::stoi(method.substr(12)), 16) << method;
  core.expect_within_budget(budget);
}

TEST(panels_cpu, random_and_structured_matrices_in_panels_over_two_devices) {
  for (const csr& a : {spgemm::testing::random_csr<double>(3000, 3000, 40, 5), spgemm::generate("rmat:12:16"),
                       spgemm::generate("poisson3d27:16"), spgemm::generate("elasticity3d:8")}) {
    expect_panels_equal_one_piece(a, 2);
  }
}

TEST(panels_cpu, masked_products_in_panels_equal_them_in_one_piece) {
  const csr a = spgemm::testing::with_random_values(spgemm::generate("rmat:12:16"), 5);
  const csr m = spgemm::testing::random_csr<double>(a.rows, a.cols, 60, 6);
  for (const bool complement : {false, true}) {
    SCOPED_TRACE(complement ? "C<!M>" : "C<M>");
    const spgemm::mask_options how{complement, true};
    const csr want = spgemm::cpu_masked_multiply(a, a, m, how, {}, 2);
    // A budget that holds the operands but not the product's estimate.
    auto cpu = spgemm::make_cpu_backend(2);
    const std::size_t estimate =
        cpu->estimate_masked_multiply(*cpu->store(a), *cpu->store(a), *cpu->store(m), how, {}).total();
    const std::size_t budget = 2 * a.bytes() + m.bytes() + estimate / 3;
    cpu_core core(1, budget);
    const std::string ha = core.store(a), hm = core.store(m);
    for (const bool keep : {true, false}) {
      core::job_run run(*core.cache, *core.sched, as_tenant(""), keep, "", core::steady::now());
      std::shared_ptr<core::job> j;
      auto operand = [&](const std::string& h) { return core::graph_operand{core.cache->acquire(as_tenant(""), h)}; };
      ASSERT_TRUE(core::mxm_job(core.memo, operand(ha), operand(ha), operand(hm), how, {}, 0, &j).ok());
      const csr got = keep ? core.kept_from(run, j) : core.streamed_from(run, j);
      EXPECT_EQ(j->step_sized.method.rfind("row panels (", 0), 0u) << j->step_sized.method;
      expect_identical(got, want);
    }
    core.expect_within_budget(budget);
  }
}

TEST(panels_cpu, a_kept_result_in_panels_chains_into_the_next_product) {
  const csr a = spgemm::generate("poisson3d27:14");
  const csr aa = spgemm::cpu_multiply(a, a, 2);
  const std::size_t budget = a.bytes() + aa.bytes() / 2;  // A A does not fit
  cpu_core core(1, budget);
  const std::string h = core.store(a);
  core::entry_info c;
  expect_identical(core.kept(h, h, &c), aa);
  ASSERT_FALSE(c.on_device);
  // (A A) A: its left operand in host memory, larger than the device.
  ASSERT_GT(c.bytes, budget);
  expect_identical(core.streamed(c.handle, h), spgemm::cpu_multiply(aa, a, 2));
  core.expect_within_budget(budget);
}

TEST(panels_cpu, a_kept_result_in_panels_goes_into_a_region_as_one_matrix) {
  const csr a = spgemm::generate("poisson3d27:14");
  const csr aa = spgemm::cpu_multiply(a, a, 2);
  cpu_core core(1, a.bytes() + aa.bytes() / 2);
  const std::string h = core.store(a);
  core::entry_info c;
  core.kept(h, h, &c);
  core::pin p = core.cache->acquire(as_tenant(""), c.handle);
  int device = -1;
  std::shared_ptr<spgemm::stored_matrix> stored;
  std::shared_ptr<const core::host_matrix> host;
  core.cache->locate(*p, &device, &stored, &host);
  ASSERT_NE(host, nullptr);
  ASSERT_GT(host->blocks().size(), 1u) << "a block a panel";

  const auto length = static_cast<int64_t>(aa.bytes()) + 256;
  core::csr_layout layout;
  bool fits = false;
  ASSERT_TRUE(core::layout_of(c.info, length, &layout, &fits).ok());
  ASSERT_TRUE(fits);
  shm_file file(length);
  core::region_registry regions(4);
  const std::string session = regions.open_session(as_tenant(""));
  ASSERT_TRUE(regions.add(as_tenant(""), {"r", file.key(), session, 0, length, ""}).ok());
  core::region_span span;
  ASSERT_TRUE(regions.resolve(as_tenant(""), "r", 0, length, 8, "result", &span).ok());
  core::row_blocks rows(*core.cache, *p, 1 << 16);
  ASSERT_TRUE(core::write_rows(rows, span, layout).ok());
  const auto read = [&](int64_t at, std::size_t n, auto zero) {
    std::vector<decltype(zero)> out(n);
    const std::vector<char> bytes = file.read(at, static_cast<int64_t>(n * sizeof zero));
    std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
  };
  EXPECT_EQ(read(layout.row_offsets, aa.row_offsets.size(), spgemm::offset_t{0}), aa.row_offsets);
  EXPECT_EQ(read(layout.col_indices, aa.col_indices.size(), spgemm::index_t{0}), aa.col_indices);
  EXPECT_EQ(read(layout.values, aa.values.size(), 0.0), aa.values);
}

TEST(panels_cpu, a_kept_product_past_the_host_budget_goes_on_in_the_spill_file) {
  const csr a = spgemm::generate("poisson3d27:14");
  const csr aa = spgemm::cpu_multiply(a, a, 2);
  const std::size_t budget = a.bytes() + aa.bytes() / 2;  // A A fits no device
  const std::size_t host_budget = a.bytes() + aa.bytes() / 3;  // nor host memory
  cpu_core core(1, budget, host_budget);
  auto space = std::make_shared<core::spill_space>(::testing::TempDir(), aa.bytes());
  core.cache->set_spill(space);
  const std::string h = core.store(a);
  core::entry_info c;
  expect_identical(core.kept(h, h, &c), aa);  // read back from the file
  EXPECT_GT(space->used(), aa.bytes() / 3);
  EXPECT_LE(core.cache->stats().host_bytes, host_budget);
  // (A A) A: its left operand's panels read from the file.
  expect_identical(core.streamed(c.handle, h), spgemm::cpu_multiply(aa, a, 2));
  ASSERT_TRUE(core.cache->erase(as_tenant(""), c.handle).has_value());
  EXPECT_EQ(space->used(), 0u);

  // Past the spill budget too: the job fails and leaves nothing behind.
  auto small = std::make_shared<core::spill_space>(::testing::TempDir(), aa.bytes() / 8);
  core.cache->set_spill(small);
  core::job_run run(*core.cache, *core.sched, as_tenant(""), true, "", core::steady::now());
  auto ended = submit(run, core.product(h, h));
  ASSERT_TRUE(ready_within(ended, 60s));
  const core::job_run::ending e = ended.get();
  EXPECT_EQ(e.result.code, core::status::does_not_fit);
  EXPECT_NE(e.result.message.find("spill budget"), std::string::npos) << e.result.message;
  EXPECT_EQ(small->used(), 0u);
  EXPECT_EQ(core.cache->stats().host_bytes, core.cache->stats_of("").host);
  EXPECT_EQ(core.cache->stats().matrices, 1);
}

TEST(panels_cpu, cancelled_mid_panel_it_frees_everything) {
  const csr a = spgemm::generate("rmat:13:16");
  const std::size_t budget = budget_for(a, a);
  cpu_core core(2, budget);
  const std::string h = core.store(a);
  for (const bool keep : {true, false}) {
    core::job_run run(*core.cache, *core.sched, as_tenant(""), keep, "", core::steady::now());
    auto ended = submit(run, core.product(h, h));
    ASSERT_TRUE(eventually([&] { return core.cache->stats().devices[0].bytes_to_host > 0; }));  // a panel done
    run.cancel();
    ASSERT_TRUE(ready_within(ended, 60s));
    EXPECT_EQ(ended.get().result.code, core::status::cancelled);
    ASSERT_TRUE(eventually([&] {
      const core::cache_stats s = core.cache->stats();
      return s.host_bytes == 0 && s.devices[0].reserved == 0 && s.devices[1].reserved == 0 &&
             core.backends[0]->memory().in_use_bytes == a.bytes() && core.backends[1]->memory().in_use_bytes == 0;
    }));
    EXPECT_EQ(core.cache->stats().devices[0].panels_in_flight, 0);
  }
}

}  // namespace
}  // namespace spgemmd::testing
