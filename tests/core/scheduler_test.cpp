// The scheduler on fake backends: jobs run on workers in priority order (FIFO
// within one), wait for memory, spill cold matrices for room, are refused when
// they could never fit or the queue is full, and end cancelled or shut down
// with everything they held released.
#include <gtest/gtest.h>

#include <mutex>
#include <thread>
#include <vector>

#include "core/recipes/galerkin.hpp"
#include "core/recipes/multiply.hpp"
#include "core/recipes/transpose.hpp"
#include "core_fixture.hpp"

namespace spgemmd::testing {
namespace {

using namespace std::chrono_literals;

const spgemm::matrix_info small = square(100, 1000);

struct scheduler_test : ::testing::Test {
  core::estimate_memo memo{64};

  std::shared_ptr<core::job> square_of(core_fixture& f, const std::string& a, int priority = 0) {
    return f.square_of(memo, a, priority);
  }

  // Submits A * A, A the matrix `a`: its job, and its end to come.
  std::pair<std::shared_ptr<core::job>, std::future<job_end>> submit_square(core_fixture& f, const std::string& a) {
    auto j = square_of(f, a);
    auto end = on_end(*j);
    EXPECT_TRUE(f.sched->submit(j).ok());
    return {std::move(j), std::move(end)};
  }

