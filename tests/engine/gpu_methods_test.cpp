// Every GPU method of the backend's table (and auto) and the GPU transpose against the CPU reference
// (spgemm::cpu_multiply): identical structure, values within 1e-12 (double)
// or 1e-5 (float) of |A||B| per entry, bit-identical across runs, and the
// job within its memory estimate. Skips where no CUDA device is visible.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "spgemm/backend.hpp"
#include "spgemm/errors.hpp"
#include "spgemm/generate.hpp"
#include "spgemm/io.hpp"
#include "spgemm/reference.hpp"
#include "gpu_test_support.hpp"
#include "test_matrices.hpp"

namespace spgemm {
namespace {

using testing::expect_product;
using testing::gpu;
using testing::gpu_multiply;

// The GPU transpose equals the CPU transpose exactly (structure and values),
// within its (exact) memory estimate.
template <typename T>
void expect_transpose(const csr_matrix<T>& a) {
  backend& g = gpu();
  const auto sa = g.store(a);
  const memory_estimate estimate = g.estimate_transpose(*sa);
  std::size_t peak = 0;
  const auto st = g.transpose(*sa, {}, &peak);
  EXPECT_LE(peak, estimate.total());
  const auto t = std::get<csr_matrix<T>>(g.fetch(*st));
  const auto ref = cpu_transpose(a);
  ASSERT_EQ(t.rows, ref.rows);
  ASSERT_EQ(t.cols, ref.cols);
  ASSERT_EQ(t.row_offsets, ref.row_offsets);
  ASSERT_EQ(t.col_indices, ref.col_indices);
  ASSERT_EQ(t.values, ref.values);
}

// (algorithm name, double precision?)
using method_param = std::tuple<std::string, bool>;

class GpuMethod : public ::testing::TestWithParam<method_param> {
 protected:
  void SetUp() override {
    SPGEMM_REQUIRE_GPU();
  }
  algorithm algo() const { return parse_algorithm(std::get<0>(GetParam())); }
  // The method's options with `t` as their tuning.
  multiply_options tuned(const tuning& t) const {
    multiply_options options;
    options.algo = algo();
    options.tuning = t;
    return options;
  }
  bool f64() const { return std::get<1>(GetParam()); }

