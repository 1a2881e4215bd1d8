// bhSPARSE's bins and its per-row pieces that run on the host as on the
// device (engine/bhsparse/bhsparse_tuning.hpp, heap_method.hpp) and the merge
// path (engine/cuda/merge_path.hpp). CPU only.
#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "bhsparse/bhsparse_tuning.hpp"
#include "bhsparse/heap_method.hpp"
#include "cuda/merge_path.hpp"

namespace spgemm::bhsparse {
namespace {

TEST(BhsparseBins, TheThirtyEightBinsOfThePaper) {
  EXPECT_EQ(bin_of(0), bin_empty);
  EXPECT_EQ(bin_of(1), bin_single);
  for (int u = 2; u <= 32; ++u) EXPECT_EQ(bin_of(u), u);
  EXPECT_EQ(bin_of(33), first_esc_bin);
  EXPECT_EQ(bin_of(64), first_esc_bin);
  EXPECT_EQ(bin_of(65), first_esc_bin + 1);
  EXPECT_EQ(bin_of(256), first_esc_bin + 2);
  EXPECT_EQ(bin_of(257), first_esc_bin + 3);
  EXPECT_EQ(bin_of(512), first_esc_bin + 3);
  EXPECT_EQ(bin_of(513), long_bin);
  EXPECT_EQ(bin_of(std::int64_t{1} << 40), long_bin);
  EXPECT_EQ(bin_count, 38);
  for (int b = first_esc_bin; b < long_bin; ++b) {
    EXPECT_EQ(esc_size(b), 64 << (b - first_esc_bin));
    EXPECT_EQ(esc_threads(b) * 2, esc_size(b));
  }
  EXPECT_EQ(esc_size(long_bin - 1), esc_max);
}

TEST(BhsparseBins, MergeRoundsFitTheirBlocks) {
  for (int c = first_merge_capacity; c <= max_merge_capacity; c *= 2) {
    EXPECT_GE(merge_threads(c) * merge_items_per_thread, c) << c;
    EXPECT_LE(merge_threads(c), 1024) << c;
  }
  const std::size_t h100 = 227 * 1024 - 1024;
  const int f64 = merge_capacity_max(h100, 8);
  EXPECT_LE(merge_shared_bytes(f64, 8), h100);
  EXPECT_GE(f64, 8192);
  EXPECT_EQ(merge_capacity_max(48 * 1024, 8), 4096);  // 4096 x 12 bytes: 48 KB exactly
  // A row of at most 256 entries takes round 0 only; one of 300 rounds 0 and
  // 1; one beyond the largest round every round and two global lists.
  EXPECT_EQ(long_row_area_bound(200, 4096), 256);
  EXPECT_EQ(long_row_area_bound(256, 4096), 256);
  EXPECT_EQ(long_row_area_bound(300, 4096), 256 + 512);
  EXPECT_EQ(long_row_area_bound(4096, 4096), 256 + 512 + 1024 + 2048 + 4096);
  EXPECT_EQ(long_row_area_bound(5000, 4096), 256 + 512 + 1024 + 2048 + 4096 + 2 * 5000);
}

// The heap method against a std::map: sorted, unique, values summed.
TEST(BhsparseHeap, SortsAndFusesARow) {
  std::mt19937 rng(5);
  for (int n = 0; n <= 40; ++n) {
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<int> k(static_cast<std::size_t>(n));
      std::vector<double> v(static_cast<std::size_t>(n));
      std::map<int, double> expect;
      const int range = 1 + static_cast<int>(rng() % 50);
      for (int i = 0; i < n; ++i) {
        k[i] = static_cast<int>(rng() % static_cast<unsigned>(range));
        v[i] = static_cast<double>(rng() % 1000) / 8.0;  // exact sums in any order
        expect[k[i]] += v[i];
      }
      auto keys = [&](int i) -> int& { return k[static_cast<std::size_t>(i)]; };
      auto vals = [&](int i) -> double& { return v[static_cast<std::size_t>(i)]; };
      const int first = heap_merge_row(keys, vals, n);
      ASSERT_EQ(n - first, static_cast<int>(expect.size()));
      int i = first;
      for (const auto& [col, sum] : expect) {
        EXPECT_EQ(k[static_cast<std::size_t>(i)], col);
        EXPECT_EQ(v[static_cast<std::size_t>(i)], sum);
        ++i;
      }
    }
  }
}

TEST(MergePath, SplitsMatchASerialMerge) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<int> a(rng() % 40), b(rng() % 40);
    for (int& x : a) x = static_cast<int>(rng() % 30);
    for (int& x : b) x = static_cast<int>(rng() % 30);
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    const auto na = static_cast<std::int64_t>(a.size());
    const auto nb = static_cast<std::int64_t>(b.size());
    // The reference: a stable merge, ties to a.
    std::vector<std::pair<int, int>> ref;  // (key, 0 = a / 1 = b)
    for (int x : a) ref.emplace_back(x, 0);
    for (int x : b) ref.emplace_back(x, 1);
    std::stable_sort(ref.begin(), ref.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    for (std::int64_t diag = 0; diag <= na + nb; ++diag) {
      const std::int64_t ai = cuda::merge_path_split(a, na, b, nb, diag);
      std::int64_t from_a = 0;
      for (std::int64_t i = 0; i < diag; ++i) from_a += ref[static_cast<std::size_t>(i)].second == 0 ? 1 : 0;
      ASSERT_EQ(ai, from_a) << "diag " << diag;
      // The outputs from diag on, three at a time.
      const std::int64_t count = std::min<std::int64_t>(3, na + nb - diag);
      cuda::serial_merge(a, na, b, nb, ai, diag - ai, count, [&](std::int64_t k, bool is_a, std::int64_t at) {
        const auto& want = ref[static_cast<std::size_t>(diag + k)];
        EXPECT_EQ(is_a, want.second == 0);
        EXPECT_EQ(is_a ? a[static_cast<std::size_t>(at)] : b[static_cast<std::size_t>(at)], want.first);
      });
    }
  }
}

