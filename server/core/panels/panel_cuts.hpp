// Where the rows of A are cut into the row panels of C = A B (or C<M> = A B,
// M's rows going with A's): each row's bytes as a matrix of its own and the
// bound of its row of C (min(products, cols of B, and M's row under C<M>)
// entries), as prefix sums, so that a range of rows is sized at once and a
// panel cut to a byte budget by binary search.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "spgemm/multiply.hpp"

namespace spgemmd::core {

// The mask of a masked product in panels.
struct panel_mask_rows {
  std::vector<int64_t> entries;  // of each row of M
  std::size_t value_bytes = 0;
  bool bounds_c = false;  // C<M>: a row of C holds no more entries than M's row
};

class panel_cuts {
 public:
  // Panels never hold more C entries than this bound: every count in a
  // panel's product stays within 32 bits, whatever a method indexes with.
  static constexpr int64_t max_entries = (int64_t{1} << 31) - 1;
  // Cuts fall on multiples of this many rows (but the last): a panel keeps
  // the dense b x b blocks (b = 2, 3, 4, 6) of A's rows for the block method.
  static constexpr int64_t row_alignment = 12;

  panel_cuts(const spgemm::row_work& work, int64_t b_cols, std::size_t a_value_bytes, std::size_t c_value_bytes,
             const panel_mask_rows* mask = nullptr);

  int64_t rows() const { return static_cast<int64_t>(entries_.size()) - 1; }
  // Rows [begin, end) of A, and of M where masked, as matrices of their own.
  std::size_t operand_bytes(int64_t begin, int64_t end) const;
  // Rows [begin, end) of C at their bound.
  std::size_t c_bound_bytes(int64_t begin, int64_t end) const;
  int64_t c_bound_entries(int64_t begin, int64_t end) const { return bound_[end] - bound_[begin]; }
  int64_t products(int64_t begin, int64_t end) const { return products_[end] - products_[begin]; }
  // What a panel of rows [begin, end) takes on a device: its operand rows and,
  // `ratio` bytes per byte of its C bound, the product (output and workspace).
  double panel_bytes(int64_t begin, int64_t end, double ratio) const;
  // The end of the panel that starts at `begin` and ends by `limit`: the
  // most rows whose panel_bytes stay within `bytes` and whose C bound within
  // max_entries, cut on row_alignment where that leaves any; at least one row.
  int64_t cut(int64_t begin, int64_t limit, double ratio, double bytes) const;

 private:
  std::vector<int64_t> entries_, mask_entries_, bound_, products_;  // prefix sums, rows + 1 (M's: none unmasked)
  std::size_t a_entry_bytes_, mask_entry_bytes_ = 0, c_entry_bytes_;
};

}  // namespace spgemmd::core