  // Runs `check` with float or double matrices as the parameter asks.
  template <typename F>
  void both(F&& check) {
    if (f64()) {
      check(double{});
    } else {
      check(float{});
    }
  }
};

TEST_P(GpuMethod, EmptyShapes) {
  both([&](auto tag) {
    using T = decltype(tag);
    expect_product(csr_matrix<T>{}, csr_matrix<T>{}, algo());
    expect_product(testing::empty_csr<T>(5, 0), testing::empty_csr<T>(0, 7), algo());
    expect_product(testing::empty_csr<T>(0, 5), testing::random_csr<T>(5, 3, 3, 4), algo());
    expect_product(testing::empty_csr<T>(4, 6), testing::random_csr<T>(6, 3, 3, 6), algo());
    expect_product(testing::random_csr<T>(4, 6, 3, 7), testing::empty_csr<T>(6, 3), algo());
  });
}

TEST_P(GpuMethod, OneByOne) {
  both([&](auto tag) {
    using T = decltype(tag);
    csr_matrix<T> a;
    a.rows = a.cols = 1;
    a.row_offsets = {0, 1};
    a.col_indices = {0};
    a.values = {T(0.75)};
    const csr_matrix<T> c = gpu_multiply(a, a, algo());
    ASSERT_EQ(c.values.size(), 1u);
    EXPECT_EQ(c.values[0], T(0.75) * T(0.75));
  });
}

TEST_P(GpuMethod, RectangularAndEmptyRows) {
  both([&](auto tag) {
    using T = decltype(tag);
    expect_product(testing::random_csr<T>(37, 50, 12, 11), testing::random_csr<T>(50, 11, 6, 12), algo());
    expect_product(testing::random_csr<T>(11, 50, 40, 13), testing::random_csr<T>(50, 37, 30, 14), algo());
    expect_product(testing::with_lengths<T>(200, 150, {0, 5, 0, 0, 17, 1}, 21), testing::with_lengths<T>(150, 180, {3, 0, 9, 0}, 22),
                   algo());
  });
}

// Rows in every bin: single entries (copy), warp tables, block tables, and
// dense rows beyond the largest shared table (a row of 4500 entries times
// rows of B of 40: 180000 products, up to 20000 distinct columns).
TEST_P(GpuMethod, EveryBin) {
  both([&](auto tag) {
    using T = decltype(tag);
    auto a = testing::random_csr_rows<T>(40, 5000, 31, [](std::int64_t r, std::mt19937_64& rng) {
      if (r == 3) return std::int64_t{4500};
      if (r % 7 == 1) return std::int64_t{1};
      return std::uniform_int_distribution<std::int64_t>(0, 400)(rng);
    });
    const auto b = testing::random_csr<T>(5000, 20000, 40, 32);
    expect_product(a, b, algo());
    const auto b_narrow = testing::random_csr<T>(5000, 300, 6, 33);
    expect_product(a, b_narrow, algo());
  });
}

TEST_P(GpuMethod, RowLengthBoundaries) {
  both([&](auto tag) {
    using T = decltype(tag);
    for (std::int64_t length : {1, 2, 31, 32, 33, 127, 128, 129, 511, 512, 513, 2047, 2049}) {
      SCOPED_TRACE(length);
      const auto a = testing::with_lengths<T>(24, 3000, {length, 1, 0, 3}, 100 + static_cast<std::uint64_t>(length));
      const auto b = testing::random_csr<T>(3000, 4000, 8, 200 + static_cast<std::uint64_t>(length));
      expect_product(a, b, algo());
    }
  });
}

// Small products run the table bins of a pass in one fused launch
// (planner::fuse_table_bins; block rows where a bin has at most
// tuning::fused_block_rows_per_sm rows per SM, else warp rows): the same
// rows with fusion off, and fused with warp rows only and with block rows.
TEST_P(GpuMethod, FusedAndSeparateTableBins) {
  const auto a = testing::random_csr_rows<double>(400, 3000, 71, [](std::int64_t r, std::mt19937_64& rng) {
    if (r % 9 == 1) return std::int64_t{1};
    if (r % 50 == 3) return std::int64_t{120};  // rows of up to 2000 distinct columns
    return std::uniform_int_distribution<std::int64_t>(0, 40)(rng);
  });
  const auto b = testing::random_csr<double>(3000, 5000, 16, 72);
  for (const std::int64_t fuse_max : {0, 100000000}) {
    for (const std::int64_t block_rows : {0, 100}) {
      SCOPED_TRACE("fuse max " + std::to_string(fuse_max) + ", block rows per SM " + std::to_string(block_rows));
      tuning t;
      t.fuse_max_products = fuse_max;
      t.fused_block_rows_per_sm = block_rows;
      expect_product(a, b, tuned(t));
    }
  }
}

// B with the columns `hubs` added to every row: each of them is hit once per
// entry of A's row (many claims of one column in a round of the segment rows).
template <typename T>
csr_matrix<T> with_hub_columns(const csr_matrix<T>& b, const std::vector<index_t>& hubs) {
  csr_matrix<T> out;
  out.rows = b.rows;
  out.cols = b.cols;
  for (std::int64_t r = 0; r < b.rows; ++r) {
    std::vector<std::pair<index_t, T>> row;
    for (offset_t e = b.row_offsets[r]; e < b.row_offsets[r + 1]; ++e) row.emplace_back(b.col_indices[e], b.values[e]);
    for (const index_t h : hubs) row.emplace_back(h, static_cast<T>(0.5 + 0.001 * static_cast<double>(r % 97)));
    std::sort(row.begin(), row.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    row.erase(std::unique(row.begin(), row.end(), [](const auto& x, const auto& y) { return x.first == y.first; }),
              row.end());
    for (const auto& [c, v] : row) {
      out.col_indices.push_back(c);
      out.values.push_back(v);
    }
    out.row_offsets.push_back(static_cast<offset_t>(out.col_indices.size()));
  }
  return out;
}

// Rows dense in the columns of B (the hash method's segment rows, 4096
// columns of B per segment): many segments and a partial last one, a row of
// A holding every column, hub columns at the segment boundaries, rows of
// every other kind beside them.
TEST_P(GpuMethod, SegmentRows) {
  both([&](auto tag) {
    using T = decltype(tag);
    const auto rmat = convert_values<T>(testing::with_random_values(generate("rmat:14:16"), 9));
    expect_product(rmat, rmat, algo());
    // Every round ordered by claims alone, then by passes per entry of A wherever possible.
    for (const std::int64_t entry_passes : {0, 1000000}) {
      SCOPED_TRACE(entry_passes);
      tuning t;
      t.segment_entry_passes = entry_passes;
      expect_product(rmat, rmat, tuned(t));
    }
    // Long rows of B, hubs at the segment boundaries: rounds of few entries of A.
    const auto a_long = testing::random_csr<T>(60, 2000, 300, 44);
    const auto b_long = with_hub_columns(testing::random_csr<T>(2000, 30000, 3000, 45), {0, 4095, 4096, 8191, 8192, 29999});
    expect_product(a_long, b_long, algo());
    auto a = testing::random_csr_rows<T>(60, 20000, 41, [](std::int64_t r, std::mt19937_64& rng) {
      if (r == 0) return std::int64_t{20000};  // every column
      if (r % 5 == 1) return std::int64_t{1};
      return std::uniform_int_distribution<std::int64_t>(0, 900)(rng);
    });
    const auto b = testing::random_csr<T>(20000, 20000, 16, 42);
    expect_product(a, b, algo());
    const auto hubs = with_hub_columns(b, {0, 31, 32, 4095, 4096, 8191, 8192, 16383, 16384, 19999});
    expect_product(a, hubs, algo());
    const auto wide = testing::random_csr<T>(20000, 100000, 40, 43);  // 25 segments
    expect_product(a, wide, algo());
  });
}

// A few heavy rows among light ones over few columns: the segments narrow
// (planner::segment_width_for) so that the heavy rows' items are no tail;
// every width from the widest to 64 columns (tuning::segment_min_width), hub
// columns at the narrow segments' boundaries, bit-identical on a second run.
TEST_P(GpuMethod, NarrowSegmentsForAFewHeavyRows) {
  both([&](auto tag) {
    using T = decltype(tag);
    auto a = testing::random_csr_rows<T>(400, 3000, 46, [](std::int64_t r, std::mt19937_64& rng) {
      if (r < 4) return std::int64_t{3000};  // every column
      return std::uniform_int_distribution<std::int64_t>(10, 30)(rng);
    });
    const auto b = with_hub_columns(testing::random_csr<T>(3000, 3000, 40, 47),
                                    {0, 63, 64, 511, 512, 1023, 1024, 2047, 2048, 2999});
    for (const std::int64_t min_width : {std::int64_t{64}, std::int64_t{512}, std::int64_t{4096}}) {
      SCOPED_TRACE(min_width);
      tuning t;
      t.segment_min_width = min_width;
      expect_product(a, b, tuned(t));
      const auto first = gpu_multiply(a, b, tuned(t));
      const auto again = gpu_multiply(a, b, tuned(t));
      ASSERT_EQ(first.col_indices, again.col_indices);
      EXPECT_EQ(std::memcmp(first.values.data(), again.values.data(), first.values.size() * sizeof(T)), 0);
    }
  });
}

// Segments of every width, the shared accumulator sized to each (a narrow
// B of 200 columns, and rows of 3,000 columns over up to 47 segments): the
// same product bit for bit, each entry of C the sum in A's order whatever
// its segment.
TEST_P(GpuMethod, SegmentsOfEveryWidthAgree) {
  both([&](auto tag) {
    using T = decltype(tag);
    for (const std::int64_t cols : {std::int64_t{200}, std::int64_t{3000}}) {
      SCOPED_TRACE(cols);
      const auto a = testing::random_csr<T>(600, cols, 60, 48);
      const auto b = with_hub_columns(testing::random_csr<T>(cols, cols, 40, 49), {0, 63, 64, 127, 128, cols - 1});
      std::optional<csr_matrix<T>> first;
      for (const std::int64_t max_width : {std::int64_t{64}, std::int64_t{128}, std::int64_t{1024}, std::int64_t{0}}) {
        SCOPED_TRACE(max_width);
        tuning t;
        t.segment_max_width = max_width;
        expect_product(a, b, tuned(t));
        const auto c = gpu_multiply(a, b, tuned(t));
        if (!first) {
          first = c;
          continue;
        }
        ASSERT_EQ(first->col_indices, c.col_indices);
        EXPECT_EQ(std::memcmp(first->values.data(), c.values.data(), c.values.size() * sizeof(T)), 0);
      }
    }
  });
}

// Rows of C of 410 to 819 entries (block tables) from rows of B long enough
// for the warps to split each row's products by column: rows in a local
// order (a band: a row's products span 601 of B's 6000 columns, cut evenly
// between the warps) and rows spanning all of B's columns (a hub column at
// each end: the job's column ranges); bit-identical on a second run.
TEST_P(GpuMethod, BlockTableRowsLocalAndSpread) {
  both([&](auto tag) {
    using T = decltype(tag);
    const auto band = convert_values<T>(testing::with_random_values(generate("band:6000:150:80"), 12));
    const auto spread = with_hub_columns(band, {0, 5999});
    expect_product(band, band, algo());
    expect_product(band, spread, algo());
    expect_product(spread, band, algo());
    const auto first = gpu_multiply(band, band, algo());
    const auto again = gpu_multiply(band, band, algo());
    ASSERT_EQ(first.col_indices, again.col_indices);
    EXPECT_EQ(std::memcmp(first.values.data(), again.values.data(), first.values.size() * sizeof(T)), 0);
  });
}

// Rows of C whose columns span more than their table's memory holds a bit
// for, written out by sorting the table: every table size from 64 to 16,384
// slots, the keys carrying their slot where the span leaves the bits for it
// (B of 100,000 and 1,500,000 columns) and (key, value) pairs where it does
// not (5,000,000 columns); bins fused and launched on their own.
TEST_P(GpuMethod, SortedRowsAcrossSpans) {
  both([&](auto tag) {
    using T = decltype(tag);
    const auto a = testing::with_lengths<T>(48, 3000, {8, 25, 60, 120, 250, 500, 1000, 2000, 3, 0}, 84);
    for (const std::int64_t cols : {100000, 1500000, 5000000}) {
      SCOPED_TRACE(cols);
      const auto b = testing::random_csr<T>(3000, cols, 8, 85 + static_cast<std::uint64_t>(cols));
      expect_product(a, b, algo());
      tuning unfused;
      unfused.fuse_max_products = 0;
      expect_product(a, b, tuned(unfused));
    }
  });
}

// A * A^T of a wide matrix with few rows (LP constraint matrices: nw04 is 36
// x 87,482 with 17,700 entries per row): few rows of many products into a
// few dozen columns (the dense method splits such rows across a cluster),
// rows of every other kind beside them; bit-identical on a second run.
TEST_P(GpuMethod, FewLongRowsIntoFewColumns) {
  both([&](auto tag) {
    using T = decltype(tag);
    const auto a = testing::with_lengths<T>(36, 60000, {12000, 3000, 0, 1, 20000, 700}, 81);
    const auto at = cpu_transpose(a);
    expect_product(a, at, algo());
    const auto first = gpu_multiply(a, at, algo());
    const auto again = gpu_multiply(a, at, algo());
    ASSERT_EQ(first.col_indices, again.col_indices);
    EXPECT_EQ(std::memcmp(first.values.data(), again.values.data(), first.values.size() * sizeof(T)), 0);
    const auto narrow = testing::with_lengths<T>(5, 200000, {50000}, 82);
    expect_product(narrow, cpu_transpose(narrow), algo());
    // Rows of C dense in a few hundred columns (mbeacxc: 496 x 496, 100 per row).
    const auto square = testing::random_csr<T>(500, 500, 200, 83);
    expect_product(square, square, algo());
  });
}

// A limit below what the product takes fails it with does_not_fit, naming
// the method and both numbers, and frees what the job held.
TEST_P(GpuMethod, RefusesToPassItsLimit) {
  backend& g = gpu();
  const auto sa = g.store(testing::random_csr<double>(300, 300, 20, 91));
  const multiply_options options = tuned(tuning{});
  const std::size_t limit = g.estimate_multiply(*sa, *sa, options).total() / 8;
  const std::size_t before = g.memory().in_use_bytes;
  try {
    (void)g.multiply(*sa, *sa, options, limit);
    FAIL() << "the product ran beyond its limit";
  } catch (const error& e) {
    EXPECT_EQ(e.kind(), error_kind::does_not_fit);
    const std::string message = e.what();
    EXPECT_NE(message.find(std::get<0>(GetParam())), std::string::npos) << message;
    EXPECT_NE(message.find(std::to_string(limit)), std::string::npos) << message;
  }
  EXPECT_EQ(g.memory().in_use_bytes, before);
}

TEST_P(GpuMethod, Generators) {
  both([&](auto tag) {
    using T = decltype(tag);
    for (const char* spec : {"poisson3d7:20", "poisson3d27:12", "poisson2d5:40", "elasticity3d:6", "rmat:10:8",
                             "rmat:12:16"}) {
      SCOPED_TRACE(spec);
      const auto a = convert_values<T>(testing::with_random_values(generate(spec), 7));
      expect_product(a, a, algo());
    }
  });
}

TEST_P(GpuMethod, Deterministic) {
  both([&](auto tag) {
    using T = decltype(tag);
    for (const char* spec : {"rmat:12:16", "poisson3d27:8"}) {
      const auto a = convert_values<T>(testing::with_random_values(generate(spec), 3));
      const auto first = gpu_multiply(a, a, algo());
      for (int run = 0; run < 3; ++run) {
        const auto again = gpu_multiply(a, a, algo());
        ASSERT_EQ(first.row_offsets, again.row_offsets);
        ASSERT_EQ(first.col_indices, again.col_indices);
        ASSERT_EQ(first.values.size(), again.values.size());
        EXPECT_EQ(std::memcmp(first.values.data(), again.values.data(), first.values.size() * sizeof(T)), 0);
      }
    }
  });
}

TEST_P(GpuMethod, SharedMatrices) {
  if (!f64()) GTEST_SKIP() << "double precision only";
  const auto files = testing::shared_matrix_files();
  if (files.empty()) GTEST_SKIP() << "no shared matrices found (set SPGEMM_MATRICES): skipped";
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    const auto a = testing::with_random_values(read_matrix_market(file), 42);
    const auto b = a.rows == a.cols ? a : cpu_transpose(a);
    expect_product(a, b, algo());
  }
}

// A rows x lengths.size() matrix whose column c has lengths[c] entries in
// distinct random rows (at most `rows`): rows of A^T of chosen lengths.
template <typename T>
csr_matrix<T> with_column_lengths(std::int64_t rows, const std::vector<std::int64_t>& lengths, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<std::pair<index_t, T>>> by_row(static_cast<std::size_t>(rows));
  std::vector<index_t> all(static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r) all[static_cast<std::size_t>(r)] = static_cast<index_t>(r);
  for (std::size_t c = 0; c < lengths.size(); ++c) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::int64_t>(lengths[c], rows));
    for (std::size_t i = 0; i < n; ++i) {  // partial Fisher-Yates: n distinct rows
      std::swap(all[i], all[i + rng() % (all.size() - i)]);
      const double v = 0.1 + static_cast<double>(rng() % 1000) / 1000.0;
      by_row[static_cast<std::size_t>(all[i])].emplace_back(static_cast<index_t>(c), static_cast<T>(rng() & 1 ? v : -v));
    }
  }
  csr_matrix<T> m;
  m.rows = rows;
  m.cols = static_cast<std::int64_t>(lengths.size());
  m.row_offsets.assign(1, 0);
  for (auto& row : by_row) {
    std::sort(row.begin(), row.end());
    for (const auto& [c, v] : row) {
      m.col_indices.push_back(c);
      m.values.push_back(v);
    }
    m.row_offsets.push_back(static_cast<offset_t>(m.col_indices.size()));
  }
  return m;
}

