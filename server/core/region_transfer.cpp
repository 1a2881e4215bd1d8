#include "core/region_transfer.hpp"

#include <new>
#include <vector>

namespace spgemmd::core {

outcome layout_of(const spgemm::matrix_info& info, int64_t length, csr_layout* out, bool* fits) {
  if (outcome o = layout_csr(info.rows, info.nnz, static_cast<int64_t>(spgemm::size_of(info.type)), out); !o.ok()) {
    return o;
  }
  *fits = out->bytes <= length;
  return {};
}

namespace {

// Rows handed by a fetch, written at their places in the region: the rows
// from `first_row` on, their offsets continuing the `entries` before them.
class region_sink final : public spgemm::rows_sink {
 public:
  region_sink(const region_span& to, const csr_layout& layout, int64_t value_size, int64_t first_row, int64_t entries)
      : to_(to), layout_(layout), value_size_(value_size), first_row_(first_row), entries_(entries) {}

  void piece(array which, int64_t at, const void* data, std::size_t bytes) noexcept override {
    if (!written_.ok()) return;
    const auto n = static_cast<int64_t>(bytes);
    try {
      switch (which) {
        case array::row_offsets: {
          const auto* from = static_cast<const spgemm::offset_t*>(data);
          std::vector<spgemm::offset_t> offsets(from, from + bytes / sizeof(spgemm::offset_t));
          for (spgemm::offset_t& o : offsets) o += entries_;
          added_ = offsets.back() - entries_;
          written_ = to_.write(layout_.row_offsets + first_row_ * 8 + at, offsets.data(), n);
          return;
        }
        case array::col_indices:
          written_ = to_.write(layout_.col_indices + entries_ * 4 + at, data, n);
          return;
        case array::values:
          written_ = to_.write(layout_.values + entries_ * value_size_ + at, data, n);
          return;
      }
    } catch (const std::bad_alloc&) {
      written_ = {status::does_not_fit, "out of host memory writing a result into a region"};
    }
  }

  const outcome& written() const { return written_; }
  int64_t entries_added() const { return added_; }

 private:
  const region_span& to_;
  const csr_layout& layout_;
  int64_t value_size_, first_row_, entries_;
  int64_t added_ = 0;
  outcome written_;
};

// Where the rows are a whole stored matrix and the region can be pinned for
// its device's copy engines (a GPU's: host backends pin nothing): device to
// host straight into the client's pages.
bool write_pinned(row_blocks& rows, const region_span& to, const csr_layout& layout) {
  const row_blocks::stored_whole whole = rows.whole();
  if (!whole.backend) return false;
  char* base = to.object->pinned_for(whole.backend, to.at + layout.bytes);
  if (base == nullptr) return false;
  char* at = base + to.at;
  whole.backend->fetch_into_pinned(*whole.matrix, {reinterpret_cast<spgemm::offset_t*>(at + layout.row_offsets),
                                                   reinterpret_cast<spgemm::index_t*>(at + layout.col_indices),
                                                   at + layout.values});
  rows.take_whole();
  return true;
}

}  // namespace

outcome write_rows(row_blocks& rows, const region_span& to, const csr_layout& layout) {
  if (write_pinned(rows, to, layout)) return {};
  const spgemm::offset_t zero = 0;
  if (outcome o = to.write(layout.row_offsets, &zero, sizeof zero); !o.ok()) return o;
  const auto value_size = static_cast<int64_t>(spgemm::size_of(rows.info().type));
  int64_t entries = 0;  // written before the rows handed next
  while (rows.more()) {
    region_sink sink(to, layout, value_size, rows.next_row(), entries);
    rows.next_to(sink);
    if (!sink.written().ok()) return sink.written();
    entries += sink.entries_added();
  }
  return {};
}

}  // namespace spgemmd::core
