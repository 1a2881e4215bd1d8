// The graphs spgemm-bench --triangles counts in: a matrix's undirected graph,
// its strictly lower triangle in a given numbering, and the numbering by
// decreasing degree (the presort of triangle counting).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "spgemm/csr.hpp"
#include "spgemm/reference.hpp"

namespace bench {

// The undirected graph of `a` (A + A^T without its diagonal), every value 1.
template <typename T>
spgemm::csr_matrix<T> undirected_graph(const spgemm::csr_matrix<T>& a) {
  const spgemm::csr_matrix<T> at = spgemm::cpu_transpose(a);
  spgemm::csr_matrix<T> g;
  g.rows = g.cols = a.rows;
  g.row_offsets.reserve(static_cast<std::size_t>(a.rows) + 1);
  for (std::int64_t r = 0; r < a.rows; ++r) {
    spgemm::offset_t p = a.row_offsets[r], q = at.row_offsets[r];
    const spgemm::offset_t p_end = a.row_offsets[r + 1], q_end = at.row_offsets[r + 1];
    while (p < p_end || q < q_end) {
      spgemm::index_t c;
      if (q == q_end || (p < p_end && a.col_indices[p] < at.col_indices[q])) {
        c = a.col_indices[p++];
      } else if (p == p_end || at.col_indices[q] < a.col_indices[p]) {
        c = at.col_indices[q++];
      } else {
        c = a.col_indices[p++];
        ++q;
      }
      if (c != r) g.col_indices.push_back(c);
    }
    g.row_offsets.push_back(static_cast<spgemm::offset_t>(g.col_indices.size()));
  }
  g.values.assign(g.col_indices.size(), T(1));
  return g;
}

// The strictly lower triangle of the symmetric g with its vertices numbered
// as `order` lists them (order[new] = old; identity where empty).
template <typename T>
spgemm::csr_matrix<T> lower_triangle(const spgemm::csr_matrix<T>& g, const std::vector<spgemm::index_t>& order) {
  std::vector<spgemm::index_t> renamed(static_cast<std::size_t>(g.rows));
  for (std::size_t v = 0; v < renamed.size(); ++v) renamed[order.empty() ? v : order[v]] = static_cast<spgemm::index_t>(v);
  spgemm::csr_matrix<T> l;
  l.rows = l.cols = g.rows;
  std::vector<spgemm::index_t> row;
  for (std::int64_t r = 0; r < g.rows; ++r) {
    const std::int64_t old = order.empty() ? r : order[r];
    row.clear();
    for (spgemm::offset_t k = g.row_offsets[old]; k < g.row_offsets[old + 1]; ++k) {
      if (renamed[g.col_indices[k]] < r) row.push_back(renamed[g.col_indices[k]]);
    }
    std::sort(row.begin(), row.end());
    l.col_indices.insert(l.col_indices.end(), row.begin(), row.end());
    l.row_offsets.push_back(l.nnz());
  }
  l.values.assign(l.col_indices.size(), T(1));
  return l;
}

// The vertices of g by decreasing degree (ties: by number).
template <typename T>
std::vector<spgemm::index_t> by_decreasing_degree(const spgemm::csr_matrix<T>& g) {
  std::vector<spgemm::index_t> order(static_cast<std::size_t>(g.rows));
  for (std::size_t v = 0; v < order.size(); ++v) order[v] = static_cast<spgemm::index_t>(v);
  std::stable_sort(order.begin(), order.end(),
                   [&](spgemm::index_t x, spgemm::index_t y) { return g.row_length(x) > g.row_length(y); });
  return order;
}

}  // namespace bench
