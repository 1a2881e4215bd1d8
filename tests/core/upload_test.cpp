// Uploads into the cache (core::upload): the rows copied to a device with
// room as they arrive, else stored on the host at the end; a matrix larger
// than every budget refused at its header.
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
  const core::outcome o = core::upload::check(*f.cache, small);
  EXPECT_EQ(o.code, core::status::does_not_fit);
  EXPECT_NE(o.message.find("a 100 x 100 matrix with nnz=1000 takes"), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("so it can never be stored here"), std::string::npos);
  core_fixture roomy(1, small.bytes(), 0);
  EXPECT_TRUE(core::upload::check(*roomy.cache, small).ok());
  // Larger than the devices but not the host: products read it in row panels.
  core_fixture host(1, small.bytes() - 1, small.bytes());
  EXPECT_TRUE(core::upload::check(*host.cache, small).ok());
}

TEST(upload, rows_go_to_a_device_with_room_as_they_arrive) {
  core_fixture f(1, 2 * small.bytes(), 0);
  spgemm::any_csr m = filled_matrix(small);
  core::upload u(*f.cache, *f.sched, small, arrays_of(m));
  EXPECT_EQ(f.device().reserved, small.bytes());  // its room, held while it arrives
  u.arrived(50, 500);
  u.arrived(100, 1000);
  const core::entry_info e = u.store("t", m, "m", 0);
  EXPECT_TRUE(e.on_device);
  EXPECT_EQ(e.name, "m");
  EXPECT_EQ(f.device().reserved, 0u);
  EXPECT_EQ(f.device().cached, small.bytes());
  EXPECT_EQ(f.fake().allocated(), small.bytes());
  EXPECT_TRUE(f.cache->describe("t", e.handle));
}

TEST(upload, without_room_on_a_device_the_matrix_goes_to_the_host) {
  core_fixture f(1, small.bytes() * 3 / 2, 4 * small.bytes());
  core::pin busy = f.pin(f.upload(small));
  ASSERT_NE(f.cache->make_resident(*busy, 0), nullptr);  // in use: it does not spill
  spgemm::any_csr m = filled_matrix(small);
  core::upload u(*f.cache, *f.sched, small, arrays_of(m));
  EXPECT_EQ(f.device().reserved, 0u);
  const core::entry_info e = u.store("", m, "", 0);
  EXPECT_FALSE(e.on_device);
  EXPECT_EQ(f.cache->stats().host_bytes, small.bytes());
  f.cache->release_resident(*busy);
}

TEST(upload, an_abandoned_upload_frees_its_room) {
  core_fixture f(1, 2 * small.bytes(), 0);
  spgemm::any_csr m = filled_matrix(small);
  {
    core::upload u(*f.cache, *f.sched, small, arrays_of(m));
    u.arrived(10, 100);
    EXPECT_EQ(f.device().reserved, small.bytes());
  }
  EXPECT_EQ(f.device().reserved, 0u);
  EXPECT_EQ(f.fake().allocated(), 0u);
}

}  // namespace
}  // namespace spgemmd::testing
