// Compressed sparse row matrices on the host.
//
// Column indices are 32-bit; row offsets are 64-bit everywhere, so a matrix
// may hold more than 2^31 - 1 nonzeros. Within a row, columns are strictly
// increasing (sorted, no duplicates): every engine entry point relies on it
// and `validate.hpp` checks it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <variant>
#include <vector>

namespace spgemm {

using index_t = std::int32_t;   // column index
using offset_t = std::int64_t;  // row offset (position in the nonzero arrays)

enum class value_type { f32, f64 };

std::string_view to_string(value_type type);
std::size_t size_of(value_type type);

template <typename T>
constexpr value_type value_type_of();
template <>
constexpr value_type value_type_of<float>() { return value_type::f32; }
template <>
constexpr value_type value_type_of<double>() { return value_type::f64; }

template <typename T>
struct csr_matrix {
  using value = T;

  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<offset_t> row_offsets = {0};  // rows + 1 entries, starts at 0
  std::vector<index_t> col_indices;         // nnz entries
  std::vector<T> values;                    // nnz entries

  std::int64_t nnz() const { return static_cast<std::int64_t>(col_indices.size()); }
  std::int64_t row_length(std::int64_t row) const { return row_offsets[row + 1] - row_offsets[row]; }
  std::size_t bytes() const {
    return row_offsets.size() * sizeof(offset_t) + col_indices.size() * sizeof(index_t) +
           values.size() * sizeof(T);
  }
};

// A matrix of either value type, as the backends and the service store it.
using any_csr = std::variant<csr_matrix<float>, csr_matrix<double>>;

// Shape and size of a matrix, without its arrays.
struct matrix_info {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t nnz = 0;
  value_type type = value_type::f64;

  std::size_t bytes() const {
    return static_cast<std::size_t>(rows + 1) * sizeof(offset_t) +
           static_cast<std::size_t>(nnz) * (sizeof(index_t) + size_of(type));
  }
};

template <typename T>
matrix_info info_of(const csr_matrix<T>& m) {
  return {m.rows, m.cols, m.nnz(), value_type_of<T>()};
}
matrix_info info_of(const any_csr& m);

// The same matrix with its values converted to U (a copy; a move where U == T).
template <typename U, typename T>
csr_matrix<U> convert_values(csr_matrix<T> m) {
  if constexpr (std::is_same_v<U, T>) {
    return m;
  } else {
    csr_matrix<U> out;
    out.rows = m.rows;
    out.cols = m.cols;
    out.row_offsets = std::move(m.row_offsets);
    out.col_indices = std::move(m.col_indices);
    out.values.assign(m.values.begin(), m.values.end());
    return out;
  }
}
any_csr convert_values(any_csr m, value_type to);

// Rows [row_begin, row_end) as a matrix of their own, offsets rebased to 0.
template <typename T>
csr_matrix<T> row_block(const csr_matrix<T>& m, std::int64_t row_begin, std::int64_t row_end);
any_csr row_block(const any_csr& m, std::int64_t row_begin, std::int64_t row_end);

// Where a fetch (backend::fetch_to) hands a matrix's rows: pieces of each array, in
// order within it, each valid only during the call. `at` is the piece's byte
// offset in that array over the rows handed (row offsets rebased to 0, all
// of them in one piece, before any entry).
class rows_sink {
 public:
  enum class array { row_offsets, col_indices, values };
  virtual ~rows_sink() = default;
  // Must not throw (a copy into the backend's staging may be in flight): a
  // sink that fails keeps its failure and ignores the pieces after it.
  virtual void piece(array which, std::int64_t at, const void* data, std::size_t bytes) noexcept = 0;
};

// Hands a host matrix's arrays to `sink`, each in one piece.
void hand_rows(const any_csr& rows, rows_sink& sink);

}  // namespace spgemm
