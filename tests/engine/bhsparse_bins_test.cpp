// bhSPARSE's bins and its per-row pieces that run on the host as on the
// device (engine/bhsparse/bhsparse_tuning.hpp, heap_method.hpp,
// long_rows.hpp), a long row through the merge rounds and the global round as
// the kernels take it, and the merge path (engine/cuda/merge_path.hpp). CPU
// only.
#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "bhsparse/bhsparse_tuning.hpp"
#include "bhsparse/heap_method.hpp"
#include "bhsparse/long_rows.hpp"
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

// The global round's lookup: a column of level 1 is found there, not new
// (every negative code used to read as new: the column went into level 1
// twice, and a row grew past its bound and its lists).
TEST(BhsparseLongRows, ALevelOneColumnIsNotNew) {
  const std::vector<int> level2 = {1, 4, 9, 30};
  const std::vector<int> level1 = {2, 5, 31};
  EXPECT_EQ(find_in_levels(level2, 4, level1, 3, 9), 2);
  EXPECT_TRUE(in_level2(find_in_levels(level2, 4, level1, 3, 1)));
  for (int p = 0; p < 3; ++p) {
    const int code = find_in_levels(level2, 4, level1, 3, level1[static_cast<std::size_t>(p)]);
    EXPECT_TRUE(in_level1(code));
    EXPECT_FALSE(in_level2(code));
    EXPECT_FALSE(is_new_column(code));
    EXPECT_EQ(level1_position(code), p);
  }
  for (const int col : {0, 3, 6, 29, 32}) {
    const int code = find_in_levels(level2, 4, level1, 3, col);
    EXPECT_TRUE(is_new_column(code)) << col;
    EXPECT_FALSE(in_level1(code) || in_level2(code)) << col;
  }
  EXPECT_EQ(find_sorted(level2, 0, 1), not_listed);
  EXPECT_TRUE(is_new_column(find_in_levels(level2, 0, level1, 0, 4)));
  EXPECT_FALSE(outgrows(10, 6, 16));
  EXPECT_TRUE(outgrows(10, 7, 16));
}

// One long row on the host as the kernels take it (bhsparse_kernels.cuh):
// merge rounds of capacity 256, 512, ... capacity_max, a block of
// merge_threads(capacity) threads taking a piece of that many products of a
// scaled row of B at a time; a piece that outgrows the list checkpoints the
// row (the entry of A and the piece's start), which the next round resumes;
// past capacity_max the global round, level 2 (the last dump) and a level-1
// list of capacity_max entries, flushed into level 2 when a piece would
// outgrow it. Returns the row and what it held.
struct long_row_run {
  std::vector<int> cols;
  std::vector<double> vals;
  std::int64_t area = 0;  // entries of the rounds' lists it took (long_row_area_bound's share)
  std::int64_t longest = 0;  // the most entries its lists held at once
  bool global = false;
};

long_row_run merge_long_row(const std::vector<std::vector<std::pair<int, double>>>& scaled_rows, int capacity_max,
                            std::int64_t bound) {
  long_row_run out;
  std::vector<int> keys;
  std::vector<double> vals;
  std::size_t entry = 0;  // the checkpoint
  std::size_t resume = 0;
  // Merges the sorted new columns into the sorted list by merge path.
  auto merge_into = [](std::vector<int>& k, std::vector<double>& v, const std::vector<int>& nk,
                       const std::vector<double>& nv) {
    std::vector<int> mk(k.size() + nk.size());
    std::vector<double> mv(mk.size());
    const auto na = static_cast<std::int64_t>(k.size());
    const auto nb = static_cast<std::int64_t>(nk.size());
    cuda::serial_merge(k, na, nk, nb, 0, 0, na + nb, [&](std::int64_t i, bool from_a, std::int64_t at) {
      mk[static_cast<std::size_t>(i)] = from_a ? k[static_cast<std::size_t>(at)] : nk[static_cast<std::size_t>(at)];
      mv[static_cast<std::size_t>(i)] = from_a ? v[static_cast<std::size_t>(at)] : nv[static_cast<std::size_t>(at)];
    });
    k = std::move(mk);
    v = std::move(mv);
  };
  // Walks the pieces from the checkpoint; take(piece) returns 1 (next piece), 0 (the same again) or -1 (stop).
  auto walk = [&](int threads, auto&& take) {
    for (; entry < scaled_rows.size(); ++entry, resume = 0) {
      const auto& row = scaled_rows[entry];
      while (resume < row.size()) {
        const std::size_t end = std::min(row.size(), resume + static_cast<std::size_t>(threads));
        const int next = take(row, resume, end);
        if (next < 0) return false;
        if (next > 0) resume = end;
      }
    }
    return true;
  };
  for (int capacity = first_merge_capacity; capacity <= capacity_max; capacity *= 2) {
    out.area += capacity;
    const bool done = walk(merge_threads(capacity), [&](const auto& row, std::size_t q0, std::size_t q1) {
      std::vector<int> nk;
      std::vector<double> nv;
      std::vector<std::pair<int, double>> hits;
      for (std::size_t q = q0; q < q1; ++q) {
        const auto code = static_cast<int>(find_sorted(keys, static_cast<std::int64_t>(keys.size()), row[q].first));
        if (is_new_column(code)) {
          nk.push_back(row[q].first);
          nv.push_back(row[q].second);
        } else {
          hits.emplace_back(code, row[q].second);
        }
      }
      if (outgrows(static_cast<std::int64_t>(keys.size()), static_cast<std::int64_t>(nk.size()), capacity)) return -1;
      for (const auto& [at, v] : hits) vals[static_cast<std::size_t>(at)] += v;
      merge_into(keys, vals, nk, nv);
      out.longest = std::max<std::int64_t>(out.longest, static_cast<std::int64_t>(keys.size()));
      return 1;
    });
    if (done) {
      out.cols = keys;
      out.vals = vals;
      return out;
    }
  }
  // The global round.
  out.global = true;
  out.area += 2 * bound;
  std::vector<int> l1k;
  std::vector<double> l1v;
  auto flush = [&]() {
    merge_into(keys, vals, l1k, l1v);
    l1k.clear();
    l1v.clear();
  };
  walk(merge_threads(capacity_max), [&](const auto& row, std::size_t q0, std::size_t q1) {
    std::vector<int> nk;
    std::vector<double> nv;
    std::vector<std::pair<int, double>> hits;
    for (std::size_t q = q0; q < q1; ++q) {
      const int code = find_in_levels(keys, static_cast<std::int64_t>(keys.size()), l1k,
                                      static_cast<int>(l1k.size()), row[q].first);
      if (is_new_column(code)) {
        nk.push_back(row[q].first);
        nv.push_back(row[q].second);
      } else {
        hits.emplace_back(code, row[q].second);
      }
    }
    if (outgrows(static_cast<std::int64_t>(l1k.size()), static_cast<std::int64_t>(nk.size()), capacity_max)) {
      flush();
      return 0;
    }
    for (const auto& [code, v] : hits) {
      if (in_level2(code)) vals[static_cast<std::size_t>(code)] += v;
      if (in_level1(code)) l1v[static_cast<std::size_t>(level1_position(code))] += v;
    }
    merge_into(l1k, l1v, nk, nv);
    out.longest = std::max<std::int64_t>(out.longest, static_cast<std::int64_t>(keys.size() + l1k.size()));
    return 1;
  });
  if (!l1k.empty()) flush();
  out.cols = keys;
  out.vals = vals;
  return out;
}

