// Tenants in the core: a matrix is found by its own tenant (and an admin)
// only; each tenant's bytes stay within its quotas, its own cold matrices
// spilling first; its jobs wait at its running_jobs quota and are refused at
// its queued_jobs quota; tenants take turns in the queue, so one tenant's
// burst does not hold up another's job; Status shows a tenant its own part.
#include <gtest/gtest.h>

#include <mutex>
#include <vector>

#include "core/matrices.hpp"
#include "core/server_status.hpp"
#include "core/upload.hpp"
#include "core_fixture.hpp"

namespace spgemmd::testing {
namespace {

using namespace std::chrono_literals;

const spgemm::matrix_info small = square(100, 1000);
const core::caller admin{"ops", true, {}};

core::quotas device_quota(std::size_t bytes) {
  core::quotas q;
  q.device_bytes = bytes;
  return q;
}

struct tenant_test : ::testing::Test {
  core::estimate_memo memo{64};

  // A * A as `who`'s job, A the matrix `a`.
  std::shared_ptr<core::job> square_of(core_fixture& f, const std::string& a, const core::caller& who) {
    std::shared_ptr<core::job> j;
    const core::outcome built = core::multiply_job(memo, f.pin(a, who), f.pin(a, who), {}, 0, &j);
    EXPECT_TRUE(built.ok()) << built.message;
    j->owner = who;
    return j;
  }
};

TEST_F(tenant_test, another_tenant_finds_nothing_and_an_admin_everything) {
  core_fixture f(1, 4 * small.bytes(), 0);
  const std::string a = f.upload(small, as_tenant("alice"));
  EXPECT_FALSE(f.pin(a, as_tenant("bob")));
  EXPECT_FALSE(f.cache->describe(as_tenant("bob"), a));
  EXPECT_FALSE(f.cache->erase(as_tenant("bob"), a));
  EXPECT_TRUE(f.cache->list(as_tenant("bob")).empty());
  core::pin none;
  const core::outcome missing = core::pin_matrix(*f.cache, as_tenant("bob"), "a", a, &none);
  EXPECT_EQ(missing.code, core::status::not_found);
  EXPECT_EQ(missing.message, "no matrix with handle " + a + "; it may have expired or been deleted");

  const auto listed = f.cache->list(admin);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].tenant, "alice");
  EXPECT_TRUE(f.pin(a, admin));
  EXPECT_EQ(f.cache->describe(admin, a)->tenant, "alice");
  EXPECT_TRUE(f.cache->erase(admin, a));
  EXPECT_FALSE(f.cache->describe(as_tenant("alice"), a));
}

TEST_F(tenant_test, a_device_quota_spills_the_tenants_own_cold_matrices_not_others) {
  const std::size_t bytes = small.bytes();
  core_fixture f(1, 10 * bytes, 10 * bytes);
  const core::caller alice = as_tenant("alice", device_quota(2 * bytes));
  const std::string other = f.upload(small, as_tenant("bob"));
  const std::string first = f.upload(small, alice);
  f.upload(small, alice);
  f.upload(small, alice);  // over alice's quota: her coldest goes to the host
  EXPECT_FALSE(f.cache->describe(alice, first)->on_device);
  EXPECT_TRUE(f.cache->describe(as_tenant("bob"), other)->on_device);
  const core::tenant_stats held = f.cache->stats_of("alice");
  EXPECT_EQ(held.device[0], 2 * bytes);
  EXPECT_EQ(held.host, bytes);
  EXPECT_EQ(held.matrices, 3);
  EXPECT_EQ(f.cache->stats_of("bob").device[0], bytes);

  // Used by a job, it comes back to the device, and another of hers leaves.
  core::pin p = f.pin(first, alice);
  ASSERT_NE(f.cache->make_resident(*p, 0), nullptr);
  EXPECT_EQ(f.cache->stats_of("alice").device[0], 2 * bytes);
  f.cache->release_resident(*p);
}

TEST_F(tenant_test, a_matrix_no_quota_holds_is_refused_naming_the_quota) {
  const std::size_t bytes = small.bytes();
  core_fixture f(1, 10 * bytes, 10 * bytes);
  core::quotas q;
  q.device_bytes = bytes;
  q.host_bytes = bytes;
  const core::caller alice = as_tenant("alice", q);
  f.upload(small, alice);
  f.upload(small, alice);  // the first spills to the host
  try {
    f.upload(small, alice);
    ADD_FAILURE() << "a third matrix fits neither quota";
  } catch (const core::quota_exceeded& e) {
    EXPECT_NE(std::string(e.what()).find("tenant 'alice' is at its host_bytes quota"), std::string::npos) << e.what();
    const core::outcome o = core::outcome_of(std::current_exception());
    EXPECT_EQ(o.code, core::status::over_quota);
  }
  EXPECT_EQ(f.cache->stats_of("alice").matrices, 2);
  f.upload(small, as_tenant("bob"));  // others are not held back

  // Larger than both quotas: refused at its header.
  const core::outcome o = core::upload::check(*f.cache, alice, square(100, 2000));
  EXPECT_EQ(o.code, core::status::over_quota);
  EXPECT_NE(o.message.find("device_bytes quota"), std::string::npos) << o.message;
}

