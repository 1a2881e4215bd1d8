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
  blocks_.push_back({0, std::make_shared<const spgemm::any_csr>(std::move(m)), nullptr});
}

std::shared_ptr<const spgemm::any_csr> host_matrix::block::load() const {
  if (rows) return rows;
  return std::make_shared<const spgemm::any_csr>(spilled->read(0, spilled->info().rows));
}

host_matrix::host_matrix(std::vector<block> blocks) : blocks_(std::move(blocks)) {
  if (blocks_.empty()) throw spgemm::error(spgemm::error_kind::bad_input, "a host matrix needs a block");
  info_ = blocks_.front().info();
  info_.rows = 0;
  info_.nnz = 0;
  for (const block& b : blocks_) {
    const spgemm::matrix_info i = b.info();
    if (b.first_row != info_.rows || i.cols != info_.cols || i.type != info_.type) {
      throw spgemm::error(spgemm::error_kind::bad_input, "host matrix blocks out of order or of another shape");
    }
    info_.rows += i.rows;
    info_.nnz += i.nnz;
  }
}

std::size_t host_matrix::bytes() const {
  std::size_t bytes = 0;
  for (const block& b : blocks_) bytes += b.rows ? b.info().bytes() : 0;
  return bytes;
}

spgemm::any_csr host_matrix::rows(int64_t begin, int64_t end) const {
  auto gather = [&](auto out) -> spgemm::any_csr {
    using csr = decltype(out);
    out.cols = info_.cols;
    for (const block& b : blocks_) {
      const int64_t from = std::max(begin, b.first_row), to = std::min(end, b.first_row + b.info().rows);
      if (from >= to) continue;
      if (b.rows) {
        append(std::get<csr>(*b.rows), from - b.first_row, to - b.first_row, out);
      } else {
        const spgemm::any_csr read = b.spilled->read(from - b.first_row, to - b.first_row);
        const csr& m = std::get<csr>(read);
        append(m, 0, m.rows, out);
      }
    }
    return out;
  };
  if (info_.type == spgemm::value_type::f32) return gather(spgemm::csr_matrix<float>{});
  return gather(spgemm::csr_matrix<double>{});
}

std::shared_ptr<const spgemm::any_csr> host_matrix::whole() const {
  if (blocks_.size() == 1) return blocks_.front().load();
  return std::make_shared<const spgemm::any_csr>(rows(0, info_.rows));
}

}  // namespace spgemmd::core
