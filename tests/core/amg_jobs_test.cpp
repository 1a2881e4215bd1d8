// Multigrid hierarchies as jobs, on the real CPU backend: a setup keeps its
// levels as cache entries (A_{k+1} = R_k A_k P_k, resident, counted), a
// re-setup after new values of A_0 keeps the handles and gives the new
// coarse operators, a solve converges, and deleting the hierarchy frees all
// it held.
#include <gtest/gtest.h>

#include <future>
#include <vector>

#include "core/matrices.hpp"
#include "core/recipes/amg.hpp"
#include "core/scheduler.hpp"
#include "spgemm/generate.hpp"
#include "spgemm/reference.hpp"

namespace spgemmd::testing {
namespace {

struct amg_fixture {
  std::shared_ptr<spgemm::backend> cpu = spgemm::make_cpu_backend(2);
  core::matrix_cache cache{{cpu}, {std::size_t{1} << 28}, std::size_t{1} << 28, 0};
  core::scheduler sched{cache, 16, 1};
  core::amg_hierarchies hierarchies{cache};

  amg_fixture() { cache.set_on_freed([this] { sched.poke(); }); }
  ~amg_fixture() { sched.stop(); }

  std::shared_ptr<core::amg_record> run(const std::function<core::outcome(core::amg_done, std::shared_ptr<core::job>*)>& make) {
    std::promise<std::pair<core::outcome, std::shared_ptr<core::amg_record>>> ended;
    std::shared_ptr<core::job> j;
    const core::outcome built = make(
        [&](core::outcome o, std::shared_ptr<core::amg_record> r) { ended.set_value({std::move(o), std::move(r)}); },
        &j);
    EXPECT_TRUE(built.ok()) << built.message;
    EXPECT_TRUE(sched.submit(j).ok());
    auto [result, record] = ended.get_future().get();
    EXPECT_TRUE(result.ok()) << result.message;
    return record;
  }