TEST_F(tenant_test, a_matrix_spills_only_where_its_tenants_host_quota_has_room) {
  const std::size_t bytes = small.bytes();
  core_fixture f(1, 2 * bytes, 10 * bytes);
  core::quotas q;
  q.host_bytes = bytes / 2;  // none of alice's fit on the host
  const std::string hers = f.upload(small, as_tenant("alice", q));
  const std::string bobs = f.upload(small, as_tenant("bob"));
  f.upload(small, as_tenant("bob"));  // room comes from bob's, though alice's is colder
  EXPECT_TRUE(f.cache->describe(admin, hers)->on_device);
  EXPECT_FALSE(f.cache->describe(admin, bobs)->on_device);
}

TEST_F(tenant_test, a_kept_result_over_the_device_quota_is_refused) {
  const std::size_t bytes = small.bytes();
  core_fixture f(1, 10 * bytes, 0);  // no host space: nothing of hers can make room
  const core::caller alice = as_tenant("alice", device_quota(bytes));
  f.upload(small, alice);
  core::reservation r(f.cache.get(), 0);
  ASSERT_TRUE(r.try_grow(bytes));
  EXPECT_THROW(f.cache->insert_stored(alice, r, f.fake().allocate(small), "", 0), core::quota_exceeded);
  EXPECT_EQ(f.cache->stats_of("alice").matrices, 1);
  EXPECT_EQ(f.device().cached, bytes);
}

TEST_F(tenant_test, a_job_whose_own_inputs_exceed_the_device_quota_is_refused) {
  core_fixture f(1, 10 * small.bytes(), 10 * small.bytes());
  const core::caller alice = as_tenant("alice", device_quota(small.bytes() / 2));
  const std::string a = f.upload(small, alice);  // on the host: it does not fit her device quota
  auto j = square_of(f, a, alice);
  auto end = on_end(*j);
  ASSERT_TRUE(f.sched->submit(j).ok());
  ASSERT_TRUE(ready_within(end, 5s));
  const job_end e = end.get();
  EXPECT_EQ(e.result.code, core::status::over_quota);
  EXPECT_NE(e.result.message.find("over its device_bytes quota"), std::string::npos) << e.result.message;
}

TEST_F(tenant_test, one_tenants_burst_does_not_hold_up_anothers_job) {
  core_fixture f(1, 1 << 20, 0, /*max_queue=*/64, /*workers=*/1);
  const core::caller alice = as_tenant("alice"), bob = as_tenant("bob");
  const std::string a = f.upload(small, alice), b = f.upload(small, bob);
  f.fake().close_gate();
  auto blocker = square_of(f, a, alice);
  auto blocked = on_end(*blocker);
  ASSERT_TRUE(f.sched->submit(blocker).ok());
  ASSERT_TRUE(f.fake().wait_running(1));

  std::mutex mu;
  std::vector<std::string> order;
  std::vector<std::future<job_end>> ends;
  auto submit = [&](const std::string& m, const core::caller& who) {
    auto j = square_of(f, m, who);
    auto promise = std::make_shared<std::promise<job_end>>();
    ends.push_back(promise->get_future());
    j->done = [&, promise, name = who.tenant](core::job&, core::outcome result) {
      {
        std::lock_guard<std::mutex> lock(mu);
        order.push_back(name);
      }
      job_end e;
      e.result = std::move(result);
      promise->set_value(std::move(e));
    };
    ASSERT_TRUE(f.sched->submit(j).ok());
  };
  for (int i = 0; i < 6; ++i) submit(a, alice);  // alice's burst first
  submit(b, bob);
  submit(b, bob);
  EXPECT_EQ(f.sched->stats_of("alice").queue_depth, 6);
  EXPECT_EQ(f.sched->stats_of("bob").queue_depth, 2);
  f.fake().open_gate();
  ASSERT_TRUE(ready_within(blocked, 10s));
  for (auto& e : ends) {
    ASSERT_TRUE(ready_within(e, 10s));
    EXPECT_TRUE(e.get().result.ok());
  }
  // Turns: bob (served least recently), alice, bob, then the rest of alice's.
  EXPECT_EQ(order, (std::vector<std::string>{"bob", "alice", "bob", "alice", "alice", "alice", "alice", "alice"}));
  EXPECT_EQ(f.sched->stats_of("alice").completed, 7);
  EXPECT_EQ(f.sched->stats_of("bob").completed, 2);
}

