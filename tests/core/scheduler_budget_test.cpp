// The budget promise under load: many clients at once run products,
// transposes and Galerkin products on two fake devices with small budgets,
// keep some results and stream others, delete matrices, cancel jobs, and
// jobs fail. At no time does a device hold more than its budget: neither by
// the cache's own count (cached + reserved) nor by the bytes the backend
// allocated; and once everything is let go, nothing is left reserved or leaked.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <random>
#include <thread>

#include "core/job_run.hpp"
#include "core/recipes/galerkin.hpp"
#include "core/recipes/multiply.hpp"
#include "core/recipes/transpose.hpp"
#include "core_fixture.hpp"

namespace spgemmd::testing {
namespace {

using namespace std::chrono_literals;

constexpr int devices = 2;
constexpr int clients = 8;
constexpr int jobs_per_client = 200;
constexpr int in_flight_per_client = 3;
constexpr std::size_t budget = 160 << 10;

// A client's calls: their runs, and the endings of those whose jobs ended,
// in the order they ended (a client reads whichever result comes first: one
// that read its calls in order would hold results the others wait for).
struct client_calls {
  std::map<int, std::unique_ptr<core::job_run>> runs;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::pair<int, core::job_run::ending>> ended;
};

TEST(scheduler_budget, no_device_ever_holds_more_than_its_budget_under_a_random_load) {
  core_fixture f(devices, budget, 4 << 20, /*max_queue=*/256, /*workers=*/3);
  for (int d = 0; d < devices; ++d) {
    f.fake(d).set_delay(300us);
    f.fake(d).set_workspace(4 << 10);
    f.fake(d).set_nnz_factor(2);
  }
  core::estimate_memo memo(4096);

  // Square operands (100 x 100, 100 to 2000 entries) and prolongators (100 x 20).
  std::mt19937 seed_rng(20261126);
  std::vector<std::string> squares, prolongators;
  for (int i = 0; i < 16; ++i) {
    squares.push_back(f.upload(square(100, 100 + static_cast<int64_t>(seed_rng() % 1900))));
  }
  for (int i = 0; i < 4; ++i) prolongators.push_back(f.upload({100, 20, 200, spgemm::value_type::f64}));

  std::atomic<bool> running{true};
  std::atomic<int> over_budget{0}, over_allocated{0}, samples_queued{0}, samples_spilled{0};
  std::thread monitor([&] {
    while (running) {
      if (f.sched->stats().queue_depth > 0) ++samples_queued;
      const core::cache_stats s = f.cache->stats();
      if (s.host_bytes > 0) ++samples_spilled;
      for (int d = 0; d < devices; ++d) {
        const core::device_stats& dev = s.devices[static_cast<std::size_t>(d)];
        if (dev.cached + dev.reserved > dev.budget) ++over_budget;
        if (f.fake(d).allocated() > dev.budget) ++over_allocated;
      }
      std::this_thread::sleep_for(50us);
    }
  });

  std::atomic<int> ok{0}, failed{0}, refused{0}, kept{0};
  std::mutex kept_mu;
  std::vector<std::string> kept_handles;
  auto client = [&](int id) {
    std::mt19937 rng(1000 + static_cast<unsigned>(id));
    auto pick = [&](const std::vector<std::string>& from) { return from[rng() % from.size()]; };
    client_calls calls;
    std::map<int, bool> keeps;
    auto finish_one = [&] {
      std::pair<int, core::job_run::ending> next;
      {
        std::unique_lock<std::mutex> lock(calls.mu);
        if (!calls.cv.wait_for(lock, 60s, [&] { return !calls.ended.empty(); })) {
          std::fprintf(stderr, "no job ended in a minute: the scheduler is stuck\n");
          std::abort();
        }
        next = std::move(calls.ended.front());
        calls.ended.pop_front();
      }
      calls.runs.erase(next.first);
      const core::job_run::ending& e = next.second;
      if (!e.result.ok()) {
        ++failed;
      } else if (keeps[next.first]) {
        ++ok;
        ++kept;
        std::lock_guard<std::mutex> lock(kept_mu);
        kept_handles.push_back(e.kept.handle);
      } else {
        ++ok;
        if (rng() % 2 == 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 500));  // a slow reader
      }
    };
    for (int n = 0; n < jobs_per_client; ++n) {
      std::shared_ptr<core::job> j;
      const unsigned kind = rng() % 100;
      if (kind < 60) {
        ASSERT_TRUE(core::multiply_job(memo, f.pin(pick(squares)), f.pin(pick(squares)), {}, rng() % 3, &j).ok());
      } else if (kind < 75) {
        j = core::transpose_job(f.pin(pick(squares)));
      } else {
        ASSERT_TRUE(core::galerkin_job(memo, core::galerkin_form::pt_a_p, f.pin(pick(prolongators)),
                                       f.pin(pick(squares)), {}, rng() % 3, &j)
                        .ok());
      }
      if (rng() % 20 == 0) f.fake(static_cast<int>(rng() % devices)).fail_next(spgemm::error_kind::device_failure);
      const bool keep = rng() % 3 == 0;
      keeps[n] = keep;
      auto& run = calls.runs[n];
      run = std::make_unique<core::job_run>(*f.cache, *f.sched, as_tenant(""), keep, "", core::steady::now());
      const core::outcome submitted = run->submit(std::move(j), [&calls, n](core::job_run::ending e) {
        std::lock_guard<std::mutex> lock(calls.mu);
        calls.ended.emplace_back(n, std::move(e));
        calls.cv.notify_one();
      });
      if (!submitted.ok()) {
        calls.runs.erase(n);
        ++refused;
        continue;
      }
      if (auto promised = run->promise()) run->announce(*promised);
      if (rng() % 10 == 0) {
        std::this_thread::sleep_for(std::chrono::microseconds(rng() % 400));
        run->cancel();
      }
      if (calls.runs.size() >= in_flight_per_client) finish_one();
      if (rng() % 4 == 0) {  // delete a kept result
        std::string handle;
        {
          std::lock_guard<std::mutex> lock(kept_mu);
          if (!kept_handles.empty()) {
            handle = kept_handles.back();
            kept_handles.pop_back();
          }
        }
        if (!handle.empty()) f.cache->erase(as_tenant(""), handle);
      }
    }
    while (!calls.runs.empty()) finish_one();
  };
  std::vector<std::thread> threads;
  for (int id = 0; id < clients; ++id) threads.emplace_back(client, id);
  for (auto& t : threads) t.join();
  running = false;
  monitor.join();

