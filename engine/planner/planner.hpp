// The planner: host-only decision rules of the GPU backend (no CUDA headers;
// the bin rules are also callable from device code, where the kernels apply
// them per row). Unit-tested on the CPU (tests/engine/planner_test.cpp); the
// rules and the measurements behind them are in docs/planner.md.
//
// Two levels of decision:
//  1. Per job (algorithm::automatic): RMerge or the hash method, from cheap
//     statistics of the product (one pass over the rows of A reading the row
//     lengths of B): choose_method().
//  2. Per row bin (inside the hash method): every row of A goes to a bin by its
//     products (symbolic pass) and by its exact nnz in C (numeric pass); each
//     bin has its own kernel configuration: nothing to do, a scaled copy of
//     one row of B, a shared-memory hash table of a power-of-two size handled
//     by one warp (small tables) or one block (large tables), or a dense
//     accumulator in global memory for the rows that overflow the largest
//     shared table: symbolic_bin(), numeric_bin(), table_config().
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "spgemm/multiply.hpp"

#if defined(__CUDACC__)
#define SPGEMM_HOST_DEVICE __host__ __device__
#else
#define SPGEMM_HOST_DEVICE
#endif

namespace spgemm::planner {

// Bins: 0 = no work (no products / no entries), 1 = copy (A's row holds one
// entry: C's row is a scaled row of B), 2 + t = shared hash table of
// smallest_table << t slots, dense_bin(limit) = global dense accumulator.
inline constexpr int bin_none = 0;
inline constexpr int bin_copy = 1;
inline constexpr int first_table_bin = 2;
inline constexpr int smallest_table = 32;
inline constexpr int max_bins = 24;       // table bins 0 .. 15 (tables up to 32 << 12), merge bins 16 .. 22
inline constexpr int warp_max_table = 512;  // tables up to this size: one warp per row

// Largest power-of-two tables that fit a block's shared memory: symbolic
// tables hold int keys; numeric tables keys and values, plus the staging
// of A's entries (24 bytes per thread) and the commit scratch (one value per
// thread) at 1024 threads.
struct limits {
  int symbolic_max_table = 32768;
  int numeric_max_table = 16384;
  // Hybrid plan: rows of A of 2 .. 128 entries with at most this output bound
  // go to the merge bins; 0 turns the merge bins off (algorithm::hash).
  std::int64_t merge_max_bound = 0;
};

// Default output bound of the merge bins (docs/planner.md): 0, the merge bins
// are off until a bound is measured that wins. Measured on the H100
// (hybrid-run3): bounds 256, 1024 and 4096 all made auto slower than plain
// hash on every graph (email-Enron 11.5 / 13.8 / 20.4 ms vs 10.6; wiki-Vote
// 2.5 / 4.4 / 6.7 vs 1.7): a sub-warp merges a row's output serially, and the
// graphs have too few rows to hide that latency. SPGEMM_HYBRID_MERGE_MAX sets it.
inline constexpr std::int64_t default_merge_max_bound = 0;
// The bound the hybrid tests and sweeps use.
inline constexpr std::int64_t tested_merge_max_bound = 1024;

SPGEMM_HOST_DEVICE inline int log2_ceil(std::int64_t x) {
  int l = 0;
  while ((std::int64_t{1} << l) < x) ++l;
  return l;
}

SPGEMM_HOST_DEVICE inline int table_bin_of(std::int64_t needed, int max_table) {
  const int l = log2_ceil(needed < smallest_table ? smallest_table : needed);
  const int max_l = log2_ceil(max_table);
  if (l > max_l) return first_table_bin + (max_l - 5) + 1;  // dense
  return first_table_bin + (l - 5);
}

SPGEMM_HOST_DEVICE inline int dense_bin(int max_table) { return first_table_bin + (log2_ceil(max_table) - 5) + 1; }

// Merge bins (hybrid plan, per row): a row of A with 2 .. 128 entries whose
// output bound min(products, cols of B) is at most limits::merge_max_bound is
// merged in one RMerge pass (sub-warp of W threads, R rows of B per thread,
// W * R >= its length; the same (W, R) rule as rmerge::make_plan for a whole
// matrix), reading A's row through a row-id list. Bins first_merge_bin + k,
// k = 0 .. 6: (W, R) = (2,1) (2,2) (2,4) (4,4) (8,4) (16,4) (32,4).
inline constexpr int first_merge_bin = 16;
inline constexpr int merge_bin_count = 7;
inline constexpr std::int64_t merge_max_length = 128;
static_assert(first_merge_bin + merge_bin_count <= max_bins, "merge bins fit the histogram");

SPGEMM_HOST_DEVICE inline bool is_merge_bin(int bin) {
  return bin >= first_merge_bin && bin < first_merge_bin + merge_bin_count;
}

// The merge bin of a row of `a_row_length` entries (2 .. 128).
SPGEMM_HOST_DEVICE inline int merge_bin_of_length(std::int64_t a_row_length) {
  if (a_row_length <= 2) return first_merge_bin;
  if (a_row_length <= 4) return first_merge_bin + 1;
  int k = 2;
  std::int64_t cap = 8;
  while (cap < a_row_length && k < merge_bin_count - 1) {
    cap *= 2;
    ++k;
  }
  return first_merge_bin + k;
}

// Sub-warp size W and rows per thread R of a merge bin.
SPGEMM_HOST_DEVICE inline int merge_subwarp(int bin) {
  const int k = bin - first_merge_bin;
  return k <= 2 ? 2 : (2 << (k - 2));
}
SPGEMM_HOST_DEVICE inline int merge_rows_per_thread(int bin) {
  const int k = bin - first_merge_bin;
  return k == 0 ? 1 : (k == 1 ? 2 : 4);
}

// Table size of a table bin.
SPGEMM_HOST_DEVICE inline int table_of_bin(int bin) { return smallest_table << (bin - first_table_bin); }

// Symbolic pass: the table must hold every distinct column, at most the
// products of the row (or the columns of B).
SPGEMM_HOST_DEVICE inline int symbolic_bin(std::int64_t a_row_length, std::int64_t products, std::int64_t b_cols,
                                           const limits& lim) {
  if (products == 0) return bin_none;
  if (a_row_length == 1) return bin_copy;
  const std::int64_t distinct = products < b_cols ? products : b_cols;
  if (a_row_length <= merge_max_length && distinct <= lim.merge_max_bound) return merge_bin_of_length(a_row_length);
  return table_bin_of(distinct, lim.symbolic_max_table);
}

// Numeric pass: the row's nnz is exact; the table keeps its load at most 0.8
// (measured on the H100: load 1/2 made the graphs 10-90% slower -- larger
// tables, fewer blocks per SM, longer sorts -- than the probes it saves).
SPGEMM_HOST_DEVICE inline int numeric_bin(std::int64_t a_row_length, std::int64_t nnz, const limits& lim) {
  if (nnz == 0) return bin_none;
  if (a_row_length == 1) return bin_copy;
  return table_bin_of(nnz + nnz / 4, lim.numeric_max_table);
}

// How one bin's kernel runs.
struct table_config {
  int table = 0;          // slots per row
  bool warp_per_row = false;
  int block_threads = 0;  // threads per block
  int rows_per_block = 0;
  std::size_t shared_bytes = 0;  // dynamic shared memory per block
};

// Threads of a block working on one row with a table of `table` slots.
inline int block_threads_for_table(int table) {
  int t = table / 8;
  if (t < 128) t = 128;
  if (t > 1024) t = 1024;
  return t;
}

// symbolic: value_bytes = 0 (keys only, no values, no commit scratch).
inline table_config config_for_table(int table, std::size_t value_bytes) {
  table_config c;
  c.table = table;
  c.warp_per_row = table <= warp_max_table;
  c.block_threads = c.warp_per_row ? 256 : block_threads_for_table(table);
  c.rows_per_block = c.warp_per_row ? c.block_threads / 32 : 1;
  const std::size_t group_threads = c.warp_per_row ? 32 : static_cast<std::size_t>(c.block_threads);
  const std::size_t per_slot = 4 + value_bytes;
  // staging of A's entries: b begin (8) + inclusive prefix (8) + value (value_bytes)
  const std::size_t stage = group_threads * (16 + value_bytes);
  const std::size_t scratch = group_threads * value_bytes;
  c.shared_bytes = static_cast<std::size_t>(c.rows_per_block) *
                   (static_cast<std::size_t>(table) * per_slot + stage + scratch);
  return c;
}

// The largest tables a block can hold with `max_shared` bytes of dynamic
// shared memory (cudaDevAttrMaxSharedMemoryPerBlockOptin).
inline limits limits_for(std::size_t max_shared, std::size_t value_bytes) {
  limits l;
  static_assert(first_table_bin + 10 + 1 < first_merge_bin, "table bins (up to 32768 slots) and dense stay below the merge bins");
  l.symbolic_max_table = 1024;
  while (l.symbolic_max_table < 32768 && config_for_table(2 * l.symbolic_max_table, 0).shared_bytes <= max_shared)
    l.symbolic_max_table *= 2;
  l.numeric_max_table = 1024;
  while (l.numeric_max_table < 32768 &&
         config_for_table(2 * l.numeric_max_table, value_bytes).shared_bytes <= max_shared)
    l.numeric_max_table *= 2;
  return l;
}

// Dense rows (global accumulator): blocks in flight, bounded by the
// workspace budget (bytes) and by dense_blocks_per_sm per SM. Small blocks,
// many rows at once: a block's warps commit one after another (ordered sums),
// so rows in flight, not threads per row, hide the global memory latency.
inline constexpr int dense_block_threads = 256;
inline constexpr int dense_blocks_per_sm = 8;
inline std::size_t dense_bytes_per_block(std::int64_t b_cols, std::size_t value_bytes) {
  const std::size_t words = static_cast<std::size_t>((b_cols + 31) / 32);
  return words * 4 + static_cast<std::size_t>(b_cols) * value_bytes;
}
inline std::int64_t dense_blocks(std::int64_t dense_rows, std::int64_t b_cols, std::size_t value_bytes,
                                 std::size_t budget_bytes, int sm_count) {
  if (dense_rows <= 0) return 0;
  std::int64_t d = dense_rows;
  const std::int64_t per_sm = dense_blocks_per_sm * static_cast<std::int64_t>(sm_count > 0 ? sm_count : 1);
  if (d > per_sm) d = per_sm;
  const std::size_t per_block = dense_bytes_per_block(b_cols, value_bytes);
  const std::int64_t by_budget = per_block > 0 ? static_cast<std::int64_t>(budget_bytes / per_block) : d;
  if (d > by_budget) d = by_budget;
  return d < 1 ? 1 : d;
}
// Budget of the numeric dense accumulators: bytes per entry of C.
inline constexpr std::size_t dense_budget_per_nnz = 4;

// Per-job statistics (one device pass over the rows of A).
struct job_stats {
  std::int64_t rows = 0;
  std::int64_t nnz_a = 0;
  std::int64_t b_rows = 0;
  std::int64_t b_cols = 0;
  std::int64_t products = 0;
  std::int64_t max_row_products = 0;
  std::int64_t max_row_length = 0;
  std::int64_t nnz_c_bound = 0;  // sum over rows of min(products, cols of B)
  std::int64_t symbolic_bins[max_bins] = {};  // rows per symbolic bin
  std::int64_t numeric_dense_candidates = 0;  // rows whose bound exceeds the largest numeric table