TEST(GpuTranspose, EdgeCasesAndGenerators) {
  SPGEMM_REQUIRE_GPU();
  expect_transpose(testing::random_csr<float>(37, 50, 12, 11));
  expect_transpose(testing::with_lengths<double>(200, 150, {0, 5, 0, 0, 17, 1}, 21));
  expect_transpose(testing::empty_csr<double>(0, 4));
  expect_transpose(testing::empty_csr<float>(6, 0));
  expect_transpose(testing::empty_csr<double>(5, 7));
  expect_transpose(testing::random_csr<double>(300, 1000, 30, 64));
  expect_transpose(testing::random_csr<double>(1, 1, 1, 3));
  // One dense row (a column vector of A^T) and one dense column (a dense row of A^T, 20000 entries).
  expect_transpose(testing::with_lengths<double>(1, 30000, {30000}, 4));
  expect_transpose(with_column_lengths<double>(20000, {20000}, 5));
  // Empty columns between full ones, more columns than rows and the reverse.
  expect_transpose(testing::with_lengths<float>(3000, 9000, {0, 2, 0, 40}, 6));
  expect_transpose(testing::with_lengths<double>(9000, 40, {0, 3, 40}, 7));
  for (const char* spec : {"poisson3d7:20", "poisson3d27:12", "poisson2d5:64", "elasticity3d:6", "rmat:12:16",
                           "rmat:14:8", "rmat:16:16"}) {
    SCOPED_TRACE(spec);
    expect_transpose(testing::with_random_values(generate(spec), 5));
    expect_transpose(convert_values<float>(testing::with_random_values(generate(spec), 6)));
  }
}

