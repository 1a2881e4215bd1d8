// Shared-memory regions on real POSIX shared-memory objects: registration
// checks the object against what the region declares, references are checked
// against the region, tenants and sessions keep theirs apart, and an object
// that shrinks after registration fails the request instead of the server.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/region_registry.hpp"
#include "core/shm_object.hpp"
#include "shm_file.hpp"

namespace spgemmd::testing {
namespace {

// A caller of tenant `tenant`, not an admin.
core::caller who(const std::string& tenant) { return {tenant, false, {}}; }

core::region_info region(const std::string& session, const std::string& name, const std::string& key,
                         int64_t offset, int64_t bytes) {
  core::region_info r;
  r.session = session;
  r.name = name;
  r.key = key;
  r.offset = offset;
  r.byte_size = bytes;
  return r;
}

TEST(region_registry, an_object_smaller_than_its_region_declares_is_refused) {
  shm_file file(4096);
  core::region_registry regions(8);
  const std::string s = regions.open_session(who(""));
  EXPECT_TRUE(regions.add(who(""), region(s, "whole", file.key(), 0, 4096)).ok());
  const core::outcome larger = regions.add(who(""), region(s, "larger", file.key(), 0, 4097));
  EXPECT_EQ(larger.code, core::status::invalid_argument);
  EXPECT_NE(larger.message.find("holds 4096 bytes, fewer than the 4097 declared"), std::string::npos) << larger.message;
  EXPECT_EQ(regions.add(who(""), region(s, "shifted", file.key(), 1, 4096)).code, core::status::invalid_argument);
  EXPECT_TRUE(regions.add(who(""), region(s, "tail", file.key(), 4000, 96)).ok());
  EXPECT_EQ(regions.add(who(""), region(s, "empty", file.key(), 0, 0)).code, core::status::invalid_argument);
  EXPECT_EQ(regions.add(who(""), region(s, "negative", file.key(), -1, 10)).code, core::status::invalid_argument);
  EXPECT_EQ(regions.add(who(""), region(s, "missing", "/spgemmd-no-such-object", 0, 10)).code, core::status::not_found);
  EXPECT_EQ(regions.add(who(""), region(s, "path", "/../../etc/passwd", 0, 10)).code, core::status::invalid_argument);
  EXPECT_EQ(regions.add(who(""), region(s, "bad name!", file.key(), 0, 10)).code, core::status::invalid_argument);
  EXPECT_EQ(regions.add(who(""), region(s, "whole", file.key(), 0, 10)).code, core::status::already_exists);
  EXPECT_EQ(regions.list(who("")).size(), 2u);
}

TEST(region_registry, references_are_read_and_written_within_their_region_only) {
  shm_file file(8192);
  core::region_registry regions(8);
  const std::string s = regions.open_session(who("t"));
  ASSERT_TRUE(regions.add(who("t"), region(s, "r", file.key(), 4096, 1024)).ok());
  core::region_span span;
  ASSERT_TRUE(regions.resolve(who("t"), "r", 64, 128, 8, "values", &span).ok());
  unsigned char got[128];
  ASSERT_TRUE(span.read(0, got, 128).ok());
  for (int i = 0; i < 128; ++i) EXPECT_EQ(got[i], static_cast<unsigned char>(4096 + 64 + i));
  const unsigned char mark[8] = {9, 9, 9, 9, 9, 9, 9, 9};
  ASSERT_TRUE(span.write(120, mark, 8).ok());
  ASSERT_TRUE(span.read(120, got, 8).ok());
  EXPECT_EQ(std::memcmp(got, mark, 8), 0);
  // Outside the span: refused before the object is touched.
  EXPECT_EQ(span.read(121, got, 8).code, core::status::internal);
  EXPECT_EQ(span.write(-1, mark, 1).code, core::status::internal);

  EXPECT_EQ(regions.resolve(who("t"), "r", 1024, 8, 8, "x", &span).code, core::status::invalid_argument);
  EXPECT_EQ(regions.resolve(who("t"), "r", 1016, 16, 8, "x", &span).code, core::status::invalid_argument);
  EXPECT_EQ(regions.resolve(who("t"), "r", 4, 8, 8, "x", &span).code, core::status::invalid_argument);
  EXPECT_TRUE(regions.resolve(who("t"), "r", 1024, 0, 8, "x", &span).ok());
  EXPECT_EQ(regions.resolve(who("t"), "nope", 0, 8, 8, "x", &span).code, core::status::not_found);
}

TEST(region_registry, tenants_see_only_their_regions_and_sessions) {
  shm_file file(4096);
  core::region_registry regions(8);
  const std::string a = regions.open_session(who("alice")), b = regions.open_session(who("bob"));
  ASSERT_TRUE(regions.add(who("alice"), region(a, "r", file.key(), 0, 4096)).ok());
  core::region_span span;
  EXPECT_EQ(regions.resolve(who("bob"), "r", 0, 8, 8, "x", &span).code, core::status::not_found);
  EXPECT_EQ(regions.remove(who("bob"), "r").code, core::status::not_found);
  EXPECT_TRUE(regions.list(who("bob")).empty());
  // Bob may not register into Alice's session, and names are per tenant.
  EXPECT_EQ(regions.add(who("bob"), region(a, "mine", file.key(), 0, 8)).code, core::status::not_found);
  EXPECT_TRUE(regions.add(who("bob"), region(b, "r", file.key(), 0, 8)).ok());
  EXPECT_EQ(regions.list(who("alice")).size(), 1u);
  EXPECT_EQ(regions.size(), 2u);
  EXPECT_EQ(regions.close_session(who("bob"), a), 0u);  // not Bob's
  EXPECT_EQ(regions.list(who("alice")).size(), 1u);
}

TEST(region_registry, an_admin_sees_every_tenants_regions_and_names_one_only_where_it_is_unambiguous) {
  shm_file file(4096);
  core::region_registry regions(8);
  const core::caller admin{"ops", true, {}};
  const std::string a = regions.open_session(who("alice")), b = regions.open_session(who("bob"));
  ASSERT_TRUE(regions.add(who("alice"), region(a, "only-alice", file.key(), 0, 64)).ok());
  ASSERT_TRUE(regions.add(who("alice"), region(a, "both", file.key(), 0, 64)).ok());
  ASSERT_TRUE(regions.add(who("bob"), region(b, "both", file.key(), 0, 64)).ok());
  const std::vector<core::region_info> all = regions.list(admin);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].tenant, "alice");
  EXPECT_EQ(all[2].tenant, "bob");
  EXPECT_EQ(regions.list(who("alice")).size(), 2u);
  core::region_span span;
  EXPECT_TRUE(regions.resolve(admin, "only-alice", 0, 8, 8, "x", &span).ok());
  const core::outcome ambiguous = regions.resolve(admin, "both", 0, 8, 8, "x", &span);
  EXPECT_EQ(ambiguous.code, core::status::not_found);
  EXPECT_NE(ambiguous.message.find("2 tenants"), std::string::npos) << ambiguous.message;
  // An admin registers only in sessions of its own tenant.
  EXPECT_EQ(regions.add(admin, region(a, "mine", file.key(), 0, 8)).code, core::status::not_found);
  EXPECT_TRUE(regions.remove(admin, "only-alice").ok());
  EXPECT_EQ(regions.list(who("alice")).size(), 1u);
}

