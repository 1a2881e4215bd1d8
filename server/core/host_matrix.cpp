#include "core/host_matrix.hpp"

#include <algorithm>

#include "spgemm/errors.hpp"

namespace spgemmd::core {

namespace {

// Rows [begin, end) of `from` at the end of `to` (same columns).
template <typename T>
void append(const spgemm::csr_matrix<T>& from, int64_t begin, int64_t end, spgemm::csr_matrix<T>& to) {
  const spgemm::offset_t shift = to.nnz() - from.row_offsets[begin];
  for (int64_t r = begin + 1; r <= end; ++r) to.row_offsets.push_back(from.row_offsets[r] + shift);
  to.col_indices.insert(to.col_indices.end(), from.col_indices.begin() + from.row_offsets[begin],
                        from.col_indices.begin() + from.row_offsets[end]);
  to.values.insert(to.values.end(), from.values.begin() + from.row_offsets[begin],
                   from.values.begin() + from.row_offsets[end]);
  to.rows += end - begin;
}

}  // namespace

host_matrix::host_matrix(spgemm::any_csr m) : info_(spgemm::info_of(m)) {
  blocks_.push_back({0, std::make_shared<const spgemm::any_csr>(std::move(m))});
}

host_matrix::host_matrix(std::vector<block> blocks) : blocks_(std::move(blocks)) {
  if (blocks_.empty()) throw spgemm::error(spgemm::error_kind::bad_input, "a host matrix needs a block");
  info_ = spgemm::info_of(*blocks_.front().rows);
  info_.rows = 0;
  info_.nnz = 0;
  for (const block& b : blocks_) {
    const spgemm::matrix_info i = spgemm::info_of(*b.rows);
    if (b.first_row != info_.rows || i.cols != info_.cols || i.type != info_.type) {
      throw spgemm::error(spgemm::error_kind::bad_input, "host matrix blocks out of order or of another shape");
    }
    info_.rows += i.rows;
    info_.nnz += i.nnz;
  }
}

spgemm::any_csr host_matrix::rows(int64_t begin, int64_t end) const {
  return std::visit(
      [&](const auto& first) -> spgemm::any_csr {
        using csr = std::decay_t<decltype(first)>;
        csr out;
        out.cols = info_.cols;
        for (const block& b : blocks_) {
          const auto& m = std::get<csr>(*b.rows);
          const int64_t from = std::max(begin, b.first_row), to = std::min(end, b.first_row + m.rows);
          if (from < to) append(m, from - b.first_row, to - b.first_row, out);
        }
        return out;
      },
      *blocks_.front().rows);
}

std::shared_ptr<const spgemm::any_csr> host_matrix::whole() const {
  if (blocks_.size() == 1) return blocks_.front().rows;
  return std::make_shared<const spgemm::any_csr>(rows(0, info_.rows));
}

}  // namespace spgemmd::core
