#include "spgemm/validate.hpp"

#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "spgemm/errors.hpp"

namespace spgemm {

template <typename T>
std::string find_csr_problem(const csr_matrix<T>& m, const validate_options& options) {
  std::ostringstream why;
  if (m.rows < 0 || m.cols < 0) {
    why << "negative shape " << m.rows << " x " << m.cols;
    return why.str();
  }
  if (m.cols > std::numeric_limits<index_t>::max()) {
    why << m.cols << " columns exceed the 32-bit column index limit of "
        << std::numeric_limits<index_t>::max();
    return why.str();
  }
  // Not rows + 1, which overflows for the largest rows.
  if (m.row_offsets.empty() || static_cast<std::int64_t>(m.row_offsets.size() - 1) != m.rows) {
    why << "row_offsets has " << m.row_offsets.size() << " entries, expected rows + 1 = "
        << (m.rows < std::numeric_limits<std::int64_t>::max() ? std::to_string(m.rows + 1)
                                                              : std::to_string(m.rows) + " + 1");
    return why.str();
  }
  if (m.col_indices.size() != m.values.size()) {
    why << "col_indices has " << m.col_indices.size() << " entries but values has " << m.values.size();
    return why.str();
  }
  if (m.row_offsets[0] != 0) {
    why << "row_offsets[0] is " << m.row_offsets[0] << ", expected 0";
    return why.str();
  }
  for (std::int64_t r = 0; r < m.rows; ++r) {
    if (m.row_offsets[r + 1] < m.row_offsets[r]) {
      why << "row_offsets[" << r + 1 << "] = " << m.row_offsets[r + 1] << " is less than row_offsets[" << r
          << "] = " << m.row_offsets[r] << " (offsets must not decrease)";
      return why.str();
    }
  }
  if (m.row_offsets[m.rows] != m.nnz()) {
    why << "row_offsets[" << m.rows << "] = " << m.row_offsets[m.rows] << " but there are " << m.nnz()
        << " column indices (the last offset must equal nnz)";
    return why.str();
  }
  for (std::int64_t r = 0; r < m.rows; ++r) {
    for (offset_t k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k) {
      const index_t c = m.col_indices[k];
      if (c < 0 || c >= m.cols) {
        why << "row " << r << ": column " << c << " (entry " << k << ") is outside [0, " << m.cols << ")";
        return why.str();
      }
      if (k > m.row_offsets[r] && c <= m.col_indices[k - 1]) {
        why << "row " << r << ": column " << c << " (entry " << k << ") "
            << (c == m.col_indices[k - 1] ? "duplicates" : "comes after") << " column " << m.col_indices[k - 1]
            << " (columns within a row must be sorted and unique)";
        return why.str();
      }
      if (!options.allow_non_finite && !std::isfinite(m.values[k])) {
        why << "row " << r << ", column " << c << ": value " << m.values[k] << " is not finite";
        return why.str();
      }
    }
  }
  return {};
}

template <typename T>
void require_valid(const csr_matrix<T>& m, std::string_view what, const validate_options& options) {
  const std::string problem = find_csr_problem(m, options);
  if (!problem.empty()) throw_bad_input(std::string(what) + ": " + problem);
}

void require_valid(const any_csr& m, std::string_view what, const validate_options& options) {
  std::visit([&](const auto& x) { require_valid(x, what, options); }, m);
}

template std::string find_csr_problem(const csr_matrix<float>&, const validate_options&);
template std::string find_csr_problem(const csr_matrix<double>&, const validate_options&);
template void require_valid(const csr_matrix<float>&, std::string_view, const validate_options&);
template void require_valid(const csr_matrix<double>&, std::string_view, const validate_options&);

}  // namespace spgemm