TEST(region_registry, regions_end_with_their_session_or_when_unregistered) {
  shm_file file(4096);
  core::region_registry regions(8);
  const std::string s1 = regions.open_session(who("")), s2 = regions.open_session(who(""));
  ASSERT_TRUE(regions.add(who(""), region(s1, "a", file.key(), 0, 8)).ok());
  ASSERT_TRUE(regions.add(who(""), region(s1, "b", file.key(), 0, 8)).ok());
  ASSERT_TRUE(regions.add(who(""), region(s2, "c", file.key(), 0, 8)).ok());
  core::region_span held;
  ASSERT_TRUE(regions.resolve(who(""), "a", 0, 8, 8, "x", &held).ok());
  EXPECT_EQ(regions.close_session(who(""), s1), 2u);
  EXPECT_EQ(regions.list(who("")).size(), 1u);
  unsigned char got[8];
  EXPECT_TRUE(held.read(0, got, 8).ok());  // a request that resolved it before still completes
  EXPECT_EQ(regions.add(who(""), region(s1, "d", file.key(), 0, 8)).code, core::status::not_found);  // the session ended
  EXPECT_TRUE(regions.remove(who(""), "c").ok());
  EXPECT_EQ(regions.size(), 0u);
  EXPECT_EQ(regions.remove(who(""), "c").code, core::status::not_found);
}

