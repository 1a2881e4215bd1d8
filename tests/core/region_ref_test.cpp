// The checks of references into shared-memory regions (core/region_ref.hpp):
// the edges by hand, then millions of random references, names and layouts
// against a reference that computes in 128 bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/region_ref.hpp"

namespace spgemmd::testing {
namespace {

using core::check_range;
constexpr int64_t max64 = std::numeric_limits<int64_t>::max();
__extension__ using int128 = __int128;

// What check_range must decide, in 128-bit arithmetic.
bool range_ok(int64_t size, int64_t offset, int64_t length, int64_t alignment) {
  if (size < 0 || offset < 0 || length < 0) return false;
  if (offset % alignment != 0 || length % alignment != 0) return false;
  return static_cast<int128>(offset) + length <= size;
}

TEST(region_ref, a_range_lies_within_its_region_at_its_alignment) {
  EXPECT_TRUE(check_range(4096, 0, 4096, 8, "a").ok());
  EXPECT_TRUE(check_range(4096, 4096, 0, 8, "a").ok());  // empty, at the end
  EXPECT_TRUE(check_range(0, 0, 0, 4, "a").ok());
  EXPECT_FALSE(check_range(4096, 8, 4096, 8, "a").ok());  // one element past the end
  EXPECT_FALSE(check_range(4096, 4104, 0, 8, "a").ok());  // starts past the end
  EXPECT_FALSE(check_range(4096, 4, 8, 8, "a").ok());     // misaligned offset
  EXPECT_FALSE(check_range(4096, 8, 12, 8, "a").ok());    // a partial element
  EXPECT_FALSE(check_range(4096, -8, 8, 8, "a").ok());
  EXPECT_FALSE(check_range(4096, 0, -8, 8, "a").ok());
  EXPECT_FALSE(check_range(-1, 0, 0, 8, "a").ok());
  // Sums that overflow int64 never wrap into the region.
  EXPECT_FALSE(check_range(max64, 8, max64 - 7, 1, "a").ok());
  EXPECT_FALSE(check_range(4096, max64 - 7, 16, 8, "a").ok());
  EXPECT_TRUE(check_range(max64, max64 - 7, 7, 1, "a").ok());
  const core::outcome o = check_range(100, 64, 64, 8, "col_indices");
  EXPECT_EQ(o.code, core::status::invalid_argument);
  EXPECT_NE(o.message.find("col_indices [64, +64) lies outside its region of 100 bytes"), std::string::npos)
      << o.message;
  EXPECT_EQ(check_range(100, 0, 0, 3, "a").code, core::status::internal);  // a caller's mistake, not the client's
}

TEST(region_ref, random_ranges_are_decided_as_128_bit_arithmetic_decides) {
  std::mt19937_64 rng(21);
  // Values near the edges that matter: 0, small, around the region's size,
  // around int64's limits, and anything at all.
  auto pick = [&](int64_t size) -> int64_t {
    switch (rng() % 7) {
      case 0: return static_cast<int64_t>(rng() % 17) - 8;
      case 1: {  // saturated at int64's ends (the test's own sum must not overflow)
        const int128 v = static_cast<int128>(size) + static_cast<int64_t>(rng() % 33) - 16;
        return static_cast<int64_t>(std::clamp<int128>(v, std::numeric_limits<int64_t>::min(), max64));
      }
      case 2: return max64 - static_cast<int64_t>(rng() % 16);
      case 3: return std::numeric_limits<int64_t>::min() + static_cast<int64_t>(rng() % 16);
      case 4: return static_cast<int64_t>(rng() % (static_cast<uint64_t>(std::max<int64_t>(size, 1)) + 1));
      case 5: return size / 2 + static_cast<int64_t>(rng() % 9) - 4;
      default: return static_cast<int64_t>(rng());
    }
  };
  const int64_t alignments[] = {1, 4, 8, 64};
  for (int i = 0; i < 2000000; ++i) {
    const int64_t size = rng() % 4 == 0 ? pick(0) : static_cast<int64_t>(rng() % (1ull << (rng() % 63)));
    const int64_t offset = pick(size), length = pick(size);
    const int64_t alignment = alignments[rng() % 4];
    ASSERT_EQ(check_range(size, offset, length, alignment, "r").ok(), range_ok(size, offset, length, alignment))
        << "size " << size << " offset " << offset << " length " << length << " alignment " << alignment;
  }
}

TEST(region_ref, names_and_object_keys_admit_no_path) {
  EXPECT_TRUE(core::check_region_name("a").ok());
  EXPECT_TRUE(core::check_region_name("spgemm-arena_1.out").ok());
  EXPECT_TRUE(core::check_region_name(std::string(128, 'x')).ok());
  EXPECT_FALSE(core::check_region_name("").ok());
  EXPECT_FALSE(core::check_region_name(std::string(129, 'x')).ok());
  EXPECT_FALSE(core::check_region_name("a b").ok());
  EXPECT_FALSE(core::check_region_name("a/b").ok());

  EXPECT_TRUE(core::check_object_key("spgemm-1").ok());
  EXPECT_TRUE(core::check_object_key("/spgemm-1").ok());
  EXPECT_TRUE(core::check_object_key(std::string(255, 'k')).ok());
  EXPECT_TRUE(core::check_object_key("/" + std::string(255, 'k')).ok());
  for (const std::string& bad : std::vector<std::string>{"", "/", ".", "..", "/.", "/..", "../etc/passwd", "/dev/shm/x", "a/b", "//a",
                                "a\\b", "a\nb", std::string("a\0b", 3), std::string(256, 'k')}) {
    EXPECT_FALSE(core::check_object_key(bad).ok()) << bad;
  }
  // Random strings: accepted exactly when they are a name of the allowed characters.
  std::mt19937_64 rng(7);
  const std::string alphabet = "ab./-_\\ \0\xff", allowed = "ab.-_";
  for (int i = 0; i < 200000; ++i) {
    std::string key(rng() % 6, ' ');
    for (char& c : key) c = alphabet[rng() % alphabet.size()];
    const std::size_t from = !key.empty() && key[0] == '/' ? 1 : 0;
    const std::string name = key.substr(from);
    const bool ok = !name.empty() && name.find_first_not_of(allowed) == std::string::npos && name != "." &&
                    name != "..";
    ASSERT_EQ(core::check_object_key(key).ok(), ok) << key;
  }
}

TEST(region_ref, a_layout_puts_each_array_at_a_multiple_of_64_and_overflows_into_an_error) {
  core::csr_layout l;
  ASSERT_TRUE(core::layout_csr(3, 5, 8, &l).ok());
  EXPECT_EQ(l.row_offsets, 0);
  EXPECT_EQ(l.col_indices, 64);   // 4 offsets: 32 bytes
  EXPECT_EQ(l.values, 128);       // 5 columns: 20 bytes
  EXPECT_EQ(l.bytes, 128 + 40);
  ASSERT_TRUE(core::layout_csr(0, 0, 4, &l).ok());
  EXPECT_EQ(l.bytes, 64);
  EXPECT_FALSE(core::layout_csr(-1, 0, 8, &l).ok());
  EXPECT_FALSE(core::layout_csr(1, -1, 8, &l).ok());
  EXPECT_FALSE(core::layout_csr(1, 1, 2, &l).ok());
  EXPECT_FALSE(core::layout_csr(max64 / 8, 0, 8, &l).ok());
  EXPECT_FALSE(core::layout_csr(0, max64 / 8, 8, &l).ok());
  std::mt19937_64 rng(3);
  for (int i = 0; i < 200000; ++i) {
    const auto rows = static_cast<int64_t>((rng() >> 1) >> (rng() % 63));
    const auto nnz = static_cast<int64_t>((rng() >> 1) >> (rng() % 63));
    const int64_t vs = rng() % 2 ? 4 : 8;
    const int128 cols_at = ((static_cast<int128>(rows) + 1) * 8 + 63) / 64 * 64;
    const int128 values_at = (cols_at + static_cast<int128>(nnz) * 4 + 63) / 64 * 64;
    const int128 end = values_at + static_cast<int128>(nnz) * vs;
    const bool fits = end <= max64;
    ASSERT_EQ(core::layout_csr(rows, nnz, vs, &l).ok(), fits) << rows << " " << nnz;
    if (fits) {
      ASSERT_EQ(l.col_indices, cols_at);
      ASSERT_EQ(l.values, values_at);
      ASSERT_EQ(l.bytes, end);
    }
  }
}

}  // namespace
}  // namespace spgemmd::testing