// Rows of A^T at and around every boundary of the method: the lists of rows
// of 2..8, 9..32, 33..128 entries, chunks of 512 (a row of one chunk sorted
// in place, longer ones merged), and rows of more than 8192 entries (the keys
// a merge block stages at once).
TEST(GpuTranspose, RowsAcrossEveryLengthBoundary) {
  SPGEMM_REQUIRE_GPU();
  const std::vector<std::int64_t> lengths = {0,   1,   2,   3,    7,    8,    9,    31,   32,   33,   127,
                                             128, 129, 255, 256,  257,  511,  512,  513,  1023, 1024, 1025,
                                             4096, 8191, 8192, 8193, 12000, 24999, 25000, 0, 5, 600};
  for (const std::uint64_t seed : {31u, 32u}) {
    SCOPED_TRACE(seed);
    expect_transpose(with_column_lengths<double>(25000, lengths, seed));
    expect_transpose(with_column_lengths<float>(25000, lengths, seed + 10));
  }
  // Every row of A^T of one length, many rows: full warp tasks of each list.
  for (const std::int64_t length : {2, 8, 9, 32, 33, 128, 129, 512, 513, 2000}) {
    SCOPED_TRACE(length);
    expect_transpose(with_column_lengths<double>(4000, std::vector<std::int64_t>(300, length), 40 + length));
  }
}