// The segmented merge's passes (cuda::segmented_merge_range, as the kernel
// runs them 8 items a thread): every segment one run, stable.
TEST(SegmentedMerge, PassesMergeEverySegment) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 60; ++trial) {
    const int p = 1 + static_cast<int>(rng() % 6);
    std::vector<std::int64_t> seg = {0};
    std::vector<std::int64_t> sub = {0};
    std::vector<int> seg_of;
    std::vector<int> keys;
    std::vector<double> vals;  // the item's original position: stability is visible
    int most = 0;
    for (int s = 0; s < p; ++s) {
      const int q = static_cast<int>(rng() % 13);  // sub-segments of the segment, empty ones among them
      most = std::max(most, q);
      for (int i = 0; i < q; ++i) {
        std::vector<int> run(rng() % 9);
        for (int& k : run) k = static_cast<int>(rng() % 20);
        std::sort(run.begin(), run.end());
        for (const int k : run) {
          keys.push_back(k);
          vals.push_back(static_cast<double>(vals.size()));
        }
        sub.push_back(static_cast<std::int64_t>(keys.size()));
        seg_of.push_back(s);
      }
      seg.push_back(static_cast<std::int64_t>(sub.size()) - 1);
    }
    const auto n = static_cast<std::int64_t>(keys.size());
    const auto q = static_cast<std::int64_t>(sub.size()) - 1;
    seg_of.push_back(p > 0 ? p - 1 : 0);  // read for no item: keeps seg_of[q] defined
    // The reference: each segment's items stably sorted by key.
    std::vector<std::pair<int, double>> ref;
    for (int s = 0; s < p; ++s) {
      std::vector<std::pair<int, double>> part;
      for (std::int64_t x = sub[static_cast<std::size_t>(seg[s])]; x < sub[static_cast<std::size_t>(seg[s + 1])]; ++x)
        part.emplace_back(keys[static_cast<std::size_t>(x)], vals[static_cast<std::size_t>(x)]);
      std::stable_sort(part.begin(), part.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
      ref.insert(ref.end(), part.begin(), part.end());
    }
    std::vector<int> k2(keys.size());
    std::vector<double> v2(vals.size());
    int* kb[2] = {keys.data(), k2.data()};
    double* vb[2] = {vals.data(), v2.data()};
    int in = 0;
    for (int level = 0; (1 << level) < most; ++level) {
      for (std::int64_t x0 = 0; x0 < n; x0 += 8) {
        cuda::segmented_merge_range(kb[in], vb[in], kb[1 - in], vb[1 - in], sub, q, seg_of, seg, level, x0,
                                    std::min<std::int64_t>(x0 + 8, n));
      }
      in = 1 - in;
    }
    for (std::int64_t x = 0; x < n; ++x) {
      ASSERT_EQ(kb[in][x], ref[static_cast<std::size_t>(x)].first) << "trial " << trial << " item " << x;
      ASSERT_EQ(vb[in][x], ref[static_cast<std::size_t>(x)].second) << "trial " << trial << " item " << x;
    }
  }
}

}  // namespace
}  // namespace spgemm::bhsparse