TEST_F(tenant_test, a_tenant_at_its_running_quota_waits_while_others_run) {
  core_fixture f(1, 1 << 20, 0, /*max_queue=*/64, /*workers=*/3);
  core::quotas q;
  q.running_jobs = 1;
  const core::caller alice = as_tenant("alice", q), bob = as_tenant("bob");
  const std::string a = f.upload(small, alice), b = f.upload(small, bob);
  f.fake().close_gate();
  auto a1 = square_of(f, a, alice), a2 = square_of(f, a, alice), b1 = square_of(f, b, bob);
  auto e1 = on_end(*a1), e2 = on_end(*a2), e3 = on_end(*b1);
  ASSERT_TRUE(f.sched->submit(a1).ok());
  ASSERT_TRUE(f.sched->submit(a2).ok());
  ASSERT_TRUE(f.sched->submit(b1).ok());
  ASSERT_TRUE(f.fake().wait_running(2));  // a1 and b1; a2 waits for a1
  EXPECT_TRUE(eventually([&] { return f.sched->stats_of("bob").running == 1; }));
  EXPECT_EQ(f.sched->stats_of("alice").running, 1);
  EXPECT_EQ(f.sched->stats_of("alice").queue_depth, 1);
  EXPECT_FALSE(f.fake().wait_running(3, 200ms));
  f.fake().open_gate();
  for (auto* e : {&e1, &e2, &e3}) {
    ASSERT_TRUE(ready_within(*e, 10s));
    EXPECT_TRUE(e->get().result.ok());
  }
}

TEST_F(tenant_test, a_tenant_at_its_queued_quota_is_turned_away_and_others_are_not) {
  core_fixture f(1, 1 << 20, 0, /*max_queue=*/64, /*workers=*/1);
  core::quotas q;
  q.queued_jobs = 2;
  const core::caller alice = as_tenant("alice", q), bob = as_tenant("bob");
  const std::string a = f.upload(small, alice), b = f.upload(small, bob);
  f.fake().close_gate();
  std::vector<std::shared_ptr<core::job>> jobs;
  std::vector<std::future<job_end>> ends;
  for (int i = 0; i < 3; ++i) {
    jobs.push_back(square_of(f, a, alice));
    ends.push_back(on_end(*jobs.back()));
    ASSERT_TRUE(f.sched->submit(jobs.back()).ok());  // one runs, two wait
    if (i == 0) {
      ASSERT_TRUE(f.fake().wait_running(1));
    }
  }
  const core::outcome refused = f.sched->submit(square_of(f, a, alice));
  EXPECT_EQ(refused.code, core::status::over_quota);
  EXPECT_NE(refused.message.find("tenant 'alice' is at its queued_jobs quota"), std::string::npos)
      << refused.message;
  auto theirs = square_of(f, b, bob);
  ends.push_back(on_end(*theirs));
  EXPECT_TRUE(f.sched->submit(theirs).ok());
  f.fake().open_gate();
  for (auto& e : ends) {
    ASSERT_TRUE(ready_within(e, 10s));
    EXPECT_TRUE(e.get().result.ok());
  }
}

TEST_F(tenant_test, status_shows_a_tenant_its_own_part_and_an_admin_the_whole) {
  const std::size_t bytes = small.bytes();
  core_fixture f(1, 10 * bytes, 0);
  f.upload(small, as_tenant("alice"));
  f.upload(small, as_tenant("bob"));
  f.upload(small, as_tenant("bob"));
  const core::server_status mine = core::status_of(*f.cache, *f.sched, as_tenant("alice"));
  EXPECT_EQ(mine.matrices, 1);
  ASSERT_EQ(mine.devices.size(), 1u);
  EXPECT_EQ(mine.devices[0].cache.cached, bytes);
  EXPECT_EQ(mine.devices[0].cache.budget, 10 * bytes);
  EXPECT_EQ(mine.devices[0].memory.in_use_bytes, 0u);  // the server's use: not its to see
  const core::server_status all = core::status_of(*f.cache, *f.sched, admin);
  EXPECT_EQ(all.matrices, 3);
  EXPECT_EQ(all.devices[0].cache.cached, 3 * bytes);
  EXPECT_EQ(all.devices[0].memory.in_use_bytes, 3 * bytes);
}

}  // namespace
}  // namespace spgemmd::testing
