// The memo of product estimates: keys tell products apart, the least
// recently used entry goes first.
#include <gtest/gtest.h>

#include <memory>

#include "core/estimate_memo.hpp"
#include "fake_backend.hpp"

using spgemmd::core::estimate_memo;
using spgemmd::testing::fake_backend;

namespace {

spgemm::memory_estimate estimate(std::size_t bytes) {
  spgemm::memory_estimate e;
  e.output_bytes = bytes;
  e.method = "m" + std::to_string(bytes);
  return e;
}

}  // namespace

TEST(estimate_memo, keys_tell_products_apart) {
  spgemm::multiply_options o;
  const std::string k = estimate_memo::key("t", "a", "b", 0, o);
  EXPECT_EQ(k, estimate_memo::key("t", "a", "b", 0, o));
  EXPECT_NE(k, estimate_memo::key("t", "b", "a", 0, o));
  EXPECT_NE(k, estimate_memo::key("u", "a", "b", 0, o));
  EXPECT_NE(k, estimate_memo::key("t", "a", "b", 1, o));
  EXPECT_NE(estimate_memo::key("t", "ab", "c", 0, o), estimate_memo::key("t", "a", "bc", 0, o));
  spgemm::multiply_options other = o;
  other.algo = spgemm::algorithm::gustavson;
  EXPECT_NE(k, estimate_memo::key("t", "a", "b", 0, other));
  other = o;
  other.output_type = spgemm::value_type::f32;
  EXPECT_NE(k, estimate_memo::key("t", "a", "b", 0, other));
  other = o;
  other.tuning.rmerge.subwarp = 8;
  EXPECT_NE(k, estimate_memo::key("t", "a", "b", 0, other));
  other = o;
  other.tuning.esc_slice_products = 1000;
  EXPECT_NE(k, estimate_memo::key("t", "a", "b", 0, other));
}

TEST(estimate_memo, keeps_the_most_recently_used) {
  estimate_memo memo(2);
  EXPECT_FALSE(memo.find("x"));
  memo.put("x", estimate(1), {});
  memo.put("y", estimate(2), {});
  ASSERT_TRUE(memo.find("x"));     // x is now the most recently used
  memo.put("z", estimate(3), {});  // y goes
  EXPECT_FALSE(memo.find("y"));
  ASSERT_TRUE(memo.find("x"));
  EXPECT_EQ(memo.find("x")->estimate.output_bytes, 1u);
  EXPECT_EQ(memo.find("z")->estimate.method, "m3");
  memo.put("z", estimate(4), {});
  EXPECT_EQ(memo.find("z")->estimate.output_bytes, 4u);
}

TEST(estimate_memo, remembers_results_and_their_matrices_while_they_live) {
  estimate_memo memo(1);
  memo.put("x", estimate(1), {});
  EXPECT_FALSE(memo.find("x")->result);  // not yet run
  fake_backend b;
  auto c = b.allocate({3, 4, 5, spgemm::value_type::f32});
  memo.note_result("x", c);
  ASSERT_TRUE(memo.find("x")->result);
  EXPECT_EQ(memo.find("x")->result->nnz, 5);
  EXPECT_EQ(memo.find("x")->result->type, spgemm::value_type::f32);
  EXPECT_EQ(memo.find("x")->structure.lock(), c);
  c.reset();  // gone: its size is still known, its structure not
  EXPECT_TRUE(memo.find("x")->result);
  EXPECT_FALSE(memo.find("x")->structure.lock());
  memo.put("x", estimate(2), {});  // a new estimate: its result is not known
  EXPECT_FALSE(memo.find("x")->result);
  memo.note_result("y", b.allocate({1, 1, 1, spgemm::value_type::f64}));  // unknown key: nothing
  EXPECT_FALSE(memo.find("y"));
}

TEST(estimate_memo, drops_what_was_sized_for_operands_that_are_gone) {
  estimate_memo memo(8);
  auto a = std::make_shared<int>(1);
  auto b = std::make_shared<int>(2);
  memo.put("a*b", estimate(1), {a, b});
  memo.put("b*b", estimate(2), {b, b});
  memo.put("a*a", estimate(3), {a, a});
  EXPECT_EQ(memo.drop_gone(), 0u);
  a.reset();  // deleted: what used it can never be asked for again
  EXPECT_EQ(memo.drop_gone(), 2u);
  EXPECT_FALSE(memo.find("a*b"));
  EXPECT_FALSE(memo.find("a*a"));
  ASSERT_TRUE(memo.find("b*b"));
  b.reset();
  EXPECT_EQ(memo.drop_gone(), 1u);
  EXPECT_EQ(memo.size(), 0u);
  memo.put("x", estimate(4), {});  // still usable after emptying
  EXPECT_EQ(memo.find("x")->estimate.output_bytes, 4u);
}