  // Closes the fake's gate and runs a job that waits there (the one worker
  // busy); its end comes once the gate opens.
  std::future<job_end> start_blocker(core_fixture& f, const std::string& a) {
    f.fake().close_gate();
    auto end = submit_square(f, a).second;
    EXPECT_TRUE(f.fake().wait_running(1));
    return end;
  }
};

TEST_F(scheduler_test, a_job_runs_on_a_worker_and_its_result_keeps_its_bytes_reserved) {
  core_fixture f(1, 1 << 20, 0);
  const std::string a = f.upload(small);
  auto [j, end] = submit_square(f, a);
  ASSERT_TRUE(ready_within(end, 10s));
  job_end e = end.get();
  ASSERT_TRUE(e.result.ok()) << e.result.message;
  EXPECT_EQ(e.product->info().rows, 100);
  EXPECT_EQ(e.product->info().nnz, 1000);
  EXPECT_EQ(e.held.bytes(), e.product->info().bytes());
  EXPECT_EQ(f.device().reserved, e.held.bytes());
  EXPECT_EQ(j->kind, "multiply");
  EXPECT_EQ(j->methods, "fake");
  EXPECT_EQ(j->products, 1000);
  EXPECT_EQ(f.fake().last_memory_limit(), j->step_estimate);  // the engine is held to the admitted estimate
  EXPECT_GT(j->times.compute, 0);
  EXPECT_EQ(f.fake().allocated(), 2 * small.bytes());
  e.product.reset();
  e.held.release();
  EXPECT_EQ(f.device().reserved, 0u);
  EXPECT_EQ(f.fake().allocated(), small.bytes());
  EXPECT_EQ(f.sched->stats().completed, 1);
}

TEST_F(scheduler_test, queued_jobs_run_by_priority_then_in_the_order_they_came) {
  core_fixture f(1, 1 << 20, 0, /*max_queue=*/64, /*workers=*/1);
  const std::string a = f.upload(small);
  auto blocked = start_blocker(f, a);

  std::mutex mu;
  std::vector<int> order;
  const std::vector<int> priorities = {0, 1, 0, 2, 1};
  std::vector<std::future<void>> ends;
  for (std::size_t i = 0; i < priorities.size(); ++i) {
    auto j = square_of(f, a, priorities[i]);
    auto done = std::make_shared<std::promise<void>>();
    ends.push_back(done->get_future());
    j->done = [&, i, done](core::job&, core::outcome result) {
      EXPECT_TRUE(result.ok()) << result.message;
      std::lock_guard<std::mutex> lock(mu);
      order.push_back(static_cast<int>(i));
      done->set_value();
    };
    ASSERT_TRUE(f.sched->submit(j).ok());
  }
  EXPECT_EQ(f.sched->stats().queue_depth, 5);
  f.fake().open_gate();
  ASSERT_TRUE(ready_within(blocked, 10s));
  for (auto& e : ends) ASSERT_TRUE(ready_within(e, 10s));
  EXPECT_EQ(order, (std::vector<int>{3, 1, 4, 0, 2}));
}

TEST_F(scheduler_test, a_full_queue_turns_jobs_away) {
  core_fixture f(1, 1 << 20, 0, /*max_queue=*/2, /*workers=*/1);
  const std::string a = f.upload(small);
  auto blocked = start_blocker(f, a);
  auto j1 = square_of(f, a), j2 = square_of(f, a), j3 = square_of(f, a);
  auto e1 = on_end(*j1), e2 = on_end(*j2);
  ASSERT_TRUE(f.sched->submit(j1).ok());
  ASSERT_TRUE(f.sched->submit(j2).ok());
  const core::outcome refused = f.sched->submit(j3);
  EXPECT_EQ(refused.code, core::status::queue_full);
  EXPECT_NE(refused.message.find("queue is full (2 jobs waiting)"), std::string::npos) << refused.message;
  f.fake().open_gate();
  for (auto* e : {&blocked, &e1, &e2}) {
    ASSERT_TRUE(ready_within(*e, 10s));
    EXPECT_TRUE(e->get().result.ok());
  }
}

TEST_F(scheduler_test, a_job_cancelled_in_the_queue_leaves_it_at_once) {
  core_fixture f(1, 1 << 20, 0, 64, /*workers=*/1);
  const std::string a = f.upload(small);
  auto blocked = start_blocker(f, a);
  auto [j, end] = submit_square(f, a);
  j->cancel.cancel();
  f.sched->poke();
  ASSERT_TRUE(ready_within(end, 5s));  // while the blocker still runs
  const job_end e = end.get();
  EXPECT_EQ(e.result.code, core::status::cancelled);
  EXPECT_NE(e.result.message.find("while the job was queued"), std::string::npos);
  EXPECT_TRUE(j->inputs.empty());  // unpinned
  EXPECT_EQ(f.sched->stats().queue_depth, 0);
  f.fake().open_gate();
  ASSERT_TRUE(ready_within(blocked, 10s));
}

TEST_F(scheduler_test, a_running_job_cancelled_stops_and_frees_what_it_held) {
  core_fixture f(1, 1 << 20, 0);
  const std::string a = f.upload(small);
  f.fake().set_delay(30s);
  auto [j, end] = submit_square(f, a);
  ASSERT_TRUE(f.fake().wait_running(1));
  EXPECT_GT(f.device().reserved, 0u);
  j->cancel.cancel();
  ASSERT_TRUE(ready_within(end, 5s));
  const job_end e = end.get();
  EXPECT_EQ(e.result.code, core::status::cancelled);
  EXPECT_EQ(e.product, nullptr);
  EXPECT_EQ(f.device().reserved, 0u);
  EXPECT_EQ(f.fake().allocated(), small.bytes());
  EXPECT_EQ(f.sched->stats().failed, 1);
}

// A transpose has no form in row panels (a product has: panels_test.cpp).
TEST_F(scheduler_test, a_job_that_could_never_fit_is_refused_with_its_figures) {
  const spgemm::matrix_info large = square(300, 3000);
  core_fixture f(1, large.bytes() + large.bytes() / 2, 0);
  auto j = core::transpose_job(f.pin(f.upload(large)));
  auto end = on_end(*j);
  ASSERT_TRUE(f.sched->submit(j).ok());
  ASSERT_TRUE(ready_within(end, 5s));
  const job_end e = end.get();
  EXPECT_EQ(e.result.code, core::status::does_not_fit);
  EXPECT_NE(e.result.message.find("so it can never run there"), std::string::npos) << e.result.message;
  EXPECT_EQ(f.device().reserved, 0u);
  EXPECT_EQ(f.fake().products_run(), 0);
}

TEST_F(scheduler_test, engine_errors_end_the_job_with_their_kind) {
  core_fixture f(1, 1 << 20, 0);
  const std::string a = f.upload(small);
  for (const auto& [kind, expected] : {std::pair{spgemm::error_kind::device_failure, core::status::device_failure},
                                       {spgemm::error_kind::bad_input, core::status::invalid_argument},
                                       {spgemm::error_kind::does_not_fit, core::status::does_not_fit}}) {
    f.fake().fail_next(kind);
    auto end = submit_square(f, a).second;
    ASSERT_TRUE(ready_within(end, 5s));
    const job_end e = end.get();
    EXPECT_EQ(e.result.code, expected) << e.result.message;
    EXPECT_NE(e.result.message.find("told to fail"), std::string::npos);
    EXPECT_EQ(f.device().reserved, 0u);
  }
  EXPECT_EQ(f.sched->stats().failed, 3);
}

TEST_F(scheduler_test, a_job_waits_for_memory_held_by_another_and_runs_once_it_is_freed) {
  const std::size_t bytes = small.bytes();
  core_fixture f(1, bytes + bytes * 3 / 2, 0);  // A and one product
  const std::string a = f.upload(small);
  auto j1 = square_of(f, a), j2 = square_of(f, a);
  auto end1 = on_end(*j1), end2 = on_end(*j2);
  ASSERT_TRUE(f.sched->submit(j1).ok());
  ASSERT_TRUE(ready_within(end1, 5s));
  job_end first = end1.get();  // its result held, as while it streams
  ASSERT_TRUE(first.result.ok());
  ASSERT_TRUE(f.sched->submit(j2).ok());
  EXPECT_FALSE(ready_within(end2, 100ms));
  EXPECT_EQ(f.sched->stats().queue_depth, 1);
  first.product.reset();
  first.held.release();
  ASSERT_TRUE(ready_within(end2, 5s));
  EXPECT_TRUE(end2.get().result.ok());
  EXPECT_LE(f.device().peak_used, f.device().budget);
}

TEST_F(scheduler_test, cold_matrices_spill_to_the_host_to_make_room_and_come_back_when_used) {
  const std::size_t bytes = small.bytes();
  core_fixture f(1, 3 * bytes, 10 * bytes);
  const std::string a = f.upload(small), b = f.upload(small), c = f.upload(small);
  auto end = submit_square(f, a).second;
  ASSERT_TRUE(ready_within(end, 5s));
  job_end e = end.get();
  ASSERT_TRUE(e.result.ok()) << e.result.message;
  EXPECT_FALSE(f.cache->describe(as_tenant(""), b)->on_device);  // the coldest made room
  EXPECT_TRUE(f.cache->describe(as_tenant(""), c)->on_device);
  EXPECT_EQ(f.cache->stats().host_bytes, bytes);
  e = {};

  auto end_k = submit_square(f, b).second;
  ASSERT_TRUE(ready_within(end_k, 5s));
  EXPECT_TRUE(end_k.get().result.ok());
  EXPECT_TRUE(f.cache->describe(as_tenant(""), b)->on_device);
  EXPECT_LE(f.device().peak_used, f.device().budget);
  EXPECT_LE(f.fake().peak(), f.device().budget);
}

TEST_F(scheduler_test, stopping_ends_queued_jobs_and_refuses_new_ones) {
  core_fixture f(1, 1 << 20, 0, 64, /*workers=*/1);
  const std::string a = f.upload(small);
  auto blocked = start_blocker(f, a);
  auto [j, end] = submit_square(f, a);
  auto stopping = std::async(std::launch::async, [&] { f.sched->stop(); });
  ASSERT_TRUE(ready_within(end, 5s));
  EXPECT_EQ(end.get().result.code, core::status::shutting_down);
  f.fake().open_gate();  // the running job finishes; stop() waits for it
  ASSERT_TRUE(ready_within(stopping, 10s));
  ASSERT_TRUE(ready_within(blocked, 1s));
  EXPECT_TRUE(blocked.get().result.ok());
  EXPECT_EQ(f.sched->submit(square_of(f, a)).code, core::status::shutting_down);
}

TEST_F(scheduler_test, a_galerkin_job_runs_its_three_steps_and_frees_its_intermediates) {
  core_fixture f(1, 1 << 20, 0);
  const spgemm::matrix_info p_info{100, 10, 100, spgemm::value_type::f64};  // fine x coarse
  const std::string p = f.upload(p_info), a = f.upload(small);
  std::shared_ptr<core::job> j;
  ASSERT_TRUE(core::galerkin_job(memo, core::galerkin_form::pt_a_p, f.pin(p), f.pin(a), {}, 0, &j).ok());
  auto end = on_end(*j);
  ASSERT_TRUE(f.sched->submit(j).ok());
  ASSERT_TRUE(ready_within(end, 5s));
  const job_end e = end.get();
  ASSERT_TRUE(e.result.ok()) << e.result.message;
  EXPECT_EQ(e.product->info().rows, 10);
  EXPECT_EQ(e.product->info().cols, 10);
  EXPECT_EQ(j->methods, "transpose + fake + fake");
  EXPECT_EQ(f.fake().allocated(), p_info.bytes() + small.bytes() + e.product->info().bytes());
  EXPECT_EQ(f.device().reserved, e.product->info().bytes());
}

TEST_F(scheduler_test, recipes_refuse_operands_of_the_wrong_shapes) {
  core_fixture f(1, 1 << 20, 0);
  const std::string a = f.upload(small);
  const std::string r = f.upload({100, 20, 100, spgemm::value_type::f64});
  std::shared_ptr<core::job> j;
  const core::outcome product = core::multiply_job(memo, f.pin(r), f.pin(a), {}, 0, &j);
  EXPECT_EQ(product.code, core::status::invalid_argument);
  EXPECT_NE(product.message.find("cannot multiply A (100 x 20) by B (100 x 100)"), std::string::npos);
  const core::outcome galerkin = core::galerkin_job(memo, core::galerkin_form::p_a_pt, f.pin(r), f.pin(a), {}, 0, &j);
  EXPECT_EQ(galerkin.code, core::status::invalid_argument);
  EXPECT_NE(galerkin.message.find("P A P^T needs a square A with as many rows as P has columns"), std::string::npos);
  EXPECT_EQ(j, nullptr);
  auto t = core::transpose_job(f.pin(r));
  EXPECT_EQ(t->kind, "transpose");
  EXPECT_EQ(t->steps.size(), 1u);
}

TEST_F(scheduler_test, a_job_waiting_for_memory_leaves_its_inputs_free_to_spill) {
  const std::size_t bytes = small.bytes();
  core_fixture f(1, 4 * bytes, 4 * bytes, 64, /*workers=*/2);
  f.fake().set_workspace(bytes / 2);  // a product reserves 1.5 matrices
  const std::string a = f.upload(small), b = f.upload(small);
  auto blocked = start_blocker(f, a);  // 3.5 of 4 in use
  auto waiting = submit_square(f, b).second;
  std::this_thread::sleep_for(100ms);  // the dispatcher has tried it (every 20 ms): it does not fit
  EXPECT_EQ(f.sched->stats().queue_depth, 1);
  core::reservation r(f.cache.get(), 0);
  EXPECT_TRUE(r.try_grow(bytes));  // spills b
  EXPECT_FALSE(f.cache->describe(as_tenant(""), b)->on_device);
  r.release();
  f.fake().open_gate();
  ASSERT_TRUE(ready_within(blocked, 10s));
  blocked.get();  // its result let go
  ASSERT_TRUE(ready_within(waiting, 10s));
  EXPECT_TRUE(waiting.get().result.ok());
}

TEST_F(scheduler_test, a_job_between_its_steps_goes_before_a_waiting_job_of_higher_priority) {
  // G = P^T A P holds its intermediates between steps; H = B B, of higher
  // priority, fits only once G has ended and let go. Were H first in the
  // queue, it would wait for memory that only G's end frees, and G behind it.
  const spgemm::matrix_info p_info{100, 10, 100, spgemm::value_type::f64};  // P^T: 1288 bytes
  const spgemm::matrix_info b_info = square(100, 2000);                     // B B: 24808 bytes
  const std::size_t cached = p_info.bytes() + small.bytes() + b_info.bytes();
  core_fixture f(1, cached + 25000, 0, 64, /*workers=*/1);
  const std::string p = f.upload(p_info), a = f.upload(small), b = f.upload(b_info);
  f.fake().close_gate();
  std::shared_ptr<core::job> g;
  ASSERT_TRUE(core::galerkin_job(memo, core::galerkin_form::pt_a_p, f.pin(p), f.pin(a), {}, 0, &g).ok());
  auto g_end = on_end(*g);
  ASSERT_TRUE(f.sched->submit(g).ok());
  ASSERT_TRUE(f.fake().wait_running(1));  // its transpose
  auto h = square_of(f, b, /*priority=*/1);
  auto h_end = on_end(*h);
  ASSERT_TRUE(f.sched->submit(h).ok());
  f.fake().open_gate();
  ASSERT_TRUE(ready_within(g_end, 5s)) << "the Galerkin job waits behind one that waits for its memory";
  job_end e = g_end.get();
  EXPECT_TRUE(e.result.ok()) << e.result.message;
  EXPECT_FALSE(ready_within(h_end, 50ms));  // G's result still holds room
  e = {};
  ASSERT_TRUE(ready_within(h_end, 5s));
  EXPECT_TRUE(h_end.get().result.ok());
}

// ---- several devices ---------------------------------------------------------

// Which of two devices holds `handle`.
int device_of(core_fixture& f, const std::string& handle) {
  return f.cache->describe(as_tenant(""), handle)->device == "fake0" ? 0 : 1;
}

// A job waiting for memory holds up only the jobs after it on its own device:
// a job placed on the other device runs meanwhile; Status counts the waiting
// one as queued on its device.
TEST_F(scheduler_test, a_job_waiting_on_one_device_does_not_hold_up_another_device) {
  const std::size_t bytes = small.bytes();
  core_fixture f(2, bytes + bytes * 3 / 2, 0);  // A and one product, on each
  const std::string a = f.upload(small), b = f.upload(small);
  const int da = device_of(f, a);
  ASSERT_EQ(device_of(f, b), 1 - da);  // the roomier device
  auto [j1, end1] = submit_square(f, a);
  ASSERT_TRUE(ready_within(end1, 5s));
  job_end first = end1.get();  // its result held on A's device, as while it streams
  ASSERT_TRUE(first.result.ok());
  auto [j2, end2] = submit_square(f, a);  // waits for that memory
  auto [j3, end3] = submit_square(f, b);  // after it in the queue, on the other device
  ASSERT_TRUE(ready_within(end3, 5s));
  job_end third = end3.get();
  EXPECT_TRUE(third.result.ok()) << third.result.message;
  EXPECT_EQ(j3->device, 1 - da);
  EXPECT_FALSE(ready_within(end2, 50ms));
  const core::scheduler_stats s = f.sched->stats();
  ASSERT_EQ(s.queued_per_device.size(), 2u);
  EXPECT_EQ(s.queued_per_device[static_cast<std::size_t>(da)], 1);
  EXPECT_EQ(s.queued_per_device[static_cast<std::size_t>(1 - da)], 0);
  first.product.reset();
  first.held.release();
  ASSERT_TRUE(ready_within(end2, 5s));
  EXPECT_TRUE(end2.get().result.ok());
  EXPECT_EQ(j2->device, da);
  for (int d = 0; d < 2; ++d) EXPECT_LE(f.device(d).peak_used, f.device(d).budget);
}

// A product of operands on two devices runs on one of them; the other operand
// is copied there from its device (peer-to-peer), not through the host.
TEST_F(scheduler_test, operands_on_two_devices_meet_on_one_peer_to_peer) {
  const std::size_t bytes = small.bytes();
  core_fixture f(2, 4 * bytes, 10 * bytes);
  const std::string a = f.upload(small), b = f.upload(small);
  ASSERT_NE(device_of(f, a), device_of(f, b));
  const int64_t uploaded[] = {f.device(0).bytes_to_device, f.device(1).bytes_to_device};
  std::shared_ptr<core::job> j;
  ASSERT_TRUE(core::multiply_job(memo, f.pin(a), f.pin(b), {}, 0, &j).ok());
  auto end = on_end(*j);
  ASSERT_TRUE(f.sched->submit(j).ok());
  ASSERT_TRUE(ready_within(end, 5s));
  job_end e = end.get();
  ASSERT_TRUE(e.result.ok()) << e.result.message;
  const int there = j->device;
  EXPECT_EQ(device_of(f, a), there);
  EXPECT_EQ(device_of(f, b), there);  // moved
  EXPECT_EQ(f.device(there).bytes_from_peer, static_cast<int64_t>(bytes));
  EXPECT_EQ(f.device(there).bytes_to_device, uploaded[there]);  // nothing through the host
  EXPECT_EQ(f.cache->stats().host_bytes, 0u);
  EXPECT_EQ(f.fake(1 - there).allocated(), 0u);
}

}  // namespace
}  // namespace spgemmd::testing