// Millions of entries: many scan tiles and scatter blocks, rows of A^T in
// every list, and dense rows of 98 chunks (merged in 7 staged batches).
TEST(GpuTranspose, LargeInputs) {
  SPGEMM_REQUIRE_GPU();
  expect_transpose(testing::with_random_values(generate("poisson3d27:45"), 12));
  expect_transpose(convert_values<float>(testing::with_random_values(generate("poisson3d7:70"), 13)));
  // Two dense columns (98 chunks each), 6-chunk rows, one-chunk rows and every short list.
  std::vector<std::int64_t> lengths;
  for (const auto& [count, length] : std::vector<std::pair<int, std::int64_t>>{
           {2, 50000}, {300, 3000}, {2000, 300}, {20000, 40}, {50000, 12}, {50000, 5}, {1000, 1}}) {
    lengths.insert(lengths.end(), static_cast<std::size_t>(count), length);
  }
  expect_transpose(with_column_lengths<double>(50000, lengths, 14));
}

// More than 2^23 rows of A: the sort's 64-bit keys, in every list and in
// chunks of one row and of long rows.
TEST(GpuTranspose, WideSortKeys) {
  SPGEMM_REQUIRE_GPU();
  const std::vector<std::int64_t> lengths = {20000, 700, 300, 100, 20, 5, 1, 0};
  expect_transpose(with_column_lengths<double>((std::int64_t{1} << 23) + 5000, lengths, 15));
}