  EXPECT_EQ(ok + failed + refused, clients * jobs_per_client);
  EXPECT_GT(ok, clients * jobs_per_client / 2) << "too few jobs ran for the test to mean much";
  EXPECT_GT(kept, 0);
  EXPECT_GT(samples_queued, 0) << "no job ever waited";
  EXPECT_GT(samples_spilled, 0) << "no matrix ever spilled";
  EXPECT_EQ(over_budget, 0);
  EXPECT_EQ(over_allocated, 0);
  const core::scheduler_stats jobs = f.sched->stats();
  EXPECT_EQ(jobs.queue_depth, 0);
  EXPECT_EQ(jobs.running, 0);
  const core::cache_stats s = f.cache->stats();
  for (int d = 0; d < devices; ++d) {
    const core::device_stats& dev = s.devices[static_cast<std::size_t>(d)];
    EXPECT_LE(dev.peak_used, dev.budget) << dev.name;
    EXPECT_LE(f.fake(d).peak(), dev.budget) << dev.name;
    EXPECT_EQ(dev.reserved, 0u) << dev.name;
    EXPECT_EQ(f.fake(d).allocated(), dev.cached) << dev.name << ": bytes allocated that the cache does not count";
  }
}

}  // namespace
}  // namespace spgemmd::testing
