// The planner, per job (algorithm::automatic): the block method where A and B
// are made of dense blocks of one size, RMerge where rows of A are longer
// than a narrow B is wide, else RMerge or the hash method from the shape of
// A's rows and how far off the diagonal they lie: choose_method(). The dense,
// bhsparse and segmerge methods run by name only (docs/planner.md: where
// they beat this choice, by too little or on too few matrices for a rule).
// Host-only (no CUDA headers; diagonal_offset is host and device),
// unit-tested on the CPU (tests/engine/planner_test.cpp); the measurements
// behind the rules are in docs/planner.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "planner/host_device.hpp"
#include "planner/row_bins.hpp"
#include "spgemm/multiply.hpp"

namespace spgemm::planner {

// How far an entry (row, col) of a rows x cols matrix lies from its
// diagonal, as a share of the matrix: |col / cols - row / rows|, 0 .. 1.
// Its mean over the entries (row_stats::diagonal_distance) tells how
// scattered the rows of B are that consecutive rows of A gather: a
// uniformly random matrix has 1/3, banded, stencil and mesh matrices in a
// local order a few hundredths.
SPGEMM_HOST_DEVICE inline double diagonal_offset(std::int64_t row, std::int64_t col, std::int64_t rows,
                                                 std::int64_t cols) {
  const double d = static_cast<double>(col) / static_cast<double>(cols) -
                   static_cast<double>(row) / static_cast<double>(rows);
  return d < 0 ? -d : d;
}

// The shape of a matrix's rows: what the per-job rule and RMerge's plan
// read (planner/statistics.hpp measures it; the GPU backend keeps it per
// stored matrix).
struct row_stats {
  std::int64_t rows = 0;
  std::int64_t nnz = 0;
  std::int64_t max_row_length = 0;
  // The mean diagonal_offset of the entries (0 without entries); the GPU
  // backend measures it once per stored matrix (planner/statistics.hpp).
  double diagonal_distance = 0;
  // No entry above the diagonal (col <= row everywhere), no entry below it
  // (col >= row); measured with the longest row (planner/statistics.hpp).
  bool lower_triangular = false;
  bool upper_triangular = false;
  // Rows that look like the row before them: as long, and their first and
  // last columns the same (same_candidates; empty rows after empty rows too)
  // or each one further (shifted_candidates). Measured with the longest row:
  // cheap counts that decide whether the exact pass (planner/row_repeats.hpp)
  // is worth running.
  std::int64_t same_candidates = 0;
  std::int64_t shifted_candidates = 0;
  double mean_row_length() const { return rows > 0 ? static_cast<double>(nnz) / static_cast<double>(rows) : 0.0; }
};

// The method automatic runs, and why (for memory_estimate::method and docs).
struct choice {
  algorithm algo = algorithm::hash;
  std::string reason;
};

// What the per-job rule reads: the shape of A's rows (kept with the stored
// matrix), so that only the hash method pays for the statistics pass over the
// product.
struct row_shape {
  std::int64_t rows = 0;
  std::int64_t nnz_a = 0;
  std::int64_t max_row_length = 0;
  bool empty_product = true;  // A or B without entries
  // The size of the dense blocks A and B are both made of
  // (planner/block_structure.hpp, measured once per stored matrix), 1 where
  // they share none.
  int block_size = 1;
  // The product is over (+, *): every method runs it. Another semiring runs
  // on the methods that take one (the hash method, ESC).
  bool plus_times = true;
  // B's shape (0: unknown, the rules that read it do not apply).
  std::int64_t b_rows = 0;
  std::int64_t b_cols = 0;
  std::int64_t nnz_b = 0;
  // The device's SMs (0: unknown).
  int sm_count = 0;
  // A's row_stats::diagonal_distance (< 0: unknown, the rule that reads it
  // does not apply).
  double a_diagonal_distance = -1;
  // The bytes of B's columns and values, and of the device's L2 cache (0:
  // unknown, the rule that reads them does not apply).
  std::size_t b_bytes = 0;
  std::size_t cache_bytes = 0;
  double mean_row_length() const { return rows > 0 ? static_cast<double>(nnz_a) / static_cast<double>(rows) : 0; }
  // Products a row of A is expected to have: its mean length times B's mean
  // row (0 where B's shape is unknown).
  double expected_row_products() const {
    return b_rows > 0 ? mean_row_length() * static_cast<double>(nnz_b) / static_cast<double>(b_rows) : 0;
  }
};

// RMerge where every row of A is merged in one pass (longest row <= W * R =
// 128: no split levels, no intermediates); where it would split rows
// (power-law graphs, R-MAT) the hash method is faster.
inline constexpr std::int64_t rmerge_max_row_length = 128;
// ... and whose rows are regular, the longest at most this many times the
// mean: a merge pass sizes its sub-warps by the longest row, so on skewed
// short rows the hash method's warp rows win (most of their lanes idle in
// RMerge: ct2010, rows of 5 and up to 53 on 64-lane groups, RMerge 0.28-0.29
// ms against hash 0.21 since its short rows, H100; below: delaunay_n16,
// 2.8x the mean, 0.18 against 0.21; fe_body, 3.9x, 0.16 against 0.20).
inline constexpr double rmerge_max_length_spread = 8;
// Rows longer than one merge pass (long_regular_rows_in_local_order) keep a
// wider spread: split levels fill their sub-warps whatever the longest row.
inline constexpr double rmerge_levels_max_length_spread = 12;

// RMerge's sub-warps of 32 lanes (a longest row of more than 64 entries:
// rmerge_tuning.hpp) on few rows: fewer than rmerge_min_warps_per_sm rows
// per SM leave its latency-bound merges unhidden, while the hash method's
// block tables spread a row's products over a block (bcsstk13, 2003 rows of
// up to 94 entries: hash 0.20-0.24 ms against RMerge 0.37-0.43).
inline constexpr std::int64_t rmerge_wide_subwarp_length = 64;
inline constexpr std::int64_t rmerge_min_warps_per_sm = 32;

// Rows of A longer than B has columns, B narrow (at most
// narrow_b_max_columns): A * A^T of a wide matrix of few rows (LP
// constraint matrices: nw04, 36 rows of 17,700 entries into 36 columns;
// fast0507, 507 rows of 807 into 507). The hash method serializes on a
// table of a few slots (nw04/aat 13.7 ms); RMerge splits the rows, and every
// level's intermediate rows hold at most B's columns (0.35 ms, the dense
// method 0.39; fast0507/aat 0.38 against 0.44 and hash 2.6). Where rows of
// A are shorter than B is wide the products spread over its columns
// (mbeacxc: rows of 100 into 496 columns, hash 0.42 ms, dense 0.64, RMerge
// 1.38; pilot87/aat: 36 into 2030) and the rules of A's row shape apply.
inline constexpr std::int64_t narrow_b_max_columns = 4096;
inline constexpr double narrow_b_min_row_per_column = 1;

inline bool long_rows_into_narrow_b(const row_shape& s) {
  return s.b_cols > 0 && s.b_cols <= narrow_b_max_columns &&
         s.mean_row_length() >= narrow_b_min_row_per_column * static_cast<double>(s.b_cols);
}

inline bool rmerge_fills_the_gpu(const row_shape& s) {
  return s.sm_count <= 0 || s.max_row_length <= rmerge_wide_subwarp_length ||
         s.rows >= rmerge_min_warps_per_sm * s.sm_count;
}

// ... unless the whole product is small (at most small_product_max_products
// expected): then the fixed costs decide, and RMerge's (a structure pass, a
// scan and a value pass) are lower than the hash method's (its statistics
// pass over the product, bins and their kernels). H200, RMerge against hash,
// ms: the coarse Galerkin products of poisson2d5:1024, R (A P) of 1,449 rows
// of 47 entries (1.3 million products expected) 0.067 / 0.143 and of 148
// rows (0.2 million) 0.061 / 0.086; above it the rule before decides:
// ex31 (3.4 million) 0.236 / 0.243, bcsstk13 (3.5 million) 0.295 / 0.224.
inline constexpr double small_product_max_products = 2.0 * (1 << 20);

inline bool small_product(const row_shape& s) {
  return s.b_rows > 0 && static_cast<double>(s.rows) * s.expected_row_products() <= small_product_max_products;
}

// Rows of A scattered far from the diagonal (a_diagonal_distance at least
// scattered_min_diagonal_distance) gather their rows of B from all over it:
// RMerge's cursors, a lane per row of B, load a sector of B per product with
// little reuse in L1, while the hash method reads each row of B with
// coalesced loads. Where B is larger than the device's L2 cache those
// sectors come from DRAM and the hash method wins on rows of moderate
// products: from scattered_min_row_products expected (below, its own cost
// per row -- a warp's table, sort and write in two passes, ~2 ns on the
// H100, some 40 products' worth -- leaves RMerge ahead even on random rows)
// up to what its warp tables hold at load 0.8 (its block tables are slower:
// er:200000:32, 1,024 products a row, RMerge 16.3 ms against 23.4). Where B
// stays in L2, RMerge's merge (a step the whole warp takes together since
// f79a813) wins or ties. H200, f64, RMerge against hash, ms (distance,
// expected products a row, B's columns and values; bench/results/
// h200-rmerge-steps/): er:1000000:8 (0.33, 64, 96 MB, beyond the 50 MB L2)
// 5.19 / 2.93, in f32 (64 MB) 3.95 / 2.65; B within L2: Andrews (0.30,
// 161, 9 MB) 0.60 / 0.83, bayer10 (0.39, 50, 1.1 MB) 0.104 / 0.168,
// finan512 (0.23, 49, 6.3 MB) 0.49 / 0.45, the one measured on the wrong
// side of the rule.
inline constexpr double scattered_min_diagonal_distance = 0.2;
inline constexpr double scattered_min_row_products = 40;
inline constexpr double scattered_max_row_products = warp_max_table * 4.0 / 5.0;

inline bool scattered_rows_for_hash(const row_shape& s) {
  const double p = s.expected_row_products();
  return s.a_diagonal_distance >= scattered_min_diagonal_distance && p >= scattered_min_row_products &&
         p <= scattered_max_row_products && s.cache_bytes > 0 && s.b_bytes > s.cache_bytes;
}

// Regular rows of A longer than one merge pass (RMerge splits them into
// levels) in a local order (a_diagonal_distance below
// local_max_diagonal_distance, B's rows gathered from nearby) compress into
// few columns, and RMerge's levels merge them faster than the hash method's
// block tables, given rows enough to hide the levels' latency, the more the
// longer B's rows (each level's merge steps through them): over short rows
// of B (a mean of at most local_b_max_mean_row: a Galerkin product's
// restriction times A P on a fine level) as many as one merge pass needs,
// over rows of up to local_b_medium_mean_row (the coarse levels' products)
// rmerge_levels_min_rows_per_sm_medium_b, over longer rows of B (FEM
// matrices squared) rmerge_levels_min_rows_per_sm. H100
// (bench/results/h100-amg/methods.tsv), RMerge against hash: R (A P) of
// poisson3d27:101's first level (176 entries a row over rows of 12) 1.00 ms
// against 2.47. H200, RMerge against hash, ms: the coarse Galerkin products
// of poisson3d7:101 (bench/results/h200-coarse-products/), 82 rows per SM,
// R (A P) over rows of 40 0.99 / 1.27, A P over rows of 24 0.65 / 0.99;
// with longer rows of B the hash method's segment rows win: R (A P) of
// poisson3d27:101 (34 rows per SM over rows of 78) 1.16 / 0.86, of
// poisson3d7:101's second level (5 over 88) 0.84 / 0.73. FEM blocks of up
// to 130 to 200 entries a row (bench/results/h200-planner/): femblocks:20:6
// (213 rows per SM) 3.62 ms against 4.55, femblocks:16:10 (171) 6.28 / 7.48,
// femblocks:24:10 (576) 21.1 / 32.2, femblocks:30:6 (717) 12.3 / 14.6;
// bcsstk33 (66 rows per SM over rows of 67) 1.19 / 0.92, femblocks:12:8
// (59) 2.01 / 1.61. Scattered rows keep the hash method too (bio-CE-CX, 0.16
// of the matrix off the diagonal: RMerge 10.6 ms against 1.54).
inline constexpr double local_max_diagonal_distance = 0.1;
inline constexpr double local_b_max_mean_row = 16;
inline constexpr double local_b_medium_mean_row = 48;
inline constexpr std::int64_t rmerge_levels_min_rows_per_sm_medium_b = 64;
inline constexpr std::int64_t rmerge_levels_min_rows_per_sm = 128;

inline bool long_regular_rows_in_local_order(const row_shape& s) {
  if (s.max_row_length <= rmerge_max_row_length ||
      static_cast<double>(s.max_row_length) > rmerge_levels_max_length_spread * s.mean_row_length() ||
      s.a_diagonal_distance < 0 || s.a_diagonal_distance >= local_max_diagonal_distance || s.b_rows <= 0) {
    return false;
  }
  const double b_mean = static_cast<double>(s.nnz_b) / static_cast<double>(s.b_rows);
  if (b_mean <= local_b_max_mean_row) return rmerge_fills_the_gpu(s);
  const std::int64_t rows_per_sm =
      b_mean <= local_b_medium_mean_row ? rmerge_levels_min_rows_per_sm_medium_b : rmerge_levels_min_rows_per_sm;
  return s.sm_count <= 0 || s.rows >= rows_per_sm * s.sm_count;
}

// Operands made of dense b x b blocks (multi-dof FEM: elasticity, b = 3) take
// the block method (engine/block/): its symbolic pass runs on the block
// patterns (b^3 fewer products, b^2 fewer entries), its numeric pass
// multiplies whole blocks. Every common size from 2 on wins.
// ESC is never chosen: the hash method is faster on nearly every matrix and
// needs far less workspace per entry of C.
inline constexpr int block_min_size = 2;

inline choice choose_method(const row_shape& s) {
  choice c;
  if (!s.plus_times) {
    c.algo = algorithm::hash;
    c.reason = "a semiring: the hash method";
  } else if (s.rows == 0 || s.empty_product) {
    c.algo = algorithm::hash;
    c.reason = "empty product";
  } else if (s.block_size >= block_min_size) {
    c.algo = algorithm::block;
    c.reason = "A and B made of dense " + std::to_string(s.block_size) + "x" + std::to_string(s.block_size) + " blocks";
  } else if (long_rows_into_narrow_b(s)) {
    c.algo = algorithm::rmerge;
    c.reason = "rows of A longer than B's " + std::to_string(s.b_cols) + " columns: RMerge's levels stay narrow";
  } else if (s.max_row_length <= rmerge_max_row_length &&
             static_cast<double>(s.max_row_length) <= rmerge_max_length_spread * s.mean_row_length()) {
    if (!rmerge_fills_the_gpu(s) && !small_product(s)) {
      c.algo = algorithm::hash;
      c.reason = "too few rows of A for RMerge's 32-lane merges";
    } else if (scattered_rows_for_hash(s)) {
      char text[160];
      std::snprintf(text, sizeof text,
                    "rows of A %.2f of the matrix off the diagonal, %.0f products a row expected, B beyond the L2 "
                    "cache: coalesced rows of B",
                    s.a_diagonal_distance, s.expected_row_products());
      c.algo = algorithm::hash;
      c.reason = text;
    } else if (!rmerge_fills_the_gpu(s)) {
      c.algo = algorithm::rmerge;
      c.reason = "few rows of A in a small product: RMerge's fixed costs are the lower";
    } else {
      c.algo = algorithm::rmerge;
      c.reason = "regular rows of A that fit one merge pass";
    }
  } else if (long_regular_rows_in_local_order(s)) {
    c.algo = algorithm::rmerge;
    c.reason = "regular long rows of A in a local order over short rows of B: RMerge's levels";
  } else if (s.max_row_length <= rmerge_max_row_length) {
    char text[120];
    std::snprintf(text, sizeof text, "skewed rows of A (the longest %.1f times the mean): hash tables per bin",
                  static_cast<double>(s.max_row_length) / s.mean_row_length());
    c.algo = algorithm::hash;
    c.reason = text;
  } else {
    c.algo = algorithm::hash;
    c.reason = "long rows of A: hash tables and segment rows per bin";
  }
  return c;
}

// A masked product: one dot product per entry of M where the mask allows
// (C<M>: its work is M's entries, not the product's; triangle counting),
// else ESC, whose expansion drops the products M forbids before they are
// sorted (C<!M>: the forbidden columns are M's, the rest is the product's).
inline choice choose_masked_method(bool complement) {
  if (complement) return {algorithm::esc, "C<!M>: ESC, products the mask forbids dropped before the sort"};
  return {algorithm::dot, "C<M>: a dot product per entry of the mask"};
}

}  // namespace spgemm::planner
