// Uploads into the cache (core::upload): the rows copied to a device with
// room as they arrive, else room held in the host budget and the matrix
// stored at the end; a matrix larger than every budget, or with room nowhere,
// refused at its header; names counted beside the bytes.
#include <gtest/gtest.h>

#include "core/upload.hpp"
#include "core_fixture.hpp"

namespace spgemmd::testing {
namespace {

const spgemm::matrix_info small = square(100, 1000);

spgemm::host_csr_arrays arrays_of(const spgemm::any_csr& m) {
  return std::visit(
      [](const auto& c) {
        return spgemm::host_csr_arrays{c.row_offsets.data(), c.col_indices.data(), c.values.data()};
      },
      m);
}

TEST(upload, a_matrix_larger_than_every_budget_is_refused_at_its_header) {
  core_fixture f(2, small.bytes() - 1, 0);
  const core::outcome o = core::upload::check(*f.cache, as_tenant(""), small);
  EXPECT_EQ(o.code, core::status::does_not_fit);
  EXPECT_NE(o.message.find("a 100 x 100 matrix with nnz=1000 takes"), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("so it can never be stored here"), std::string::npos);
  core_fixture roomy(1, small.bytes(), 0);
  EXPECT_TRUE(core::upload::check(*roomy.cache, as_tenant(""), small).ok());
  // Larger than the devices but not the host: products read it in row panels.
  core_fixture host(1, small.bytes() - 1, small.bytes());
  EXPECT_TRUE(core::upload::check(*host.cache, as_tenant(""), small).ok());
}

TEST(upload, rows_go_to_a_device_with_room_as_they_arrive) {
  core_fixture f(1, 2 * small.bytes(), 0);
  spgemm::any_csr m = filled_matrix(small);
  core::upload u(*f.cache, *f.sched, as_tenant("t"), small, "m", arrays_of(m));
  EXPECT_EQ(f.device().reserved, small.bytes() + 1);  // its room and its name's, held while it arrives
  u.arrived(50, 500);
  u.arrived(100, 1000);
  const core::entry_info e = u.store(m, 0);
  EXPECT_TRUE(e.on_device);
  EXPECT_EQ(e.name, "m");
  EXPECT_EQ(e.bytes, small.bytes() + 1);
  EXPECT_EQ(f.device().reserved, 0u);
  EXPECT_EQ(f.device().cached, small.bytes() + 1);
  EXPECT_EQ(f.fake().allocated(), small.bytes());
  EXPECT_TRUE(f.cache->describe(as_tenant("t"), e.handle));
}

TEST(upload, without_room_on_a_device_the_matrix_goes_to_the_host) {
  core_fixture f(1, small.bytes() * 3 / 2, 4 * small.bytes());
  core::pin busy = f.pin(f.upload(small));
  ASSERT_NE(f.cache->make_resident(*busy, 0), nullptr);  // in use: it does not spill
  spgemm::any_csr m = filled_matrix(small);
  core::upload u(*f.cache, *f.sched, as_tenant(""), small, "", arrays_of(m));
  EXPECT_EQ(f.device().reserved, 0u);
  EXPECT_EQ(f.cache->stats().host_bytes, small.bytes());  // its room in the host budget, held while it arrives
  const core::entry_info e = u.store(m, 0);
  EXPECT_FALSE(e.on_device);
  EXPECT_EQ(f.cache->stats().host_bytes, small.bytes());
  f.cache->release_resident(*busy);
}

TEST(upload, with_room_nowhere_at_its_header_an_upload_is_refused_and_holds_nothing) {
  core_fixture f(1, small.bytes() * 3 / 2, small.bytes() / 2);
  core::pin busy = f.pin(f.upload(small));
  ASSERT_NE(f.cache->make_resident(*busy, 0), nullptr);
  spgemm::any_csr m = filled_matrix(small);
  try {
    core::upload u(*f.cache, *f.sched, as_tenant(""), small, "", arrays_of(m));
    ADD_FAILURE() << "an upload with room nowhere was accepted";
  } catch (const spgemm::error& e) {
    EXPECT_EQ(e.kind(), spgemm::error_kind::does_not_fit);
    EXPECT_NE(std::string(e.what()).find("no room for a matrix of"), std::string::npos) << e.what();
  }
  EXPECT_EQ(f.device().reserved, 0u);
  EXPECT_EQ(f.cache->stats().host_bytes, 0u);
  f.cache->release_resident(*busy);
}

TEST(upload, uploads_arriving_together_never_hold_more_than_the_budgets) {
  // Room for two on the device and one in the host budget: the fourth header is refused.
  core_fixture f(1, 2 * small.bytes(), small.bytes());
  spgemm::any_csr m = filled_matrix(small);
  std::vector<std::unique_ptr<core::upload>> arriving;
  for (int i = 0; i < 3; ++i) {
    arriving.push_back(std::make_unique<core::upload>(*f.cache, *f.sched, as_tenant(""), small, "", arrays_of(m)));
  }
  EXPECT_THROW(core::upload(*f.cache, *f.sched, as_tenant(""), small, "", arrays_of(m)), spgemm::error);
  EXPECT_EQ(f.device().reserved, 2 * small.bytes());
  EXPECT_EQ(f.cache->stats().host_bytes, small.bytes());
  arriving.clear();
  EXPECT_EQ(f.device().reserved, 0u);
  EXPECT_EQ(f.cache->stats().host_bytes, 0u);
}

TEST(upload, an_abandoned_upload_frees_its_room) {
  core_fixture f(1, 2 * small.bytes(), 0);
  spgemm::any_csr m = filled_matrix(small);
  {
    core::upload u(*f.cache, *f.sched, as_tenant(""), small, "", arrays_of(m));
    u.arrived(10, 100);
    EXPECT_EQ(f.device().reserved, small.bytes());
  }
  EXPECT_EQ(f.device().reserved, 0u);
  EXPECT_EQ(f.fake().allocated(), 0u);
}

}  // namespace
}  // namespace spgemmd::testing