// The pool hands back memory full of another matrix (nothing may rely on
// zeroed output arrays), and repeated transposes are bit-identical.
TEST(GpuTranspose, DirtyMemoryAndRepeatable) {
  SPGEMM_REQUIRE_GPU();
  backend& g = gpu();
  for (const char* spec : {"rmat:14:16", "poisson3d27:10"}) {
    SCOPED_TRACE(spec);
    const auto a = testing::with_random_values(generate(spec), 8);
    const auto sa = g.store(a);
    const auto ref = cpu_transpose(a);
    for (int run = 0; run < 3; ++run) {
      {
        auto junk = testing::with_lengths<double>(4000, 4000, {1200}, 90 + run);  // 58 MB
        for (auto& v : junk.values) v = -1.0e300;
        (void)g.store(junk);  // stored, then freed
      }
      const auto t = std::get<csr_matrix<double>>(g.fetch(*g.transpose(*sa)));
      ASSERT_EQ(t.row_offsets, ref.row_offsets);
      ASSERT_EQ(t.col_indices, ref.col_indices);
      ASSERT_EQ(t.values.size(), ref.values.size());
      EXPECT_EQ(std::memcmp(t.values.data(), ref.values.data(), t.values.size() * sizeof(double)), 0);
    }
  }
}

TEST(GpuTranspose, SharedMatrices) {
  SPGEMM_REQUIRE_GPU();
  const auto files = testing::shared_matrix_files();
  if (files.empty()) GTEST_SKIP() << "no shared matrices found (set SPGEMM_MATRICES): skipped";
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    const auto a = testing::with_random_values(read_matrix_market(file), 42);
    expect_transpose(a);
    expect_transpose(convert_values<float>(a));
  }
}

