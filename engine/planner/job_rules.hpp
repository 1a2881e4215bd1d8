// The planner, per job (algorithm::automatic): the block method where A and B
// are made of dense blocks of one size, else RMerge or the hash method from
// the shape of A's rows: choose_method(). Host-only (no CUDA headers),
// unit-tested on the CPU (tests/engine/planner_test.cpp); the measurements
// behind the rule are in docs/planner.md.
#pragma once

#include <cstdint>
#include <string>

#include "spgemm/multiply.hpp"

namespace spgemm::planner {

// The shape of a matrix's rows: what the per-job rule and RMerge's plan
// read (planner/statistics.hpp measures it; the GPU backend keeps it per
// stored matrix).
struct row_stats {
  std::int64_t rows = 0;
  std::int64_t nnz = 0;
  std::int64_t max_row_length = 0;
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
  double mean_row_length() const { return rows > 0 ? static_cast<double>(nnz_a) / static_cast<double>(rows) : 0; }
};

// RMerge where every row of A is merged in one pass (longest row <= W * R =
// 128: no split levels, no intermediates); where it would split rows
// (power-law graphs, R-MAT) the hash method is faster.
inline constexpr std::int64_t rmerge_max_row_length = 128;
// ... and whose rows are regular, the longest at most this many times the
// mean: a merge pass sizes its sub-warps by the longest row, so on skewed
// short rows the hash method's warp tables win.
inline constexpr double rmerge_max_length_spread = 12;

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
  } else if (s.max_row_length <= rmerge_max_row_length &&
             static_cast<double>(s.max_row_length) <= rmerge_max_length_spread * s.mean_row_length()) {
    c.algo = algorithm::rmerge;
    c.reason = "regular rows of A that fit one merge pass";
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
