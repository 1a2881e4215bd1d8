#include "spgemm/csr.hpp"

#include <string>

#include "spgemm/errors.hpp"

namespace spgemm {

std::string_view to_string(value_type type) { return type == value_type::f32 ? "float32" : "float64"; }

std::size_t size_of(value_type type) { return type == value_type::f32 ? sizeof(float) : sizeof(double); }

matrix_info info_of(const any_csr& m) {
  return std::visit([](const auto& x) { return info_of(x); }, m);
}

any_csr convert_values(any_csr m, value_type to) {
  return std::visit(
      [to](auto&& x) -> any_csr {
        if (to == value_type::f32) return convert_values<float>(std::move(x));
        return convert_values<double>(std::move(x));
      },
      std::move(m));
}

template <typename T>
csr_matrix<T> row_block(const csr_matrix<T>& m, std::int64_t row_begin, std::int64_t row_end) {
  if (row_begin < 0 || row_end < row_begin || row_end > m.rows) {
    throw_bad_input("row block [" + std::to_string(row_begin) + ", " + std::to_string(row_end) +
                    ") is outside the matrix's " + std::to_string(m.rows) + " rows");
  }
  csr_matrix<T> out;
  out.rows = row_end - row_begin;
  out.cols = m.cols;
  const offset_t first = m.row_offsets[row_begin];
  const offset_t last = m.row_offsets[row_end];
  out.row_offsets.resize(out.rows + 1);
  for (std::int64_t r = 0; r <= out.rows; ++r) out.row_offsets[r] = m.row_offsets[row_begin + r] - first;
  out.col_indices.assign(m.col_indices.begin() + first, m.col_indices.begin() + last);
  out.values.assign(m.values.begin() + first, m.values.begin() + last);
  return out;
}

any_csr row_block(const any_csr& m, std::int64_t row_begin, std::int64_t row_end) {
  return std::visit([&](const auto& x) -> any_csr { return row_block(x, row_begin, row_end); }, m);
}

template csr_matrix<float> row_block(const csr_matrix<float>&, std::int64_t, std::int64_t);
template csr_matrix<double> row_block(const csr_matrix<double>&, std::int64_t, std::int64_t);

void hand_rows(const any_csr& rows, rows_sink& sink) {
  std::visit(
      [&](const auto& m) {
        sink.piece(rows_sink::array::row_offsets, 0, m.row_offsets.data(), m.row_offsets.size() * sizeof(offset_t));
        if (m.nnz() == 0) return;
        sink.piece(rows_sink::array::col_indices, 0, m.col_indices.data(), m.col_indices.size() * sizeof(index_t));
        sink.piece(rows_sink::array::values, 0, m.values.data(), m.values.size() * sizeof(m.values[0]));
      },
      rows);
}

}  // namespace spgemm
