// CSR transpose on the CPU: count entries per column, prefix sum, then scatter
// the rows in order, which leaves the columns of every output row sorted.
#include "spgemm/reference.hpp"

#include <numeric>

namespace spgemm {

template <typename T>
csr_matrix<T> cpu_transpose(const csr_matrix<T>& a) {
  csr_matrix<T> t;
  t.rows = a.cols;
  t.cols = a.rows;
  t.row_offsets.assign(static_cast<std::size_t>(a.cols) + 1, 0);
  for (const index_t c : a.col_indices) ++t.row_offsets[c + 1];
  std::partial_sum(t.row_offsets.begin(), t.row_offsets.end(), t.row_offsets.begin());
  t.col_indices.resize(a.col_indices.size());
  t.values.resize(a.values.size());
  std::vector<offset_t> next(t.row_offsets.begin(), t.row_offsets.end() - 1);
  for (std::int64_t r = 0; r < a.rows; ++r) {
    for (offset_t k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k) {
      const offset_t dst = next[a.col_indices[k]]++;
      t.col_indices[dst] = static_cast<index_t>(r);
      t.values[dst] = a.values[k];
    }
  }
  return t;
}

template csr_matrix<float> cpu_transpose(const csr_matrix<float>&);
template csr_matrix<double> cpu_transpose(const csr_matrix<double>&);

}  // namespace spgemm
