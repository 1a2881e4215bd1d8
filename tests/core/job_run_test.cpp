// A job's course for its call (core::job_run): a streamed result handed
// over, a kept one stored, a repeated kept product announced while it runs
// and kept under the announced handle, and what it reports.
#include <gtest/gtest.h>

#include "core/job_run.hpp"
#include "core_fixture.hpp"

namespace spgemmd::testing {
namespace {

using namespace std::chrono_literals;

const spgemm::matrix_info small = square(100, 1000);

struct job_run_test : ::testing::Test {
  core::estimate_memo memo{64};

  std::shared_ptr<core::job> square_of(core_fixture& f, const std::string& a) { return f.square_of(memo, a); }

  // Keeps A * A once, so that the memo knows the size it gives.
  // A * A kept; its handle.
  std::string keep_square_once(core_fixture& f, const std::string& a) {
    core::job_run first(*f.cache, *f.sched, as_tenant(""), true, "", core::steady::now());
    auto ended = submit(first, square_of(f, a));
    EXPECT_TRUE(ready_within(ended, 5s));
    const core::job_run::ending e = ended.get();
    EXPECT_TRUE(e.result.ok());
    return e.kept.handle;
  }
};

TEST_F(job_run_test, a_streamed_result_is_handed_over_with_its_reservation) {
  core_fixture f(1, 1 << 20, 0);
  const std::string a = f.upload(small);
  core::job_run run(*f.cache, *f.sched, as_tenant(""), /*keep=*/false, "", core::steady::now());
  auto ended = submit(run, square_of(f, a));
  EXPECT_FALSE(run.promise());  // nothing is announced for a streamed result
  ASSERT_TRUE(ready_within(ended, 5s));
  core::job_run::ending e = ended.get();
  ASSERT_TRUE(e.result.ok()) << e.result.message;
  ASSERT_NE(e.product, nullptr);
  EXPECT_EQ(e.backend.get(), &f.fake());
  EXPECT_EQ(e.held.bytes(), e.product->info().bytes());
  EXPECT_TRUE(run.over());
  const core::job_report& r = run.report();
  EXPECT_EQ(r.algorithm, "fake");
  EXPECT_EQ(r.device, "fake0");
  EXPECT_EQ(r.nnz, 1000);
  EXPECT_EQ(r.flops, 2000);
  EXPECT_GE(r.max_estimate, e.product->info().bytes());
  EXPECT_EQ(f.cache->stats().matrices, 1);  // nothing kept
}

TEST_F(job_run_test, a_kept_result_goes_into_the_cache_and_its_reservation_with_it) {
  core_fixture f(1, 1 << 20, 0);
  const std::string a = f.upload(small);
  core::job_run run(*f.cache, *f.sched, as_tenant(""), /*keep=*/true, "a2", core::steady::now());
  auto ended = submit(run, square_of(f, a));
  EXPECT_FALSE(run.promise());  // its size is not known before it first runs
  ASSERT_TRUE(ready_within(ended, 5s));
  const core::job_run::ending e = ended.get();
  ASSERT_TRUE(e.result.ok()) << e.result.message;
  EXPECT_EQ(e.product, nullptr);
  EXPECT_EQ(e.kept.name, "a2");
  EXPECT_EQ(e.kept.info.nnz, 1000);
  EXPECT_TRUE(f.cache->describe(as_tenant(""), e.kept.handle));
  EXPECT_EQ(f.device().reserved, 0u);
  EXPECT_EQ(f.device().cached, small.bytes() + core::entry_bytes(small, "a2"));  // its name counts too
  EXPECT_GE(run.phases(core::steady::now()).keep, 0);
}

TEST_F(job_run_test, a_repeated_kept_product_is_announced_while_it_runs_and_kept_under_that_handle) {
  core_fixture f(1, 1 << 20, 0);
  const std::string a = f.upload(small);
  keep_square_once(f, a);
  f.fake().close_gate();
  core::job_run again(*f.cache, *f.sched, as_tenant(""), true, "again", core::steady::now());
  auto ended = submit(again, square_of(f, a));
  ASSERT_TRUE(f.fake().wait_running(1));
  const std::optional<core::entry_info> announced = again.promise();
  ASSERT_TRUE(announced);
  ASSERT_TRUE(again.announce(*announced));
  EXPECT_EQ(announced->info.nnz, 1000);
  EXPECT_EQ(announced->name, "again");
  EXPECT_FALSE(f.cache->describe(as_tenant(""), announced->handle));  // not before it ends
  f.fake().open_gate();
  ASSERT_TRUE(ready_within(ended, 5s));
  const core::job_run::ending e = ended.get();
  ASSERT_TRUE(e.result.ok()) << e.result.message;
  EXPECT_EQ(e.kept.handle, announced->handle);
  EXPECT_TRUE(f.cache->describe(as_tenant(""), announced->handle));
  EXPECT_FALSE(again.promise());  // once over, never
  EXPECT_FALSE(again.announce(*announced));
}

TEST_F(job_run_test, an_announced_result_that_came_out_another_size_is_not_kept) {
  core_fixture f(1, 1 << 20, 0);
  const std::string a = f.upload(small);
  // Its size stays known, its structure goes with it: the product runs whole again.
  f.cache->erase(as_tenant(""), keep_square_once(f, a));
  f.fake().set_nnz_factor(2);
  f.fake().close_gate();
  core::job_run again(*f.cache, *f.sched, as_tenant(""), true, "", core::steady::now());
  auto ended = submit(again, square_of(f, a));
  ASSERT_TRUE(f.fake().wait_running(1));
  const std::optional<core::entry_info> announced = again.promise();
  ASSERT_TRUE(announced);
  ASSERT_TRUE(again.announce(*announced));
  f.fake().open_gate();
  ASSERT_TRUE(ready_within(ended, 5s));
  const core::job_run::ending e = ended.get();
  EXPECT_EQ(e.result.code, core::status::internal);
  EXPECT_NE(e.result.message.find("not the 1000 it had before"), std::string::npos) << e.result.message;
  EXPECT_EQ(f.cache->stats().matrices, 1);  // A alone
  EXPECT_TRUE(eventually([&] { return f.device().reserved == 0; }));
}

TEST_F(job_run_test, a_job_that_is_not_submitted_never_ends) {
  core_fixture f(1, 1 << 20, 0);
  const std::string a = f.upload(small);
  f.sched->stop();
  core::job_run run(*f.cache, *f.sched, as_tenant(""), false, "", core::steady::now());
  bool called = false;
  const core::outcome submitted = run.submit(square_of(f, a), [&](core::job_run::ending) { called = true; });
  EXPECT_EQ(submitted.code, core::status::shutting_down);
  EXPECT_FALSE(run.over());
  EXPECT_FALSE(called);
  run.cancel();  // harmless
}

TEST_F(job_run_test, cancelling_the_run_cancels_its_job) {
  core_fixture f(1, 1 << 20, 0);
  const std::string a = f.upload(small);
  f.fake().set_delay(30s);
  core::job_run run(*f.cache, *f.sched, as_tenant(""), false, "", core::steady::now());
  auto ended = submit(run, square_of(f, a));
  ASSERT_TRUE(f.fake().wait_running(1));
  run.cancel();
  ASSERT_TRUE(ready_within(ended, 5s));
  EXPECT_EQ(ended.get().result.code, core::status::cancelled);
}

}  // namespace
}  // namespace spgemmd::testing
