// The matrix cache on fake backends: placement, spill to host and restore,
// pins, deletion, reservations, TTL expiry, and its byte budgets.
#include <gtest/gtest.h>

#include <thread>

#include "core_fixture.hpp"

namespace spgemmd::testing {
namespace {

const spgemm::matrix_info small = square(100, 1000);  // 808 + 12000 bytes

TEST(matrix_cache, uploads_go_to_the_device_until_its_budget_then_spill_the_coldest) {
  const std::size_t bytes = small.bytes();
  core_fixture f(1, 3 * bytes, 10 * bytes);
  const std::string a = f.upload(small), b = f.upload(small), c = f.upload(small);
  EXPECT_EQ(f.device().cached, 3 * bytes);
  EXPECT_EQ(f.fake().allocated(), 3 * bytes);
  EXPECT_EQ(f.cache->stats().host_bytes, 0u);

  const std::string d = f.upload(small);  // `a`, the least recently used, goes to the host
  EXPECT_EQ(f.device().cached, 3 * bytes);
  EXPECT_EQ(f.fake().allocated(), 3 * bytes);
  EXPECT_EQ(f.cache->stats().host_bytes, bytes);
  EXPECT_FALSE(f.cache->describe(as_tenant(""), a)->on_device);
  EXPECT_TRUE(f.cache->describe(as_tenant(""), d)->on_device);
  EXPECT_EQ(f.cache->stats().matrices, 4);
}

TEST(matrix_cache, a_spilled_matrix_comes_back_on_use_and_pushes_out_the_next_coldest) {
  const std::size_t bytes = small.bytes();
  core_fixture f(1, 2 * bytes, 10 * bytes);
  const std::string a = f.upload(small), b = f.upload(small), c = f.upload(small);  // a spilled
  core::pin p = f.pin(a);
  auto stored = f.cache->make_resident(*p, 0);
  ASSERT_NE(stored, nullptr);
  EXPECT_EQ(stored->info().nnz, small.nnz);
  EXPECT_TRUE(f.cache->describe(as_tenant(""), a)->on_device);
  EXPECT_FALSE(f.cache->describe(as_tenant(""), b)->on_device);  // the coldest now
  EXPECT_EQ(f.device().cached, 2 * bytes);
  EXPECT_EQ(f.fake().allocated(), 2 * bytes);
  EXPECT_EQ(f.device().uses, 1);
  EXPECT_EQ(f.device().hits, 0);

  // In use (resident for a job), it does not spill: a new upload spills the other.
  auto again = f.cache->make_resident(*p, 0);
  EXPECT_EQ(f.device().hits, 1);
  f.upload(small);
  EXPECT_TRUE(f.cache->describe(as_tenant(""), a)->on_device);
  EXPECT_FALSE(f.cache->describe(as_tenant(""), c)->on_device);
  f.cache->release_resident(*p);
  f.cache->release_resident(*p);
}

TEST(matrix_cache, without_room_on_the_device_or_the_host_an_upload_does_not_fit) {
  const std::size_t bytes = small.bytes();
  core_fixture f(1, bytes, bytes);
  f.upload(small);
  f.upload(small);  // the first spills
  try {
    f.upload(small);
    FAIL() << "a third matrix fit";
  } catch (const spgemm::error& e) {
    EXPECT_EQ(e.kind(), spgemm::error_kind::does_not_fit);
    EXPECT_EQ(core::outcome_of(e).code, core::status::does_not_fit);
  }
  EXPECT_EQ(f.cache->stats().matrices, 2);
}

TEST(matrix_cache, a_deleted_pinned_matrix_is_unlisted_at_once_and_freed_with_its_last_pin) {
  const std::size_t bytes = small.bytes();
  core_fixture f(1, 4 * bytes, 0);
  const std::string a = f.upload(small);
  core::pin p = f.pin(a);
  EXPECT_EQ(f.cache->erase(as_tenant(""), a), bytes);
  EXPECT_FALSE(f.cache->describe(as_tenant(""), a));
  EXPECT_FALSE(f.pin(a));
  EXPECT_EQ(f.fake().allocated(), bytes);
  p.reset();
  EXPECT_EQ(f.fake().allocated(), 0u);
  EXPECT_EQ(f.device().cached, 0u);
  EXPECT_FALSE(f.cache->erase(as_tenant(""), a));
}

TEST(matrix_cache, tenants_see_only_their_own_matrices) {
  core_fixture f(1, 4 * small.bytes(), 0);
  const std::string a = f.upload(small, as_tenant("t1"));
  EXPECT_TRUE(f.pin(a, as_tenant("t1")));
  EXPECT_FALSE(f.pin(a, as_tenant("t2")));
  EXPECT_EQ(f.cache->list(as_tenant("t1")).size(), 1u);
  EXPECT_TRUE(f.cache->list(as_tenant("t2")).empty());
  EXPECT_FALSE(f.cache->erase(as_tenant("t2"), a));
}

TEST(matrix_cache, reservations_spill_for_room_and_never_pass_the_budget) {
  const std::size_t bytes = small.bytes();
  core_fixture f(1, 3 * bytes, 10 * bytes);
  f.upload(small);
  f.upload(small);
  core::reservation r(f.cache.get(), 0);
  EXPECT_TRUE(r.try_grow(2 * bytes));  // spills one
  EXPECT_EQ(f.cache->stats().host_bytes, bytes);
  EXPECT_EQ(f.device().reserved, 2 * bytes);
  EXPECT_FALSE(r.try_grow(2 * bytes));  // more than the budget even with everything spilled
  EXPECT_EQ(f.device().reserved, 2 * bytes);
  r.shrink_to(bytes);
  EXPECT_EQ(f.device().reserved, bytes);
  r.release();
  EXPECT_EQ(f.device().reserved, 0u);
  EXPECT_LE(f.device().peak_used, f.device().budget);
}

TEST(matrix_cache, memory_freed_is_told) {
  core_fixture f(1, 4 * small.bytes(), 0);
  int told = 0;
  f.cache->set_on_freed([&] { ++told; });
  const std::string a = f.upload(small);
  f.cache->erase(as_tenant(""), a);
  EXPECT_EQ(told, 1);
  core::reservation r(f.cache.get(), 0);
  ASSERT_TRUE(r.try_grow(100));
  r.release();
  EXPECT_EQ(told, 2);
}

TEST(matrix_cache, a_stored_result_moves_its_bytes_from_the_reservation_to_the_cache_under_a_promised_handle) {
  const std::size_t bytes = small.bytes();
  core_fixture f(1, 4 * bytes, 0);
  const core::entry_info promised = f.cache->promise_stored(small, 0, "c", 0);
  EXPECT_FALSE(f.cache->describe(as_tenant(""), promised.handle));  // nothing added yet
  core::reservation r(f.cache.get(), 0);
  ASSERT_TRUE(r.try_grow(bytes + 100));
  const core::entry_info kept = f.cache->insert_stored(as_tenant(""), r, f.fake().allocate(small), "c", 0, &promised);
  EXPECT_EQ(kept.handle, promised.handle);
  EXPECT_EQ(r.bytes(), 100u);
  EXPECT_EQ(f.device().reserved, 100u);
  EXPECT_EQ(f.device().cached, bytes);
  EXPECT_TRUE(f.cache->describe(as_tenant(""), promised.handle));
}

TEST(matrix_cache, unused_matrices_expire_after_their_ttl_unless_pinned) {
  core_fixture f(1, 4 * small.bytes(), 0, 64, 1, /*ttl_seconds=*/1);
  const std::string a = f.upload(small), b = f.upload(small);
  EXPECT_EQ(f.cache->sweep_expired(), 0);
  core::pin held = f.pin(b);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  EXPECT_EQ(f.cache->sweep_expired(), 1);
  EXPECT_FALSE(f.cache->describe(as_tenant(""), a));
  EXPECT_TRUE(f.cache->describe(as_tenant(""), b));
  EXPECT_EQ(f.fake().allocated(), small.bytes());
}

TEST(matrix_cache, the_sweeper_expires_in_the_background) {
  core_fixture f(1, 4 * small.bytes(), 0, 64, 1, /*ttl_seconds=*/1);
  const std::string a = f.upload(small);
  f.cache->start_sweeper(std::chrono::milliseconds(50));
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (f.cache->describe(as_tenant(""), a) && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_FALSE(f.cache->describe(as_tenant(""), a));
  EXPECT_EQ(f.fake().allocated(), 0u);
}

TEST(matrix_cache, jobs_go_where_their_inputs_are_else_where_there_is_room) {
  const std::size_t bytes = small.bytes();
  core_fixture f(2, 4 * bytes, 0);
  const std::string a = f.upload(small);
  const std::string b = f.upload(small);  // on the other device, the roomier now
  const int device_a = f.cache->describe(as_tenant(""), a)->device == "fake0" ? 0 : 1;
  EXPECT_EQ(f.cache->describe(as_tenant(""), b)->device, device_a == 0 ? "fake1" : "fake0");
  core::pin pa = f.pin(a);
  EXPECT_EQ(f.cache->preferred_device({&*pa}), device_a);
  core::reservation r(f.cache.get(), device_a);
  ASSERT_TRUE(r.try_grow(bytes));
  EXPECT_EQ(f.cache->roomiest_device(), 1 - device_a);
}

TEST(matrix_cache, a_matrix_in_use_on_one_device_does_not_move_to_another_until_it_is_free) {
  core_fixture f(2, 4 * small.bytes(), 0);
  const std::string a = f.upload(small);
  core::pin p = f.pin(a);
  const int here = f.cache->describe(as_tenant(""), a)->device == "fake0" ? 0 : 1;
  ASSERT_NE(f.cache->make_resident(*p, here), nullptr);
  // A job there reads its copy: moving it would leave that copy allocated
  // beside the cache's count.
  EXPECT_EQ(f.cache->make_resident(*p, 1 - here), nullptr);
  f.cache->release_resident(*p);
  ASSERT_NE(f.cache->make_resident(*p, 1 - here), nullptr);
  EXPECT_EQ(f.fake(here).allocated(), 0u);
  EXPECT_EQ(f.fake(1 - here).allocated(), small.bytes());
  f.cache->release_resident(*p);
}

}  // namespace
}  // namespace spgemmd::testing