TEST(region_registry, a_tenant_registers_at_most_its_allowance) {
  shm_file file(4096);
  core::region_registry regions(2);
  const std::string s = regions.open_session(who(""));
  EXPECT_TRUE(regions.add(who(""), region(s, "a", file.key(), 0, 8)).ok());
  EXPECT_TRUE(regions.add(who(""), region(s, "b", file.key(), 0, 8)).ok());
  EXPECT_EQ(regions.add(who(""), region(s, "c", file.key(), 0, 8)).code, core::status::over_limit);
  const std::string other = regions.open_session(who("t"));
  EXPECT_TRUE(regions.add(who("t"), region(other, "a", file.key(), 0, 8)).ok());
}

TEST(region_registry, an_object_that_shrinks_after_registration_fails_the_request_not_the_server) {
  shm_file file(8192);
  core::region_registry regions(8);
  const std::string s = regions.open_session(who(""));
  ASSERT_TRUE(regions.add(who(""), region(s, "r", file.key(), 0, 8192)).ok());
  core::region_span span;
  ASSERT_TRUE(regions.resolve(who(""), "r", 4096, 4096, 8, "values", &span).ok());
  file.resize(4100);
  std::vector<unsigned char> got(4096);
  const core::outcome read = span.read(0, got.data(), 4096);
  EXPECT_EQ(read.code, core::status::invalid_argument);
  EXPECT_NE(read.message.find("shrank"), std::string::npos) << read.message;
  EXPECT_EQ(span.write(0, got.data(), 4096).code, core::status::invalid_argument);
}

TEST(region_registry, a_large_span_goes_in_pieces_byte_for_byte) {
  const int64_t bytes = (40 << 20) + 12;  // pieces on threads of their own, one of them shorter
  shm_file file(bytes + 4);
  core::region_registry regions(8);
  const std::string s = regions.open_session(who(""));
  ASSERT_TRUE(regions.add(who(""), region(s, "r", file.key(), 4, bytes)).ok());
  core::region_span span;
  ASSERT_TRUE(regions.resolve(who(""), "r", 0, bytes, 4, "values", &span).ok());
  std::vector<unsigned char> got(static_cast<std::size_t>(bytes));
  ASSERT_TRUE(span.read(0, got.data(), bytes).ok());
  for (std::size_t i = 0; i < got.size(); i += 4093) ASSERT_EQ(got[i], static_cast<unsigned char>(i + 4)) << i;
  for (std::size_t i = 0; i < got.size(); ++i) got[i] = static_cast<unsigned char>(i * 7);
  ASSERT_TRUE(span.write(0, got.data(), bytes).ok());
  const std::vector<char> back = file.read(4, bytes);
  EXPECT_EQ(std::memcmp(back.data(), got.data(), got.size()), 0);
  file.resize(bytes / 2);
  EXPECT_EQ(span.read(0, got.data(), bytes).code, core::status::invalid_argument);
}

// A device allocation as the registry sees one (it never dereferences it):
// `bytes` long, counted while something holds it.
std::shared_ptr<const spgemm::ipc_mapping> allocation(std::size_t bytes) {
  auto m = std::make_shared<spgemm::ipc_mapping>();
  m->bytes = bytes;
  return m;
}