// Long rows of every size, through every round and the global round (a
// small capacity_max): the row equals a std::map's, its lists never hold
// more than its bound, and the rounds it takes stay within the estimate's
// share (long_row_area_bound).
TEST(BhsparseLongRows, RoundsAndTheGlobalRoundMergeEveryProductOnce) {
  std::mt19937 rng(23);
  const int capacity_max = 1024;
  int globals = 0;
  for (int trial = 0; trial < 120; ++trial) {
    const int b_cols = 40 + static_cast<int>(rng() % 6000);
    const int entries = 1 + static_cast<int>(rng() % 60);
    std::vector<std::vector<std::pair<int, double>>> scaled(static_cast<std::size_t>(entries));
    std::map<int, double> expect;
    std::int64_t products = 0;
    for (auto& row : scaled) {
      const int len = static_cast<int>(rng() % std::min(b_cols, 400));
      std::vector<int> cols(static_cast<std::size_t>(b_cols));
      for (int c = 0; c < b_cols; ++c) cols[static_cast<std::size_t>(c)] = c;
      std::shuffle(cols.begin(), cols.end(), rng);
      cols.resize(static_cast<std::size_t>(len));
      std::sort(cols.begin(), cols.end());
      for (const int c : cols) {
        const double v = static_cast<double>(1 + rng() % 64) / 8.0;  // exact sums in any order
        row.emplace_back(c, v);
        expect[c] += v;
      }
      products += len;
    }
    const std::int64_t bound = std::min<std::int64_t>(products, b_cols);
    const long_row_run run = merge_long_row(scaled, capacity_max, bound);
    globals += run.global ? 1 : 0;
    ASSERT_EQ(run.cols.size(), expect.size()) << "trial " << trial;
    std::size_t i = 0;
    for (const auto& [col, sum] : expect) {
      ASSERT_EQ(run.cols[i], col) << "trial " << trial;
      ASSERT_EQ(run.vals[i], sum) << "trial " << trial;
      ++i;
    }
    EXPECT_LE(run.longest, bound) << "trial " << trial;
    EXPECT_LE(run.area, long_row_area_bound(bound, capacity_max)) << "trial " << trial;
    EXPECT_EQ(run.global, static_cast<std::int64_t>(expect.size()) > capacity_max) << "trial " << trial;
  }
  EXPECT_GT(globals, 10);  // the global round ran, flushes among them
  EXPECT_LT(globals, 110);
}

// The segmented merge's slice: no larger than the long rows' products (none
// without long rows: segmerge's estimate is then bhsparse's), at least twice
// the largest long row's bound plus B's longest row, at most 2^30.
TEST(BhsparseLongRows, SegmentedMergeSlice) {
  const std::int64_t budget = std::int64_t{1} << 24;
  EXPECT_EQ(segmerge_slice(budget, 0, 500, 0), 0);
  EXPECT_EQ(segmerge_slice(budget, 20000, 100, 320000), 320000);
  EXPECT_EQ(segmerge_slice(budget, 20000, 100, std::int64_t{1} << 40), budget);
  EXPECT_EQ(segmerge_slice(1000, 20000, 100, std::int64_t{1} << 40), 2 * (20000 + 100));
  EXPECT_EQ(segmerge_slice(budget, std::int64_t{1} << 30, 0, std::int64_t{1} << 40), std::int64_t{1} << 30);
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
