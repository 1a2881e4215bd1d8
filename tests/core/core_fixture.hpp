// The core on fake backends, for the cache and scheduler tests: devices with
// small byte budgets, matrices stored by shape.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/estimate_memo.hpp"
#include "core/job_run.hpp"
#include "core/matrix_cache.hpp"
#include "core/outcome.hpp"
#include "core/recipes/multiply.hpp"
#include "core/scheduler.hpp"
#include "fake_backend.hpp"

namespace spgemmd::testing {

// A caller of tenant `name` (not an admin) with quotas `limits`.
inline core::caller as_tenant(const std::string& name, core::quotas limits = {}) { return {name, false, limits}; }

// A square f64 matrix of `rows` rows with `nnz` entries.
inline spgemm::matrix_info square(int64_t rows, int64_t nnz) { return {rows, rows, nnz, spgemm::value_type::f64}; }

struct core_fixture {
  std::vector<std::shared_ptr<fake_backend>> fakes;
  std::unique_ptr<core::matrix_cache> cache;
  std::unique_ptr<core::scheduler> sched;  // goes before the cache

  // `devices` fake backends with `budget` bytes each, `host_budget` of spill space.
  core_fixture(int devices, std::size_t budget, std::size_t host_budget, int max_queue = 64, int workers = 1,
               int64_t ttl_seconds = 0) {
    std::vector<std::shared_ptr<spgemm::backend>> backends;
    for (int i = 0; i < devices; ++i) {
      fakes.push_back(std::make_shared<fake_backend>("fake" + std::to_string(i)));
      backends.push_back(fakes.back());
    }
    cache = std::make_unique<core::matrix_cache>(backends, std::vector<std::size_t>(devices, budget), host_budget,
                                                 ttl_seconds);
    sched = std::make_unique<core::scheduler>(*cache, max_queue, workers);
    cache->set_on_freed([s = sched.get()] { s->poke(); });
  }
  ~core_fixture() {
    sched->stop();
    sched.reset();
    cache.reset();
  }

  fake_backend& fake(int device = 0) { return *fakes[static_cast<std::size_t>(device)]; }

  // Uploads a matrix of `info` as `who`'s; its handle.
  std::string upload(const spgemm::matrix_info& info, const core::caller& who = as_tenant("")) {
    spgemm::any_csr m = filled_matrix(info);
    return cache->insert_host(who, m, "", 0).handle;
  }

  core::pin pin(const std::string& handle, const core::caller& who = as_tenant("")) {
    return cache->acquire(who, handle);
  }

  core::device_stats device(int d = 0) { return cache->stats().devices[static_cast<std::size_t>(d)]; }

  // The job of A * A, A the matrix `a`.
  std::shared_ptr<core::job> square_of(core::estimate_memo& memo, const std::string& a, int priority = 0) {
    std::shared_ptr<core::job> j;
    const core::outcome built = core::multiply_job(memo, pin(a), pin(a), {}, priority, &j);
    if (!built.ok()) throw std::runtime_error(built.message);
    return j;
  }
};

// What a job ended with, waited for by the test.
struct job_end {
  core::outcome result;
  core::reservation held;  // released after the product is freed
  std::shared_ptr<spgemm::stored_matrix> product;
};

// Gives `j` a done callback that hands over its end; the future says it.
inline std::future<job_end> on_end(core::job& j) {
  auto promise = std::make_shared<std::promise<job_end>>();
  j.done = [promise](core::job& done, core::outcome result) {
    job_end e;
    e.result = std::move(result);
    e.product = std::move(done.result);
    e.held = std::move(done.res);
    promise->set_value(std::move(e));
  };
  return promise->get_future();
}

// Submits `j` on `run`; the future says how it ended.
inline std::future<core::job_run::ending> submit(core::job_run& run, std::shared_ptr<core::job> j) {
  auto promise = std::make_shared<std::promise<core::job_run::ending>>();
  auto ended = promise->get_future();
  const core::outcome submitted =
      run.submit(std::move(j), [promise](core::job_run::ending e) { promise->set_value(std::move(e)); });
  EXPECT_TRUE(submitted.ok()) << submitted.message;
  return ended;
}

template <typename T>
bool ready_within(std::future<T>& f, std::chrono::milliseconds timeout) {
  return f.wait_for(timeout) == std::future_status::ready;
}

// Whether `condition` comes true within five seconds: for what a scheduler
// thread does after a job's callback returned (releasing what it left).
template <typename F>
bool eventually(F condition) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace spgemmd::testing