  double mean_row_products() const { return rows > 0 ? static_cast<double>(products) / static_cast<double>(rows) : 0; }
  double mean_row_length() const { return rows > 0 ? static_cast<double>(nnz_a) / static_cast<double>(rows) : 0; }
};

// Rows of the block tables and dense rows: the warps of a block either take
// disjoint column ranges of the row (no barrier between them; each warp reads
// every entry of A's row and the range starts of its row of B), or enumerate
// the row together and commit one after another. Ranges pay where rows of B
// are long: measured on the H100, they made soc-Epinions1 (78 products per
// entry of A) 22% faster, email-Enron (140) 15% and rmat:16:16 (416) 22%, and
// web-NotreDame (43) 37% slower; wiki-Vote and ca-CondMat (44, 22) unchanged.
inline constexpr double column_ranges_min_products_per_entry = 64;
inline bool use_column_ranges(const job_stats& s) {
  return s.nnz_a > 0 && static_cast<double>(s.products) >= column_ranges_min_products_per_entry * s.nnz_a;
}

// The method automatic runs, and why (for memory_estimate::method and docs).
struct choice {
  algorithm algo = algorithm::hash;
  bool hybrid = false;  // hash with the merge bins (short rows of A merged by RMerge sub-warps)
  std::string reason;
};

// Per-job rule (docs/planner.md): RMerge where every row of A is merged in
// one pass (longest row <= W * R = 128: no split levels, no intermediates),
// the hash method where RMerge would split rows (power-law graphs, R-MAT):
// measured on the H100, RMerge beat the first hash version on every matrix
// with short rows, and lost 2-5x to cuSPARSE where it splits.
inline constexpr std::int64_t rmerge_max_row_length = 128;

// ESC for the jobs RMerge would split, unless the product is very large or
// it is large with light rows. ESC's time is close to 0.3 ms + 0.15-0.2 ns
// per product (two sorts of each); the hash method's is set by its heaviest
// rows. Measured on the H100 (docs/planner.md, ms, ESC vs hash): wiki-Vote
// 0.86 vs 1.8, ca-CondMat 0.83 vs 1.4, rajat01 1.07 vs 1.8, mbeacxc 0.94 vs
// 1.4 (all under 2e7 products), soc-Epinions1 6.8 vs 8.4 (526 products per
// row), email-Enron 7.2 vs 10.0 (1,400), rmat:16:16 49 vs 59 (6,100;
// 4e8 products); the hash method won on web-NotreDame 6.4 vs 13.7 (6.4e7
// products, 198 per row), rmat:17:16 143 vs 164 and rmat:18:16 372 vs 444
// (1.1e9 and 2.9e9 products). ESC's workspace is up to 36 bytes per product
// of a slice (see esc.hpp), far above the hash method's on products that
// compress much.
inline constexpr std::int64_t esc_max_products = 500'000'000;
inline constexpr std::int64_t esc_small_products = 20'000'000;
inline constexpr double esc_min_mean_row_products = 400;

inline bool prefers_esc(const job_stats& s) {
  return s.products <= esc_max_products &&
         (s.products <= esc_small_products || s.mean_row_products() >= esc_min_mean_row_products);
}

inline choice choose_method(const job_stats& s) {
  choice c;
  if (s.rows == 0 || s.products == 0) {
    c.algo = algorithm::hash;
    c.reason = "empty product";
  } else if (s.max_row_length <= rmerge_max_row_length) {
    c.algo = algorithm::rmerge;
    c.reason = "rows of A fit one merge pass";
  } else if (prefers_esc(s)) {
    c.algo = algorithm::esc;
    c.reason = "long rows of A, moderate product: expand, sort, compress";
  } else {
    c.algo = algorithm::hash;
    c.hybrid = true;
    c.reason = "long rows of A: hybrid, short rows merged, the rest hashed";
  }
  return c;
}

}  // namespace spgemm::planner