// ESC within a small slice budget (tuning::esc_slice_products): many slices, and rows of more products than the budget, which ESC cuts into
// column bands and chunks with carried partial sums. ESC adds every entry's
// products in A's order, so its values equal the CPU reference bit for bit.
// The workspace estimate does not grow with the products.
TEST(GpuEsc, SliceBudgetLongRowsAndExactValues) {
  SPGEMM_REQUIRE_GPU();
  multiply_options options;
  options.algo = algorithm::esc;
  auto exact = [&](const auto& a, const auto& b) {
    const auto c = gpu_multiply(a, b, options);
    const auto ref = cpu_multiply(a, b);
    ASSERT_EQ(c.row_offsets, ref.row_offsets);
    ASSERT_EQ(c.col_indices, ref.col_indices);
    EXPECT_EQ(c.values, ref.values);
  };
  // Rows of 0 .. 40 entries and long rows (2500 and 900 entries) times rows
  // of B of up to 20 entries: about 25000 and 9000 products per long row;
  // budget 64: bands of 32 columns, chunks of 32 products; 50000: slices of
  // several rows, no long row.
  const auto a = testing::with_lengths<double>(40, 3000, {3, 0, 40, 1, 2500, 7, 0, 12, 900, 5}, 71);
  const auto b = testing::random_csr<double>(3000, 600, 20, 72);
  for (const std::int64_t budget : {64, 1000, 50000}) {
    SCOPED_TRACE(budget);
    options.tuning.esc_slice_products = budget;
    exact(a, b);
    exact(convert_values<float>(a), convert_values<float>(b));
    exact(testing::empty_csr<double>(7, 3000), b);
  }
  options.tuning.esc_slice_products = 1000;
  for (const char* spec : {"poisson3d7:20", "rmat:12:16"}) {
    SCOPED_TRACE(spec);
    const auto m = testing::with_random_values(generate(spec), 9);
    exact(m, m);
  }
  // Ten times the products, the same workspace (the slice part is fixed).
  backend& g = gpu();
  const auto sa = g.store(testing::with_lengths<double>(150, 3000, {3, 0, 40, 2500}, 73));
  const auto narrow = g.store(testing::with_lengths<double>(3000, 5000, {2}, 74));
  const auto wide = g.store(testing::with_lengths<double>(3000, 5000, {20}, 75));
  const memory_estimate few = g.estimate_multiply(*sa, *narrow, options);
  const memory_estimate many = g.estimate_multiply(*sa, *wide, options);
  EXPECT_EQ(many.products, 10 * few.products);
  EXPECT_EQ(many.workspace_bytes, few.workspace_bytes) << many.method;
}

