// The planner, per row bin (inside the hash method): every row of A goes to
// a bin by its products (symbolic pass) and by its exact nnz in C (numeric
// pass); each bin has its own kernel configuration: nothing to do, a scaled
// copy of one row of B, a shared-memory hash table of a power-of-two size
// handled by one warp (small tables) or one block (large tables), dense
// shared-memory accumulators per segment of B's columns (rows dense in them:
// segment rows), or a dense accumulator in global memory for the rows that
// overflow the largest shared table: symbolic_bin(), numeric_bin(),
// config_for_table(). No CUDA headers: the rules are unit-tested on the CPU
// (tests/engine/planner_test.cpp), and the kernels apply the very same
// functions per row (SPGEMM_HOST_DEVICE). The measurements behind them are in
// docs/planner.md.
#pragma once

#include <cstddef>
#include <cstdint>

#include "planner/host_device.hpp"
#include "spgemm/tuning.hpp"

namespace spgemm::planner {

// Bins: 0 = no work (no products / no entries), 1 = copy (A's row holds one
// entry: C's row is a scaled row of B), 2 + t = shared hash table of
// smallest_table << t slots, dense_bin(limit) = global dense accumulator,
// then the segment bins (below).
inline constexpr int bin_none = 0;
inline constexpr int bin_copy = 1;
inline constexpr int first_table_bin = 2;
inline constexpr int smallest_table = 32;
inline constexpr int max_table_bins = 12;  // tables of 32 << 0 .. 32 << 10 slots, then dense
inline constexpr int warp_max_table = 512;  // tables up to this size: one warp per row

// Largest power-of-two tables that fit a block's shared memory: symbolic
// tables hold int keys; numeric tables keys and values, plus the staging
// of A's entries (24 bytes per thread) and the commit scratch (one value per
// thread) at 1024 threads.
struct limits {
  int symbolic_max_table = 32768;
  int numeric_max_table = 16384;
  // Whether a block holds a segment accumulator (segment_shared_bytes).
  bool segment_rows = false;
  // Segment rows: the least output bound (is_segment_row; tuning::segment_min_bound).
  std::int64_t segment_min_bound = tuning{}.segment_min_bound;
  // Segment rows: the narrowest segment (segment_width_for; tuning::segment_min_width).
  std::int64_t segment_min_width = tuning{}.segment_min_width;
  // Segment rows: the widest segment whose numeric blocks fill an SM's threads
  // (full_occupancy_segment_width; limits_for sets it from the device's shared memory).
  std::int64_t segment_full_width = 4096;
  // Segment rows: the widest segment a job may take (tuning::segment_max_width;
  // 0: segment_width_for's rules).
  std::int64_t segment_max_width = tuning{}.segment_max_width;
};

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

// Segment rows: rows of C dense enough in the columns of B (bound >= 1/64 of
// them, and at least limits::segment_min_bound) are computed per (row, segment of
// segment_width columns of B) by one block with a dense accumulator in
// shared memory: a bit per column, a value per column, and an owner per
// column that orders the additions (segment_kernels.cuh). No hash probes, no
// sort: a segment's entries come out in column order from its bitmap. A row
// keeps this bin in the numeric pass (its symbolic pass counted per segment).
// Ordering the additions: a round of a block's products (256) first claims
// its columns (the earliest product of each column wins and adds); the rest
// follow in passes by entry of A where the round spans at most
// tuning::segment_entry_passes entries, else in further claims.
// The segment rows take segment_bin_count bins by their products, the
// heaviest first (segment_bin_of): their kernels take rows in bin order, so
// the longest rows start first instead of finishing last.
inline constexpr int first_segment_bin = first_table_bin + max_table_bins;
inline constexpr int segment_bin_count = 8;
inline constexpr int max_bins = first_segment_bin + segment_bin_count;
inline constexpr int segment_class_log2 = 10;  // the lightest class: products below 2^11
inline constexpr int segment_width = 4096;
inline constexpr std::int64_t min_segment_width = 64;  // two bitmap words
inline constexpr int segment_block_threads = 256;
inline constexpr std::int64_t max_segments = 256;  // B of up to 2^20 columns
inline constexpr std::int64_t segment_density_inverse = 64;

SPGEMM_HOST_DEVICE inline bool is_segment_bin(int bin) {
  return bin >= first_segment_bin && bin < first_segment_bin + segment_bin_count;
}

// The bin of a segment row of `products` products: products of 2^(10 + c)
// or more (c = 0 .. 7) go to first_segment_bin + 7 - c.
SPGEMM_HOST_DEVICE inline int segment_bin_of(std::int64_t products) {
  int c = 0;
  while (c < segment_bin_count - 1 && (std::int64_t{1} << (segment_class_log2 + c + 1)) <= products) ++c;
  return first_segment_bin + segment_bin_count - 1 - c;
}

SPGEMM_HOST_DEVICE inline std::int64_t segments_of(std::int64_t b_cols, std::int64_t width = segment_width) {
  return (b_cols + width - 1) / width;
}

// A narrow B (fewer than 4 lim.segment_min_bound columns) takes rows bound
// to a quarter of its columns: its bitmap is short.
SPGEMM_HOST_DEVICE inline bool is_segment_row(std::int64_t bound, std::int64_t b_cols, const limits& lim) {
  const std::int64_t min_bound = b_cols / 4 < lim.segment_min_bound ? b_cols / 4 : lim.segment_min_bound;
  return lim.segment_rows && bound >= min_bound && bound > 0 && bound * segment_density_inverse >= b_cols;
}

// The table of segment starts (segments + 1 ints per row of B) stays small
// beside the operands: at most segment_table_bytes_per_entry bytes per entry
// of A and B (else no row is a segment row).
inline constexpr std::int64_t segment_table_bytes_per_entry = 16;
inline bool segment_table_fits(std::int64_t b_rows, std::int64_t b_cols, std::int64_t nnz_a, std::int64_t nnz_b,
                               std::int64_t width = segment_width) {
  const std::int64_t segments = segments_of(b_cols, width);
  return segments <= max_segments &&
         b_rows * (segments + 1) * 4 <= segment_table_bytes_per_entry * (nnz_a + nnz_b);
}

// Dynamic shared memory of the numeric segment kernel: values, claim tags
// and bits of the job's `width` columns, plus the staging of A's entries.
inline std::size_t segment_shared_bytes(std::size_t value_bytes, std::int64_t width = segment_width) {
  return static_cast<std::size_t>(width) * (value_bytes + 4) + static_cast<std::size_t>(width / 8) +
         static_cast<std::size_t>(segment_block_threads) * (16 + value_bytes);
}

// Numeric segment blocks an SM runs at once where shared memory allows: its
// threads' limit (2048 on sm_80 and sm_90) over segment_block_threads.
inline constexpr int segment_full_blocks_per_sm = 8;

// The widest segment whose numeric blocks fit segment_full_blocks_per_sm to
// an SM (max_shared: a block's opt-in shared memory; an SM holds 1 KiB more,
// and reserves 1 KiB per block): 1024 columns in f64 on an H100 or H200,
// 2048 in f32. A block of 4096 f64 columns (55 KiB) leaves an SM four blocks,
// half its threads, and a block waits at a barrier per pass of ordered_add.
inline std::int64_t full_occupancy_segment_width(std::size_t max_shared, std::size_t value_bytes) {
  constexpr std::size_t reserved = 1024;
  std::int64_t width = segment_width;
  while (width > min_segment_width &&
         segment_full_blocks_per_sm * (segment_shared_bytes(value_bytes, width) + reserved) > max_shared + reserved) {
    width /= 2;
  }
  return width;
}

// Dynamic shared memory of the symbolic segment kernel: a bit per column of
// B (all segments; 128 KiB at max_segments) and the staging of A's entries.
inline std::size_t segment_symbolic_shared_bytes(std::int64_t b_cols) {
  return static_cast<std::size_t>(segments_of(b_cols)) * (segment_width / 8) +
         static_cast<std::size_t>(segment_block_threads) * 16;
}

// Table size of a table bin.
SPGEMM_HOST_DEVICE inline int table_of_bin(int bin) { return smallest_table << (bin - first_table_bin); }

// Rows of A longer than this take a block table at least: a warp table's warp
// stages the row 32 entries at a time, so a few long rows with few products
// would hold a warp-table kernel while its SMs idle.
inline constexpr std::int64_t warp_max_row_length = 128;
SPGEMM_HOST_DEVICE inline std::int64_t table_need(std::int64_t a_row_length, std::int64_t slots) {
  const std::int64_t block_table = 2 * warp_max_table;
  return a_row_length > warp_max_row_length && slots < block_table ? block_table : slots;
}

// Symbolic pass: the table must hold every distinct column, at most the
// products of the row (or the columns of B), and keeps its load at most 0.8
// below the largest table: where a row's bound is close to its distinct
// columns (little compression) a table of the bound's power of two fills up
// and linear probing takes hundreds of steps.
SPGEMM_HOST_DEVICE inline int symbolic_bin(std::int64_t a_row_length, std::int64_t products, std::int64_t b_cols,
                                           const limits& lim) {
  if (products == 0) return bin_none;
  if (a_row_length == 1) return bin_copy;
  const std::int64_t distinct = products < b_cols ? products : b_cols;
  if (is_segment_row(distinct, b_cols, lim)) return segment_bin_of(products);
  const std::int64_t max_table = lim.symbolic_max_table;
  const std::int64_t roomy = distinct + distinct / 4;
  const std::int64_t slots = distinct > max_table ? distinct : (roomy < max_table ? roomy : max_table);
  return table_bin_of(table_need(a_row_length, slots), lim.symbolic_max_table);
}

// Numeric pass: the row's nnz is exact; the table keeps its load at most 0.8
// (a lower load costs more -- larger tables, fewer blocks per SM, longer
// sorts -- than the probes it saves).
SPGEMM_HOST_DEVICE inline int numeric_bin(std::int64_t a_row_length, std::int64_t nnz, const limits& lim) {
  if (nnz == 0) return bin_none;
  if (a_row_length == 1) return bin_copy;
  return table_bin_of(table_need(a_row_length, nnz + nnz / 4), lim.numeric_max_table);
}

// Numeric bin of a row whose symbolic pass ran in `symbolic`: a segment row
// keeps its bin while its exact nnz is still dense in B's columns (1/64 of
// them, is_segment_row's density); one whose products fell into few columns
// (a long row of a high-compression product: R (A P) of poisson3d27:101, 50
// entries in 27,063 columns) takes the table of its nnz, where one fits: its
// segments' dense accumulators would be cleared and ordered for a few
// entries. (The least bound does not apply to the exact nnz: bcsstk33's rows
// of 294 entries in 8,738 columns run 1.6x faster on their segments.)
SPGEMM_HOST_DEVICE inline int numeric_bin(int symbolic, std::int64_t a_row_length, std::int64_t nnz,
                                          std::int64_t b_cols, const limits& lim) {
  const int table = numeric_bin(a_row_length, nnz, lim);
  if (!is_segment_bin(symbolic)) return table;
  const bool dense = nnz * segment_density_inverse >= b_cols;
  return dense || table == dense_bin(lim.numeric_max_table) ? symbolic : table;
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

inline constexpr int wide_slots_min_table = 8192;

// symbolic: value_bytes = 0 (keys only, no values, no commit scratch).
inline table_config config_for_table(int table, std::size_t value_bytes) {
  table_config c;
  c.table = table;
  c.warp_per_row = table <= warp_max_table;
  c.block_threads = c.warp_per_row ? 256 : block_threads_for_table(table);
  c.rows_per_block = c.warp_per_row ? c.block_threads / 32 : 1;
  const std::size_t group_threads = c.warp_per_row ? 32 : static_cast<std::size_t>(c.block_threads);
  // A numeric table of 4-byte values from wide_slots_min_table slots on takes
  // 8 bytes a slot for them, as one of 8-byte values does: its write-out by
  // rank (hash/row_output.cuh), which uses the block's shared memory from the
  // table on, then holds the spans an 8-byte table's holds (a row over half a
  // million columns of B, at 8,192 slots) instead of sorting the table. It
  // runs one block a SM at 8,192 slots, as an 8-byte table does, against two.
  // Smaller tables keep 4 bytes and their occupancy: few of their rows' spans
  // fall between the two limits.
  const bool wide_slots = value_bytes > 0 && value_bytes < 8 && table >= wide_slots_min_table;
  const std::size_t slot_values = wide_slots ? 8 : value_bytes;
  const std::size_t per_slot = 4 + slot_values;
  // staging of A's entries: b begin (8) + inclusive prefix (8) + value (value_bytes)
  const std::size_t stage = group_threads * (16 + value_bytes);
  const std::size_t scratch = group_threads * value_bytes;
  c.shared_bytes = static_cast<std::size_t>(c.rows_per_block) *
                   (static_cast<std::size_t>(table) * per_slot + stage + scratch);
  return c;
}

// Small products (at most tuning::fuse_max_products products): one launch
// per pass serves every table bin up to fused_max_table slots (and, numeric,
// the copy rows), in blocks of fused_block_threads threads: a launch costs
// the host more than many small bins' kernels take. A bin's rows take a warp
// each, or a block each where the bin has few rows (at most
// tuning::fused_block_rows_per_sm per SM) and tables of a slot per thread or
// more: a warp per row leaves the GPU nearly idle on a few large rows, while
// where such bins have thousands of rows warps are faster.
inline constexpr int fused_max_table = 2048;
inline constexpr int fused_block_threads = 256;
inline bool fuse_table_bins(std::int64_t products, std::int64_t max_products) { return products <= max_products; }
inline bool fused_warp_rows(int table, std::int64_t rows, std::int64_t block_rows_max) {
  return table <= warp_max_table && (table < fused_block_threads || rows > block_rows_max);
}

// The largest tables a block can hold with `max_shared` bytes of dynamic
// shared memory (cudaDevAttrMaxSharedMemoryPerBlockOptin).
inline limits limits_for(std::size_t max_shared, std::size_t value_bytes) {
  limits l;
  static_assert(first_table_bin + 10 + 1 < first_segment_bin, "table bins (up to 32768 slots) and dense stay below the segment bins");
  l.symbolic_max_table = 1024;
  while (l.symbolic_max_table < 32768 && config_for_table(2 * l.symbolic_max_table, 0).shared_bytes <= max_shared)
    l.symbolic_max_table *= 2;
  l.numeric_max_table = 1024;
  while (l.numeric_max_table < 32768 &&
         config_for_table(2 * l.numeric_max_table, value_bytes).shared_bytes <= max_shared)
    l.numeric_max_table *= 2;
  l.segment_rows = segment_shared_bytes(value_bytes) <= max_shared;
  l.segment_full_width = full_occupancy_segment_width(max_shared, value_bytes);
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
  std::int64_t nnz_b = 0;
  std::int64_t products = 0;
  std::int64_t max_row_products = 0;
  std::int64_t max_row_length = 0;
  std::int64_t nnz_c_bound = 0;  // sum over rows of min(products, cols of B)
  std::int64_t symbolic_bins[max_bins] = {};  // rows per symbolic bin
  std::int64_t numeric_dense_candidates = 0;  // rows whose bound exceeds the largest numeric table

  double mean_row_products() const { return rows > 0 ? static_cast<double>(products) / static_cast<double>(rows) : 0; }
  double mean_row_length() const { return rows > 0 ? static_cast<double>(nnz_a) / static_cast<double>(rows) : 0; }
};

// The width of a job's segments. Items run on persistent blocks
// (segment_blocks_per_sm a SM), the heaviest rows first, so a row whose item
// holds more products than the blocks' mean is the numeric kernel's tail: with
// few columns and a few heavy rows (orani678: 8 rows of 67,000 products into
// 2,529 columns, one item each at 4096 columns, 7 times the mean products of
// a block) the width is halved (down to limits::segment_min_width) until the
// heaviest item -- its row's products times width / cols of B -- holds at most
// segment_tail_target times the mean. Items of one row are independent sets of
// columns, so each entry of C keeps its sum in A's order. Where the heaviest
// item holds less than segment_tail_start times the mean the width stays:
// each item stages its row of A again, and a row's products need not spread
// evenly over its columns. H200, auto ms, full width / narrowed
// (bench/results/h200-planner/): orani678 0.66-0.70 / 0.52-0.54 (512
// columns), pilot87 A·Aᵀ (4.2 times) 0.30-0.31 / 0.25-0.27 (512); below the
// start, sts4098 (3.2 times) 0.32 / 0.34-0.36 at 2048 columns, web-spam (2.2
// times) 0.36 / 0.33-0.35.
inline constexpr std::int64_t segment_blocks_per_sm = 4;
inline constexpr double segment_tail_start = 4;
inline constexpr double segment_tail_target = 2;
// ... and then narrower for the occupancy of the numeric blocks: their shared
// memory follows the width, so a width of limits::segment_full_width or less
// runs segment_full_blocks_per_sm blocks a SM instead of four, and where the
// items (segment rows times segments) are fewer than those blocks (mbeacxc:
// 496 rows into 496 columns, one item each) narrower segments make more of
// them. Each narrowing holds while an item's entry of A still brings
// segment_min_item_products products in the mean (the products per entry of
// A times the segment's share of B's columns): an item stages its row of A
// again, two loads of segment starts an entry.
inline constexpr double segment_min_item_products = 16;

// Rows of the segment bins (hist: rows per bin). Grouped, they lie together
// in bin order, the heaviest first.
inline std::int64_t segment_row_count(const std::int64_t* hist) {
  std::int64_t n = 0;
  for (int i = 0; i < segment_bin_count; ++i) n += hist[first_segment_bin + i];
  return n;
}

inline int segment_width_for(const job_stats& s, const limits& lim, int sm_count) {
  std::int64_t width = segment_width;
  if (s.b_cols <= 0 || sm_count <= 0) return static_cast<int>(width);
  const auto can_halve = [&](std::int64_t narrowest) {
    return width / 2 >= narrowest && segments_of(s.b_cols, width / 2) <= max_segments &&
           segment_table_fits(s.b_rows, s.b_cols, s.nnz_a, s.nnz_b, width / 2);
  };
  if (lim.segment_max_width > 0) {
    while (width > lim.segment_max_width && can_halve(min_segment_width)) width /= 2;
    return static_cast<int>(width);
  }
  // A narrow B: an accumulator of its columns (one item a row either way).
  while (width / 2 >= s.b_cols && width / 2 >= min_segment_width) width /= 2;
  const double mean = static_cast<double>(s.products) / static_cast<double>(segment_blocks_per_sm * sm_count);
  const auto share = [&](std::int64_t w) {
    return w < s.b_cols ? static_cast<double>(w) / static_cast<double>(s.b_cols) : 1.0;
  };
  const auto heaviest = [&](std::int64_t w) { return static_cast<double>(s.max_row_products) * share(w); };
  if (heaviest(width) > segment_tail_start * mean) {
    const std::int64_t narrowest = lim.segment_min_width > min_segment_width ? lim.segment_min_width : min_segment_width;
    while (heaviest(width) > segment_tail_target * mean && can_halve(narrowest)) width /= 2;
  }
  const double entry_products =
      s.nnz_a > 0 ? static_cast<double>(s.products) / static_cast<double>(s.nnz_a) : 0.0;
  const auto items_pay = [&](std::int64_t w) { return entry_products * share(w) >= segment_min_item_products; };
  while (width > lim.segment_full_width && items_pay(width / 2) && can_halve(min_segment_width)) width /= 2;
  const std::int64_t rows = segment_row_count(s.symbolic_bins);
  const std::int64_t blocks = segment_full_blocks_per_sm * static_cast<std::int64_t>(sm_count);
  while (rows > 0 && rows * segments_of(s.b_cols, width) < blocks && items_pay(width / 2) &&
         can_halve(min_segment_width)) {
    width /= 2;
  }
  return static_cast<int>(width);
}

// Rows of the block tables and dense rows: the warps of a block either take
// disjoint column ranges of the row (no barrier between them; each warp reads
// every entry of A's row and the range starts of its row of B), or enumerate
// the row together and commit one after another. Ranges pay where rows of B
// are long (many products per entry of A), and cost where they are short.
inline constexpr double column_ranges_min_products_per_entry = 64;
inline bool use_column_ranges(const job_stats& s) {
  return s.nnz_a > 0 && static_cast<double>(s.products) >= column_ranges_min_products_per_entry * s.nnz_a;
}

// ... but a row whose products span at most 1 / row_span_split_inverse of
// B's columns (a row in a local order: the job's ranges put its products
// into one or two warps) is cut evenly over its own span instead.
inline constexpr std::int64_t row_span_split_inverse = 2;
SPGEMM_HOST_DEVICE inline bool split_by_row_span(std::int64_t span, std::int64_t b_cols) {
  return span * row_span_split_inverse <= b_cols;
}

}  // namespace spgemm::planner
