// Products in row panels on fake backends (recipes/panelled_multiply): a
// product that can never fit its device in one piece runs in panels, kept
// in host memory or streamed in row order, never above a device's budget;
// over two devices both compute; a kept result chains into the next product;
// cancelled mid-panel, it leaves nothing behind. The cuts and the stream on
// their own first.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <utility>
#include <vector>

#include "core/host_matrix.hpp"
#include "core/job_run.hpp"
#include "core/panels/panel_cuts.hpp"
#include "core/panels/panel_stream.hpp"
#include "core_fixture.hpp"

namespace spgemmd::testing {
namespace {

using namespace std::chrono_literals;

spgemm::row_work uniform_work(int64_t rows, int64_t entries, int64_t products) {
  spgemm::row_work w;
  w.entries.assign(static_cast<std::size_t>(rows), entries);
  w.products.assign(static_cast<std::size_t>(rows), products);
  return w;
}

TEST(panel_cuts, cut_the_most_rows_that_fit_on_aligned_rows) {
  const core::panel_cuts cuts(uniform_work(1000, 10, 50), 20, 8, 8);
  EXPECT_EQ(cuts.rows(), 1000);
  EXPECT_EQ(cuts.operand_bytes(0, 10), 11 * 8 + 100 * 12u);
  EXPECT_EQ(cuts.c_bound_entries(0, 10), 200);  // min(products, cols of B) per row
  EXPECT_EQ(cuts.c_bound_bytes(0, 10), 11 * 8 + 200 * 12u);
  const double budget = cuts.panel_bytes(0, 100, 1.0);
  EXPECT_EQ(cuts.cut(0, 1000, 1.0, budget), 96);  // 100 fit; cut on a multiple of 12
  EXPECT_EQ(cuts.cut(96, 1000, 1.0, budget), 192);
  EXPECT_EQ(cuts.cut(960, 1000, 1.0, budget), 1000);  // the rest
  EXPECT_EQ(cuts.cut(0, 1000, 2.0, budget), 60);      // twice the bytes per row of C
  EXPECT_EQ(cuts.cut(0, 1000, 1.0, 1.0), 1);          // not one row fits: one row
  EXPECT_EQ(cuts.cut(0, 5, 1.0, budget), 5);          // up to the limit
  EXPECT_EQ(cuts.cut(3, 1000, 1.0, cuts.panel_bytes(3, 10, 1.0)), 10);  // too few rows to align
}

TEST(panel_cuts, a_masks_rows_go_with_as_and_bound_c_where_it_allows) {
  core::panel_mask_rows m;
  m.entries.assign(1000, 5);
  m.value_bytes = 4;
  m.bounds_c = true;  // C<M>: 5 entries a row at most
  const core::panel_cuts allowed(uniform_work(1000, 10, 50), 20, 8, 8, &m);
  EXPECT_EQ(allowed.operand_bytes(0, 10), 11 * 8 + 100 * 12u + 11 * 8 + 50 * 8u);
  EXPECT_EQ(allowed.c_bound_entries(0, 10), 50);
  m.bounds_c = false;  // C<!M>: B's columns bound it
  const core::panel_cuts forbidden(uniform_work(1000, 10, 50), 20, 8, 8, &m);
  EXPECT_EQ(forbidden.c_bound_entries(0, 10), 200);
}

TEST(panel_cuts, never_cut_more_entries_than_32_bits_count) {
  spgemm::row_work w = uniform_work(4, 1, int64_t{1} << 30);
  const core::panel_cuts cuts(w, int64_t{1} << 31, 8, 8);
  EXPECT_EQ(cuts.cut(0, 4, 1.0, 1e300), 1);  // two rows would hold 2^31 entries
}

TEST(host_matrix, reads_rows_across_its_blocks) {
  const spgemm::any_csr whole = filled_matrix(square(30, 200));
  std::vector<core::host_matrix::block> blocks;
  for (const auto& [begin, end] : {std::pair<int64_t, int64_t>{0, 7}, {7, 8}, {8, 30}}) {
    blocks.push_back({begin, std::make_shared<const spgemm::any_csr>(spgemm::row_block(whole, begin, end)), nullptr});
  }
  const core::host_matrix m(blocks);
  EXPECT_EQ(m.info().rows, 30);
  EXPECT_EQ(m.info().nnz, 200);
  EXPECT_EQ(m.bytes(), square(30, 200).bytes() + 2 * sizeof(spgemm::offset_t));
  using csr = spgemm::csr_matrix<double>;
  auto same = [](const csr& a, const csr& b) {
    return a.rows == b.rows && a.row_offsets == b.row_offsets && a.col_indices == b.col_indices;
  };
  EXPECT_TRUE(same(std::get<csr>(*m.whole()), std::get<csr>(whole)));
  EXPECT_TRUE(same(std::get<csr>(m.rows(5, 20)), std::get<csr>(spgemm::row_block(whole, 5, 20))));
  EXPECT_TRUE(same(std::get<csr>(m.rows(7, 8)), std::get<csr>(spgemm::row_block(whole, 7, 8))));
  EXPECT_THROW(core::host_matrix({blocks[0], blocks[2]}), spgemm::error);  // rows missing
}

// A panel whose device frees it counts into `freed`.
core::device_panel panel(int64_t first, int64_t rows, std::atomic<int>& freed) {
  static const auto device = std::make_shared<fake_backend>();  // outlives every panel (ASan: a temporary did not)
  return core::device_panel(first, 0, nullptr, device->allocate(square(rows, 0)), [&freed] { ++freed; });
}

TEST(panel_stream, hands_panels_over_in_row_order) {
  core::panel_stream s;
  std::atomic<int> freed{0}, woken{0};
  std::vector<int64_t> shape_rows;
  s.when_open([&](const spgemm::matrix_info& m) { shape_rows.push_back(m.rows); });
  s.open(square(30, -1));
  ASSERT_EQ(shape_rows, std::vector<int64_t>{30});
  std::optional<core::device_panel> p;
  core::outcome why;
  EXPECT_EQ(s.poll(&p, [&] { ++woken; }, &why), core::panel_stream::state::waiting);
  s.put(panel(10, 10, freed));  // out of order: nobody woken
  EXPECT_EQ(woken, 0);
  s.put(panel(0, 10, freed));
  EXPECT_EQ(woken, 1);
  ASSERT_EQ(s.poll(&p, nullptr, &why), core::panel_stream::state::panel);
  EXPECT_EQ(p->first_row, 0);
  p.reset();
  EXPECT_EQ(freed, 1);
  ASSERT_EQ(s.next(&p, &why), core::panel_stream::state::panel);
  EXPECT_EQ(p->first_row, 10);
  s.put(panel(20, 10, freed));
  s.close({});
  ASSERT_EQ(s.next(&p, &why), core::panel_stream::state::panel);
  EXPECT_EQ(p->first_row, 20);
  EXPECT_EQ(s.next(&p, &why), core::panel_stream::state::finished);
  p.reset();
  EXPECT_EQ(freed, 3);
}

TEST(panel_stream, a_failure_or_a_consumer_gone_frees_what_waits) {
  std::atomic<int> freed{0};
  core::panel_stream failing;
  failing.open(square(30, -1));
  failing.put(panel(10, 10, freed));
  failing.close({core::status::device_failure, "lost"});
  EXPECT_EQ(freed, 1);
  std::optional<core::device_panel> p;
  core::outcome why;
  EXPECT_EQ(failing.next(&p, &why), core::panel_stream::state::failed);
  EXPECT_EQ(why.message, "lost");

  core::panel_stream gone;
  gone.open(square(30, -1));
  gone.put(panel(10, 10, freed));
  gone.abandon();
  gone.put(panel(0, 10, freed));
  EXPECT_EQ(freed, 3);
}

// ---- products in panels through the scheduler -------------------------------

// A: 1000 rows of 10 entries; A A has 4 entries per entry of A (nnz_factor).
const spgemm::matrix_info a_shape = square(1000, 10000);

struct panels_test : ::testing::Test {
  core::estimate_memo memo{64};
  const spgemm::matrix_info c_shape = square(1000, 40000);
  // Less than A and A A in one piece: about a tenth of C per panel.
  const std::size_t budget = a_shape.bytes() + c_shape.bytes() * 6 / 10;