// Segmerge within small slice budgets (tuning::segmerge_slice_products; at
// least twice a long row's bound plus B's longest row): long rows of many
// products into few columns run alone, in chunks of their entries, each
// chunk merged behind the row's result so far; slices of several rows and
// one slice of all. bhsparse beside it: merge rounds from 256 entries up to
// the global round (rows of up to 20000 distinct columns).
TEST(GpuSegmerge, ChunkedLongRowsAndSlices) {
  SPGEMM_REQUIRE_GPU();
  multiply_options options;
  options.algo = algorithm::segmerge;
  const auto a = testing::with_lengths<double>(40, 3000, {2500, 3, 700, 0, 1200, 40, 90}, 91);
  const auto b = testing::random_csr<double>(3000, 300, 12, 92);
  const auto wide = testing::random_csr<double>(3000, 30000, 12, 93);
  for (const std::int64_t budget : {std::int64_t{1}, std::int64_t{5000}, std::int64_t{1} << 24}) {
    SCOPED_TRACE(budget);
    options.tuning.segmerge_slice_products = budget;
    testing::expect_product(a, b, options);
    testing::expect_product(a, wide, options);
    testing::expect_product(convert_values<float>(a), convert_values<float>(b), options);
  }
  options = {};
  options.algo = algorithm::bhsparse;
  testing::expect_product(a, wide, options);
}

std::string param_name(const ::testing::TestParamInfo<method_param>& info) {
  return std::get<0>(info.param) + (std::get<1>(info.param) ? "_f64" : "_f32");
}

// Every algorithm of the GPU backend's table of methods, and auto.
std::vector<std::string> gpu_algorithm_names() {
  std::vector<std::string> names;
  for (const algorithm algo : cuda_algorithms()) names.emplace_back(to_string(algo));
  return names;
}

INSTANTIATE_TEST_SUITE_P(Methods, GpuMethod,
                         ::testing::Combine(::testing::ValuesIn(gpu_algorithm_names()), ::testing::Bool()), param_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GpuMethod);

}  // namespace
}  // namespace spgemm
