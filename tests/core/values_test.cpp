// New values for stored matrices and the products that rerun numeric only:
// values written in place where nothing else holds the matrix, into a copy
// counted on its device while a job reads the old version (freed when it is
// done), into a new host copy when spilled; a repeated kept product and a
// repeated Galerkin product run numeric only while their last result lives.
#include <gtest/gtest.h>

#include <vector>

#include "core/job_run.hpp"
#include "core/matrices.hpp"
#include "core/recipes/galerkin.hpp"
#include "core_fixture.hpp"

namespace spgemmd::testing {
namespace {

std::vector<double> values_of(const spgemm::matrix_info& info) {
  return std::vector<double>(static_cast<std::size_t>(info.nnz), 2.0);
}

TEST(update_values, in_place_where_only_the_cache_holds_the_matrix) {
  core_fixture f(1, 1 << 20, 1 << 20);
  const auto info = square(100, 300);
  const std::string a = f.upload(info);
  const std::size_t cached = f.device().cached;
  core::entry_info e;
  const auto values = values_of(info);
  ASSERT_TRUE(core::update_values(*f.cache, as_tenant(""), a, info.type, info.nnz, values.data(), &e).ok());
  EXPECT_EQ(e.handle, a);
  EXPECT_EQ(f.fake().values_written(), 1);
  EXPECT_EQ(f.fake().values_copied(), 0);
  EXPECT_EQ(f.device().cached, cached);
  EXPECT_EQ(f.device().reserved, 0u);
  // The wrong count or type, or no such matrix.
  EXPECT_EQ(core::update_values(*f.cache, as_tenant(""), a, info.type, info.nnz - 1, values.data(), &e).code,
            core::status::invalid_argument);
  EXPECT_EQ(core::update_values(*f.cache, as_tenant(""), a, spgemm::value_type::f32, info.nnz, values.data(), &e).code,
            core::status::invalid_argument);
  EXPECT_EQ(core::update_values(*f.cache, as_tenant(""), "m-none", info.type, info.nnz, values.data(), &e).code,
            core::status::not_found);
}

TEST(update_values, copies_while_a_job_reads_and_frees_the_old_version_after) {
  core_fixture f(1, 1 << 20, 1 << 20);
  const auto info = square(100, 300);
  const std::string a = f.upload(info);
  const std::size_t allocated = f.fake().allocated();
  core::pin p = f.pin(a);
  auto held = f.cache->make_resident(*p, 0);  // as a running job holds it
  ASSERT_TRUE(held);
  core::entry_info e;
  const auto values = values_of(info);
  ASSERT_TRUE(core::update_values(*f.cache, as_tenant(""), a, info.type, info.nnz, values.data(), &e).ok());
  EXPECT_EQ(f.fake().values_copied(), 1);
  EXPECT_EQ(f.fake().allocated(), allocated + info.bytes());
  EXPECT_EQ(f.device().reserved, info.bytes());  // the version the job reads
  // A later user gets the copy.
  core::pin q = f.pin(a);
  EXPECT_NE(f.cache->make_resident(*q, 0), held);
  f.cache->release_resident(*q);
  held.reset();
  f.cache->release_resident(*p);
  EXPECT_EQ(f.device().reserved, 0u);
  EXPECT_EQ(f.fake().allocated(), allocated);
}

TEST(update_values, no_room_for_the_copy_is_does_not_fit) {
  const auto info = square(100, 3000);
  core_fixture f(1, info.bytes() + info.bytes() / 2, 0);
  const std::string a = f.upload(info);
  core::pin p = f.pin(a);
  auto held = f.cache->make_resident(*p, 0);
  core::entry_info e;
  const auto values = values_of(info);
  EXPECT_EQ(core::update_values(*f.cache, as_tenant(""), a, info.type, info.nnz, values.data(), &e).code,
            core::status::does_not_fit);
  held.reset();
  f.cache->release_resident(*p);
}

TEST(update_values, a_spilled_matrix_gets_a_new_host_copy) {
  const auto info = square(100, 3000);
  core_fixture f(1, info.bytes() + 100, 4 * info.bytes());
  const std::string a = f.upload(info);
  f.upload(info);  // spills a
  ASSERT_FALSE(f.cache->describe(as_tenant(""), a)->on_device);
  core::entry_info e;
  const auto values = values_of(info);
  ASSERT_TRUE(core::update_values(*f.cache, as_tenant(""), a, info.type, info.nnz, values.data(), &e).ok());
  EXPECT_EQ(f.fake().values_written() + f.fake().values_copied(), 0);
  EXPECT_FALSE(e.on_device);
}

// Runs `j` keeping its result; the kept entry.
core::entry_info run_kept(core_fixture& f, std::shared_ptr<core::job> j) {
  core::job_run run(*f.cache, *f.sched, as_tenant(""), true, "c", core::steady::now());
  std::promise<core::job_run::ending> ended;
  auto done = ended.get_future();
  EXPECT_TRUE(run.submit(std::move(j), [&](core::job_run::ending e) { ended.set_value(std::move(e)); }).ok());
  core::job_run::ending e = done.get();
  EXPECT_TRUE(e.result.ok()) << e.result.message;
  return e.kept;
}

TEST(numeric_reuse, a_repeated_kept_product_runs_numeric_only_while_its_result_lives) {
  core_fixture f(1, 1 << 22, 1 << 22);
  core::estimate_memo memo(16);
  const std::string a = f.upload(square(100, 300));
  const core::entry_info first = run_kept(f, f.square_of(memo, a));
  EXPECT_EQ(f.fake().numeric_products_run(), 0);
  const core::entry_info second = run_kept(f, f.square_of(memo, a));
  EXPECT_EQ(f.fake().numeric_products_run(), 1);
  EXPECT_EQ(second.info.nnz, first.info.nnz);
  // Both results gone: a full product again.
  std::size_t freed = 0;
  ASSERT_TRUE(core::delete_matrix(*f.cache, as_tenant(""), first.handle, &freed).ok());
  ASSERT_TRUE(core::delete_matrix(*f.cache, as_tenant(""), second.handle, &freed).ok());
  run_kept(f, f.square_of(memo, a));
  EXPECT_EQ(f.fake().numeric_products_run(), 1);
  EXPECT_EQ(f.fake().products_run(), 3);
}

TEST(numeric_reuse, a_repeated_galerkin_product_reruns_its_last_product_numeric_only) {
  core_fixture f(1, 1 << 22, 1 << 22);
  core::estimate_memo memo(16);
  const std::string a = f.upload(square(100, 300));
  const std::string p = f.upload({100, 20, 100, spgemm::value_type::f64});
  auto galerkin = [&] {
    std::shared_ptr<core::job> j;
    EXPECT_TRUE(core::galerkin_job(memo, core::galerkin_form::pt_a_p, f.pin(p), f.pin(a), {}, 0, &j).ok());
    return j;
  };
  const core::entry_info first = run_kept(f, galerkin());
  EXPECT_EQ(first.info.rows, 20);
  EXPECT_EQ(first.info.cols, 20);
  EXPECT_EQ(f.fake().numeric_products_run(), 0);
  run_kept(f, galerkin());
  EXPECT_EQ(f.fake().numeric_products_run(), 1);
  EXPECT_EQ(f.fake().products_run(), 4);
}

}  // namespace
}  // namespace spgemmd::testing