  spgemm::csr_matrix<double> fetched(const std::string& handle) {
    core::pin p = cache.acquire(core::caller{}, handle);
    int device = -1;
    std::shared_ptr<spgemm::stored_matrix> stored;
    std::shared_ptr<const core::host_matrix> host;
    cache.locate(*p, &device, &stored, &host);
    return std::get<spgemm::csr_matrix<double>>(stored ? cpu->fetch(*stored) : *host->whole());
  }
};

TEST(amg_jobs, setup_resetup_solve_delete) {
  amg_fixture f;
  spgemm::any_csr a = spgemm::generate("poisson2d5:40");
  const std::string a0 = f.cache.insert_host(core::caller{}, a, "A", 0).handle;
  const std::size_t a0_bytes = core::entry_bytes(spgemm::info_of(a), "A");

  auto record = f.run([&](core::amg_done done, std::shared_ptr<core::job>* j) {
    core::amg_setup_request r;
    r.a = f.cache.acquire(core::caller{}, a0);
    r.name = "poisson";
    r.options.max_coarse = 40;
    return core::amg_setup_job(f.hierarchies, std::move(r), std::move(done), j);
  });
  ASSERT_TRUE(record);
  ASSERT_GE(record->levels.size(), 3u);
  EXPECT_EQ(record->levels[0].a->entry().handle, a0);
  EXPECT_EQ(f.hierarchies.find("", record->handle), record);
  // Levels listed as matrices of their own, A_1 = R_0 A_0 P_0.
  EXPECT_EQ(f.cache.list(core::caller{}, std::nullopt, 100000).entries.size(), 1 + 3 * (record->levels.size() - 1));
  auto coarse = [&](std::size_t k) {
    const auto ak = f.fetched(record->levels[k].a->entry().handle);
    const auto pk = f.fetched(record->levels[k].p->entry().handle);
    return spgemm::cpu_multiply(spgemm::cpu_multiply(spgemm::cpu_transpose(pk), ak), pk);
  };
  const auto a1 = f.fetched(record->levels[1].a->entry().handle);
  EXPECT_EQ(a1.col_indices, coarse(0).col_indices);
  // Counted: the levels as cached entries, the rest of the hierarchy as reserved.
  std::size_t levels_bytes = 0;
  for (const auto& e : f.cache.list(core::caller{}, std::nullopt, 100000).entries) levels_bytes += e.bytes;
  EXPECT_EQ(f.cache.stats().devices[0].cached, levels_bytes);
  EXPECT_EQ(f.cache.stats().devices[0].reserved, record->hierarchy->own_bytes());

  // New values for A_0 (twice the old: the same P, twice the coarse operators).
  auto doubled = std::get<spgemm::csr_matrix<double>>(a);
  for (auto& v : doubled.values) v *= 2;
  core::entry_info e;
  ASSERT_TRUE(core::update_values(f.cache, core::caller{}, a0, spgemm::value_type::f64, doubled.nnz(), doubled.values.data(), &e)
                  .ok());
  EXPECT_EQ(f.cache.stats().devices[0].reserved, record->hierarchy->own_bytes() + a0_bytes);  // the old A_0, in use
  const std::string a1_handle = record->levels[1].a->entry().handle;
  auto again = f.run([&](core::amg_done done, std::shared_ptr<core::job>* j) {
    return core::amg_resetup_job(f.hierarchies, record, 0, std::move(done), j);
  });
  ASSERT_EQ(again, record);
  EXPECT_TRUE(record->hierarchy->report().numeric_only);
  EXPECT_EQ(record->levels[1].a->entry().handle, a1_handle);
  const auto a1_doubled = f.fetched(a1_handle);
  ASSERT_EQ(a1_doubled.values.size(), a1.values.size());
  for (std::size_t k = 0; k < a1.values.size(); ++k) EXPECT_NEAR(a1_doubled.values[k], 2 * a1.values[k], 1e-12);
  EXPECT_EQ(f.cache.stats().devices[0].reserved, record->hierarchy->own_bytes());

  // A solve.
  std::promise<std::pair<core::outcome, spgemm::amg::solve_report>> solved;
  std::shared_ptr<core::job> j;
  core::amg_solve_request request;
  request.b.assign(40 * 40, 1.0);
  ASSERT_TRUE(core::amg_solve_job(f.hierarchies, record, std::move(request),
                                  [&](core::outcome o, spgemm::amg::solve_report r, std::vector<double> x) {
                                    EXPECT_EQ(x.size(), 1600u);
                                    solved.set_value({std::move(o), std::move(r)});
                                  },
                                  &j)
                  .ok());
  ASSERT_TRUE(f.sched.submit(j).ok());
  const auto [outcome, report] = solved.get_future().get();
  EXPECT_TRUE(outcome.ok()) << outcome.message;
  EXPECT_TRUE(report.converged);

  // Delete: its matrices go, A_0 stays; nothing stays reserved.
  ASSERT_TRUE(f.hierarchies.erase("", record->handle));
  record.reset();
  again.reset();
  j.reset();
  EXPECT_EQ(f.cache.list(core::caller{}, std::nullopt, 100000).entries.size(), 1u);
  EXPECT_EQ(f.cache.stats().devices[0].reserved, 0u);
  EXPECT_EQ(f.cache.stats().devices[0].cached, a0_bytes);
}

TEST(amg_jobs, refuses_what_it_cannot_set_up) {
  amg_fixture f;
  spgemm::any_csr tall = spgemm::generate("tall:20:10:2");
  core::amg_setup_request r;
  r.a = f.cache.acquire(core::caller{}, f.cache.insert_host(core::caller{}, tall, "", 0).handle);
  std::shared_ptr<core::job> j;
  EXPECT_EQ(core::amg_setup_job(f.hierarchies, std::move(r), {}, &j).code, core::status::invalid_argument);
}

}  // namespace
}  // namespace spgemmd::testing