TEST(region_registry, device_regions_lie_within_their_allocation_and_are_named_only_as_device_memory) {
  shm_file file(4096);
  core::region_registry regions(8);
  const std::string s = regions.open_session(who("t"));
  const auto whole = allocation(1 << 20);
  ASSERT_TRUE(regions.add_device(who("t"), region(s, "gpu", "", 4096, 65536), whole).ok());
  EXPECT_EQ(regions.add_device(who("t"), region(s, "past", "", 1 << 19, (1 << 19) + 1), whole).code,
            core::status::invalid_argument);
  EXPECT_EQ(regions.add_device(who("t"), region(s, "gpu", "", 0, 16), whole).code, core::status::already_exists);
  EXPECT_EQ(regions.add_device(who("t"), region("s-none", "other", "", 0, 16), whole).code, core::status::not_found);
  ASSERT_TRUE(regions.add(who("t"), region(s, "host", file.key(), 0, 4096)).ok());

  spgemm::ipc_array a;
  ASSERT_TRUE(regions.resolve_device(who("t"), "gpu", 128, 1000, "values", &a).ok());
  EXPECT_EQ(a.mapped, whole);
  EXPECT_EQ(a.offset, 4096u + 128u);  // from the allocation's base
  EXPECT_EQ(a.length, 1000u);
  EXPECT_TRUE(a.handle.empty());
  EXPECT_EQ(regions.resolve_device(who("t"), "gpu", 65000, 1000, "values", &a).code, core::status::invalid_argument);
  EXPECT_EQ(regions.resolve_device(who("t"), "gpu", -8, 8, "values", &a).code, core::status::invalid_argument);
  EXPECT_EQ(regions.resolve_device(who("u"), "gpu", 0, 8, "values", &a).code, core::status::not_found);
  const core::outcome host = regions.resolve_device(who("t"), "host", 0, 8, "values", &a);
  EXPECT_EQ(host.code, core::status::invalid_argument);
  EXPECT_NE(host.message.find("shared memory, not device memory"), std::string::npos) << host.message;
  core::region_span span;
  EXPECT_EQ(regions.resolve(who("t"), "gpu", 0, 8, 8, "values", &span).code, core::status::invalid_argument);

  const std::vector<core::region_info> listed = regions.list(who("t"));
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_TRUE(listed[0].device);
  EXPECT_FALSE(listed[1].device);
}

TEST(region_registry, a_device_allocation_stays_open_while_a_region_or_a_resolved_reference_holds_it) {
  core::region_registry regions(8);
  const std::string s = regions.open_session(who("t"));
  auto held = allocation(4096);
  const std::weak_ptr<const spgemm::ipc_mapping> seen = held;
  ASSERT_TRUE(regions.add_device(who("t"), region(s, "a", "", 0, 4096), std::move(held)).ok());
  spgemm::ipc_array in_flight;
  ASSERT_TRUE(regions.resolve_device(who("t"), "a", 0, 64, "values", &in_flight).ok());
  ASSERT_TRUE(regions.remove(who("t"), "a").ok());
  EXPECT_FALSE(seen.expired());  // a job that resolved it still copies
  in_flight = {};
  EXPECT_TRUE(seen.expired());

  auto again = allocation(4096);
  const std::weak_ptr<const spgemm::ipc_mapping> seen_again = again;
  ASSERT_TRUE(regions.add_device(who("t"), region(s, "b", "", 0, 4096), std::move(again)).ok());
  EXPECT_EQ(regions.close_session(who("t"), s), 1u);
  EXPECT_TRUE(seen_again.expired());
}

TEST(shm_object, the_token_proof_answers_only_yes_or_no) {
  shm_file file(32);
  std::string token(32, '\0');
  for (int i = 0; i < 32; ++i) token[static_cast<std::size_t>(i)] = static_cast<char>(i);
  bool same = false;
  ASSERT_TRUE(core::holds_token(file.key(), token, &same).ok());
  EXPECT_TRUE(same);
  token[5] = 'x';
  ASSERT_TRUE(core::holds_token(file.key(), token, &same).ok());
  EXPECT_FALSE(same);
  // Only an object of exactly the token's size is read: no probing of others.
  shm_file larger(4096);
  EXPECT_EQ(core::holds_token(larger.key(), token, &same).code, core::status::invalid_argument);
  EXPECT_EQ(core::holds_token(file.key(), "short", &same).code, core::status::invalid_argument);
  EXPECT_EQ(core::holds_token("/spgemmd-no-such-object", token, &same).code, core::status::not_found);
}

}  // namespace
}  // namespace spgemmd::testing
