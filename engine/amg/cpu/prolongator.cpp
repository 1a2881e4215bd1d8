// Prolongator smoothing on the CPU: P = T - omega (dinv .* (A T)), row by
// row, merging the sorted rows of T and A T (every entry of either kept, so
// that P's pattern never depends on values).
#include "amg/cpu/passes.hpp"

namespace spgemm::amg::cpu {

csr_matrix<double> smooth_prolongator(const csr_matrix<double>& t, const csr_matrix<double>& at,
                                      const std::vector<double>& dinv, double omega) {
  csr_matrix<double> p;
  p.rows = t.rows;
  p.cols = t.cols;
  p.row_offsets.assign(static_cast<std::size_t>(p.rows) + 1, 0);
  p.col_indices.reserve(static_cast<std::size_t>(at.nnz() + t.nnz()));
  p.values.reserve(p.col_indices.capacity());
  for (std::int64_t i = 0; i < p.rows; ++i) {
    const double w = omega * dinv[i];
    offset_t k = t.row_offsets[i], l = at.row_offsets[i];
    const offset_t k_end = t.row_offsets[i + 1], l_end = at.row_offsets[i + 1];
    while (k < k_end || l < l_end) {
      const index_t tc = k < k_end ? t.col_indices[k] : p.cols;
      const index_t ac = l < l_end ? at.col_indices[l] : p.cols;
      const index_t c = tc < ac ? tc : ac;
      double v = 0;
      if (tc == c) v += t.values[k++];
      if (ac == c) v -= w * at.values[l++];
      p.col_indices.push_back(c);
      p.values.push_back(v);
    }
    p.row_offsets[i + 1] = p.nnz();
  }
  return p;
}

}  // namespace spgemm::amg::cpu
