#include "core/panels/panel_cuts.hpp"

#include <algorithm>

#include "spgemm/csr.hpp"

namespace spgemmd::core {

panel_cuts::panel_cuts(const spgemm::row_work& work, int64_t b_cols, std::size_t a_value_bytes,
                       std::size_t c_value_bytes, const panel_mask_rows* mask)
    : a_entry_bytes_(sizeof(spgemm::index_t) + a_value_bytes), c_entry_bytes_(sizeof(spgemm::index_t) + c_value_bytes) {
  const std::size_t rows = work.entries.size();
  entries_.assign(rows + 1, 0);
  bound_.assign(rows + 1, 0);
  products_.assign(rows + 1, 0);
  if (mask != nullptr) {
    mask_entries_.assign(rows + 1, 0);
    mask_entry_bytes_ = sizeof(spgemm::index_t) + mask->value_bytes;
  }
  for (std::size_t r = 0; r < rows; ++r) {
    entries_[r + 1] = entries_[r] + work.entries[r];
    int64_t bound = std::min(work.products[r], b_cols);
    if (mask != nullptr) {
      mask_entries_[r + 1] = mask_entries_[r] + mask->entries[r];
      if (mask->bounds_c) bound = std::min(bound, mask->entries[r]);
    }
    bound_[r + 1] = bound_[r] + bound;
    products_[r + 1] = products_[r] + work.products[r];
  }
}

std::size_t panel_cuts::operand_bytes(int64_t begin, int64_t end) const {
  const auto offsets = static_cast<std::size_t>(end - begin + 1) * sizeof(spgemm::offset_t);
  std::size_t bytes = offsets + static_cast<std::size_t>(entries_[end] - entries_[begin]) * a_entry_bytes_;
  if (!mask_entries_.empty()) {
    bytes += offsets + static_cast<std::size_t>(mask_entries_[end] - mask_entries_[begin]) * mask_entry_bytes_;
  }
  return bytes;
}

std::size_t panel_cuts::c_bound_bytes(int64_t begin, int64_t end) const {
  return static_cast<std::size_t>(end - begin + 1) * sizeof(spgemm::offset_t) +
         static_cast<std::size_t>(c_bound_entries(begin, end)) * c_entry_bytes_;
}

double panel_cuts::panel_bytes(int64_t begin, int64_t end, double ratio) const {
  return static_cast<double>(operand_bytes(begin, end)) + ratio * static_cast<double>(c_bound_bytes(begin, end));
}

int64_t panel_cuts::cut(int64_t begin, int64_t limit, double ratio, double bytes) const {
  auto fits = [&](int64_t end) {
    return panel_bytes(begin, end, ratio) <= bytes && c_bound_entries(begin, end) <= max_entries;
  };
  // The largest end in (begin, limit] that fits (the panel's size grows with its end).
  int64_t lo = begin + 1, hi = limit;
  if (!fits(lo)) return lo;  // one row, too large: its estimate will say so
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  if (lo == limit) return limit;
  const int64_t aligned = lo / row_alignment * row_alignment;
  return aligned > begin ? aligned : lo;
}

}  // namespace spgemmd::core