  std::unique_ptr<core_fixture> make(int devices) {
    auto f = std::make_unique<core_fixture>(devices, budget, std::size_t{64} << 20, 64, 2);
    for (auto& fake : f->fakes) fake->set_nnz_factor(4);
    return f;
  }

  // A B kept (or streamed), from the call's side.
  std::future<core::job_run::ending> multiply(core_fixture& f, core::job_run& run, const std::string& a,
                                              const std::string& b) {
    std::shared_ptr<core::job> j;
    EXPECT_TRUE(core::multiply_job(memo, f.pin(a), f.pin(b), {}, 0, &j).ok());
    return submit(run, j);
  }

  void expect_within_budgets(core_fixture& f) {
    for (int d = 0; d < static_cast<int>(f.fakes.size()); ++d) {
      EXPECT_LE(f.fake(d).peak(), budget) << "device " << d;
      EXPECT_LE(f.device(d).peak_used, budget) << "device " << d;
    }
  }

  // Nothing held but the cached matrices, on any device or the host.
  void expect_only_cached(core_fixture& f, std::size_t host_bytes) {
    ASSERT_TRUE(eventually([&] {
      for (int d = 0; d < static_cast<int>(f.fakes.size()); ++d) {
        if (f.device(d).reserved != 0 || f.fake(d).allocated() != f.device(d).cached) return false;
      }
      return f.cache->stats().host_bytes == host_bytes;
    }));
    for (int d = 0; d < static_cast<int>(f.fakes.size()); ++d) EXPECT_EQ(f.device(d).panels_in_flight, 0);
  }
};

TEST_F(panels_test, a_product_too_large_for_its_device_is_kept_in_host_memory) {
  auto f = make(1);
  const std::string a = f->upload(a_shape);
  core::job_run run(*f->cache, *f->sched, as_tenant(""), /*keep=*/true, "c", core::steady::now());
  auto ended = multiply(*f, run, a, a);
  ASSERT_TRUE(ready_within(ended, 10s));
  const core::job_run::ending e = ended.get();
  ASSERT_TRUE(e.result.ok()) << e.result.message;
  EXPECT_FALSE(e.kept.on_device);
  EXPECT_EQ(e.kept.info.rows, 1000);
  EXPECT_EQ(e.kept.info.nnz, 40000);
  EXPECT_EQ(run.report().nnz, 40000);
  EXPECT_EQ(run.report().flops, 2.0 * 40000);
  EXPECT_NE(run.report().algorithm.find("row panels ("), std::string::npos) << run.report().algorithm;
  EXPECT_GE(f->fake().products_run(), 8);
  EXPECT_GE(e.kept.bytes, c_shape.bytes());  // and the first offset of each block but one
  ASSERT_TRUE(eventually([&] { return f->cache->stats().host_bytes == e.kept.bytes; }));
  const core::device_stats d = f->device();
  EXPECT_GE(d.bytes_to_host, static_cast<int64_t>(c_shape.bytes()) - 8);
  EXPECT_GT(f->sched->stats().completed, 0);
  expect_within_budgets(*f);
  expect_only_cached(*f, e.kept.bytes);
}

TEST_F(panels_test, a_streamed_product_comes_in_row_order_while_it_computes) {
  auto f = make(1);
  f->fake().set_delay(2ms);
  const std::string a = f->upload(a_shape);
  core::job_run run(*f->cache, *f->sched, as_tenant(""), /*keep=*/false, "", core::steady::now());
  std::vector<int64_t> firsts;
  int64_t rows = 0, nnz = 0;
  std::thread consumer;
  std::atomic<bool> opened{false};
  auto ended = multiply(*f, run, a, a);
  run.panels()->when_open([&](const spgemm::matrix_info& shape) {
    EXPECT_EQ(shape.rows, 1000);
    EXPECT_EQ(shape.nnz, -1);  // not known until the last panel
    opened = true;
  });
  consumer = std::thread([&] {
    while (true) {
      std::optional<core::device_panel> p;
      core::outcome why;
      if (run.panels()->next(&p, &why) != core::panel_stream::state::panel) break;
      EXPECT_EQ(p->first_row, rows);
      firsts.push_back(p->first_row);
      rows += p->rows->info().rows;
      nnz += p->rows->info().nnz;
    }
  });
  ASSERT_TRUE(ready_within(ended, 10s));
  consumer.join();
  const core::job_run::ending e = ended.get();
  ASSERT_TRUE(e.result.ok()) << e.result.message;
  EXPECT_TRUE(opened);
  EXPECT_EQ(e.product, nullptr);
  EXPECT_EQ(rows, 1000);
  EXPECT_EQ(nnz, 40000);
  EXPECT_EQ(run.report().nnz, 40000);
  EXPECT_GE(firsts.size(), 8u);
  expect_within_budgets(*f);
  expect_only_cached(*f, 0);
}

TEST_F(panels_test, a_product_in_panels_uses_every_device_with_room) {
  auto f = make(2);
  for (auto& fake : f->fakes) fake->set_delay(2ms);
  const std::string a = f->upload(a_shape);
  core::job_run run(*f->cache, *f->sched, as_tenant(""), /*keep=*/true, "", core::steady::now());
  auto ended = multiply(*f, run, a, a);
  ASSERT_TRUE(ready_within(ended, 10s));
  const core::job_run::ending e = ended.get();
  ASSERT_TRUE(e.result.ok()) << e.result.message;
  EXPECT_EQ(e.kept.info.nnz, 40000);
  EXPECT_GT(f->fake(0).products_run(), 0);
  EXPECT_GT(f->fake(1).products_run(), 0);
  EXPECT_GT(f->device(1).bytes_from_peer, 0);  // B, and A's rows, copied over
  EXPECT_NE(run.report().algorithm.find("on fake1"), std::string::npos) << run.report().algorithm;
  expect_within_budgets(*f);
  expect_only_cached(*f, e.kept.bytes);
}

TEST_F(panels_test, a_kept_result_in_host_memory_chains_into_the_next_product) {
  auto f = make(1);
  const std::string a = f->upload(a_shape);
  core::job_run first(*f->cache, *f->sched, as_tenant(""), true, "c", core::steady::now());
  auto c = multiply(*f, first, a, a);
  ASSERT_TRUE(ready_within(c, 10s));
  const core::entry_info kept = c.get().kept;
  ASSERT_FALSE(kept.on_device);
  // C A: C does not fit the device (its rows come from the host); streamed.
  f->fake().set_nnz_factor(1);
  core::job_run second(*f->cache, *f->sched, as_tenant(""), false, "", core::steady::now());
  auto ca = multiply(*f, second, kept.handle, a);
  std::thread drain([&] {
    std::optional<core::device_panel> p;
    core::outcome why;
    while (second.panels()->next(&p, &why) == core::panel_stream::state::panel) p.reset();
  });
  ASSERT_TRUE(ready_within(ca, 10s));
  drain.join();
  const core::job_run::ending e = ca.get();
  ASSERT_TRUE(e.result.ok()) << e.result.message;
  EXPECT_EQ(second.report().nnz, 40000);
  EXPECT_GT(f->device().bytes_to_device, static_cast<int64_t>(kept.bytes) / 2);  // C's rows, panel by panel
  expect_within_budgets(*f);
  expect_only_cached(*f, kept.bytes);
}

TEST_F(panels_test, cancelled_mid_panel_it_frees_everything) {
  auto f = make(2);
  for (auto& fake : f->fakes) fake->set_delay(20ms);
  const std::string a = f->upload(a_shape);
  for (const bool keep : {true, false}) {
    core::job_run run(*f->cache, *f->sched, as_tenant(""), keep, "", core::steady::now());
    auto ended = multiply(*f, run, a, a);
    ASSERT_TRUE(eventually([&] { return f->fake(0).products_run() + f->fake(1).products_run() >= 2; }));
    run.cancel();
    ASSERT_TRUE(ready_within(ended, 10s));
    EXPECT_EQ(ended.get().result.code, core::status::cancelled);
    expect_only_cached(*f, 0);
    EXPECT_EQ(f->cache->stats().matrices, 1);
    for (auto& fake : f->fakes) fake->reset_peak();
  }
}

TEST_F(panels_test, a_kept_product_past_the_host_budget_fails_and_frees_everything) {
  core_fixture f(2, budget, c_shape.bytes() / 3, 64, 2);
  for (auto& fake : f.fakes) fake->set_nnz_factor(4);
  const std::string a = f.upload(a_shape);
  core::job_run run(*f.cache, *f.sched, as_tenant(""), true, "", core::steady::now());
  auto ended = multiply(f, run, a, a);
  ASSERT_TRUE(ready_within(ended, 10s));
  const core::job_run::ending e = ended.get();
  EXPECT_EQ(e.result.code, core::status::does_not_fit);
  EXPECT_NE(e.result.message.find("host budget"), std::string::npos) << e.result.message;
  expect_only_cached(f, 0);
  EXPECT_EQ(f.cache->stats().matrices, 1);
}

// Measuring A's rows on its device takes 16 bytes a row of the lane's room;
// where the room is smaller, they are measured on the host (before: the job
// waited for room that could never come).
TEST_F(panels_test, rows_of_a_too_many_to_measure_on_the_device_are_measured_on_the_host) {
  const spgemm::matrix_info thin = square(1000, 1000);  // one entry a row
  const std::size_t small = thin.bytes() + 2 * 15000;   // lane 0's room: 15,000 bytes < 16 x 1000
  core_fixture f(1, small, std::size_t{64} << 20, 64, 1);
  f.fake().set_nnz_factor(4);  // A A: 4,000 entries, 56 kB, past the budget in one piece
  const std::string a = f.upload(thin);
  core::job_run run(*f.cache, *f.sched, as_tenant(""), true, "", core::steady::now());
  auto ended = multiply(f, run, a, a);
  ASSERT_TRUE(ready_within(ended, 10s));
  const core::job_run::ending e = ended.get();
  ASSERT_TRUE(e.result.ok()) << e.result.message;
  EXPECT_EQ(e.kept.info.nnz, 4000);
  EXPECT_NE(run.report().algorithm.find("row panels ("), std::string::npos) << run.report().algorithm;
  EXPECT_LE(f.fake().peak(), small);
  expect_only_cached(f, e.kept.bytes);
}

TEST_F(panels_test, a_row_too_large_for_any_panel_is_refused) {
  core_fixture f(1, a_shape.bytes() * 2, std::size_t{64} << 20, 64, 1);
  f.fake().set_nnz_factor(1000);  // 10,000 entries per row of C
  f.fake().set_workspace(a_shape.bytes() * 2);
  const std::string a = f.upload(a_shape);
  core::job_run run(*f.cache, *f.sched, as_tenant(""), true, "", core::steady::now());
  auto ended = multiply(f, run, a, a);
  ASSERT_TRUE(ready_within(ended, 10s));
  const core::job_run::ending e = ended.get();
  EXPECT_EQ(e.result.code, core::status::does_not_fit);
  EXPECT_NE(e.result.message.find("alone needs"), std::string::npos) << e.result.message;
  expect_only_cached(f, 0);
}

}  // namespace
}  // namespace spgemmd::testing
