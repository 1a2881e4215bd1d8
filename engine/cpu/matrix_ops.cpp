// The matrix ops (spgemm/matrix_ops.hpp) on host matrices: the CPU
// backend's, and the reference of the GPU's. One pass over the rows for
// each op; top-k and reductions per column run on the transpose, so that a
// column is taken in the order of its rows, as the GPU takes it.
#include <algorithm>
#include <numeric>

#include "matrix_ops/op_functions.hpp"
#include "spgemm/errors.hpp"
#include "spgemm/matrix_ops.hpp"
#include "spgemm/reference.hpp"

namespace spgemm {
namespace {

template <typename T>
csr_matrix<T> as(const any_csr& m) {
  return std::visit([](const auto& x) { return convert_values<T>(x); }, m);
}

template <typename T>
csr_matrix<T> shaped(std::int64_t rows, std::int64_t cols) {
  csr_matrix<T> c;
  c.rows = rows;
  c.cols = cols;
  c.row_offsets.reserve(static_cast<std::size_t>(rows) + 1);
  return c;
}

// Entry by entry over the union (add) or intersection of A's and B's rows.
template <typename T>
csr_matrix<T> ewise(const csr_matrix<T>& a, const csr_matrix<T>& b, binary_op op, bool on_union) {
  csr_matrix<T> c = shaped<T>(a.rows, a.cols);
  for (std::int64_t r = 0; r < a.rows; ++r) {
    offset_t i = a.row_offsets[r], j = b.row_offsets[r];
    const offset_t i_end = a.row_offsets[r + 1], j_end = b.row_offsets[r + 1];
    const auto put = [&](index_t col, T v) {
      c.col_indices.push_back(col);
      c.values.push_back(v);
    };
    while (i < i_end || j < j_end) {
      const index_t ca = i < i_end ? a.col_indices[i] : std::numeric_limits<index_t>::max();
      const index_t cb = j < j_end ? b.col_indices[j] : std::numeric_limits<index_t>::max();
      if (ca == cb) {
        put(ca, ops::apply(op, a.values[i++], b.values[j++]));
      } else if (ca < cb) {
        if (on_union) put(ca, a.values[i]);
        ++i;
      } else {
        if (on_union) put(cb, b.values[j]);
        ++j;
      }
    }
    c.row_offsets.push_back(c.nnz());
  }
  return c;
}

template <typename T, typename F>
csr_matrix<T> map_values(csr_matrix<T> a, F f) {
  for (T& v : a.values) v = f(v);
  return a;
}

// The entries of A for which keep(i, j, v) holds.
template <typename T, typename Keep>
csr_matrix<T> keep_if(const csr_matrix<T>& a, Keep keep) {
  csr_matrix<T> c = shaped<T>(a.rows, a.cols);
  for (std::int64_t r = 0; r < a.rows; ++r) {
    for (offset_t k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k) {
      if (keep(r, a.col_indices[k], a.values[k], k)) {
        c.col_indices.push_back(a.col_indices[k]);
        c.values.push_back(a.values[k]);
      }
    }
    c.row_offsets.push_back(c.nnz());
  }
  return c;
}

// The k largest of each row; of equal values the smaller column first.
template <typename T>
csr_matrix<T> top_k_rows(const csr_matrix<T>& a, std::int64_t k) {
  std::vector<char> kept(a.values.size(), 0);
  std::vector<offset_t> order;
  for (std::int64_t r = 0; r < a.rows; ++r) {
    order.resize(static_cast<std::size_t>(a.row_length(r)));
    std::iota(order.begin(), order.end(), a.row_offsets[r]);
    std::stable_sort(order.begin(), order.end(), [&](offset_t x, offset_t y) { return a.values[x] > a.values[y]; });
    for (std::size_t i = 0; i < order.size() && static_cast<std::int64_t>(i) < k; ++i) kept[order[i]] = 1;
  }
  return keep_if(a, [&](std::int64_t, index_t, T, offset_t at) { return kept[at] != 0; });
}

// Each row summed by the monoid in its order (or counted): a rows x 1 matrix.
template <typename T>
csr_matrix<T> reduce_rows(const csr_matrix<T>& a, monoid add, bool count) {
  csr_matrix<T> c = shaped<T>(a.rows, 1);
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const offset_t begin = a.row_offsets[r], end = a.row_offsets[r + 1];
    if (begin < end) {
      T acc = count ? T(end - begin) : a.values[begin];
      for (offset_t k = begin + 1; !count && k < end; ++k) acc = ops::apply(add, acc, a.values[k]);
      c.col_indices.push_back(0);
      c.values.push_back(acc);
    }
    c.row_offsets.push_back(c.nnz());
  }
  return c;
}

// A rows x 1 matrix as the 1 x rows matrix of the same elements.
template <typename T>
csr_matrix<T> as_row(const csr_matrix<T>& column) {
  csr_matrix<T> c = shaped<T>(1, column.rows);
  for (std::int64_t r = 0; r < column.rows; ++r) {
    if (column.row_length(r) > 0) {
      c.col_indices.push_back(static_cast<index_t>(r));
      c.values.push_back(column.values[column.row_offsets[r]]);
    }
  }
  c.row_offsets.push_back(c.nnz());
  return c;
}

template <typename T>
csr_matrix<T> reduced(const csr_matrix<T>& a, const reduce& o) {
  switch (o.axis) {
    case reduce_axis::rows: return reduce_rows(a, o.add, o.count);
    case reduce_axis::columns: return as_row(reduce_rows(cpu_transpose(a), o.add, o.count));
    case reduce_axis::all: {
      // The rows' results summed in row order (counts: added).
      const csr_matrix<T> rows = reduce_rows(a, o.add, o.count);
      csr_matrix<T> c = reduce_rows(as_row(rows), o.count ? monoid::plus : o.add, false);
      c.cols = 1;
      return c;
    }
  }
  return a;
}

// a_ij (op) v_i (rows) or a_ij (op) v_j (columns); entries without an element of v dropped.
template <typename T>
csr_matrix<T> scaled(const csr_matrix<T>& a, const csr_matrix<T>& v, const scale& o) {
  const std::int64_t n = o.columns ? a.cols : a.rows;
  std::vector<T> element(static_cast<std::size_t>(n));
  std::vector<char> present(static_cast<std::size_t>(n), 0);
  for (std::int64_t r = 0; r < v.rows; ++r) {
    for (offset_t k = v.row_offsets[r]; k < v.row_offsets[r + 1]; ++k) {
      const std::int64_t at = v.rows == 1 ? v.col_indices[k] : r;
      element[at] = v.values[k];
      present[at] = 1;
    }
  }
  csr_matrix<T> c = keep_if(a, [&](std::int64_t i, index_t j, T, offset_t) { return present[o.columns ? j : i] != 0; });
  for (std::int64_t i = 0; i < c.rows; ++i) {
    for (offset_t k = c.row_offsets[i]; k < c.row_offsets[i + 1]; ++k) {
      c.values[k] = ops::apply(o.op, c.values[k], element[o.columns ? c.col_indices[k] : i]);
    }
  }
  return c;
}

template <typename T>
csr_matrix<T> rows_of(const csr_matrix<T>& a, const std::vector<std::int64_t>& rows) {
  csr_matrix<T> c = shaped<T>(static_cast<std::int64_t>(rows.size()), a.cols);
  for (const std::int64_t r : rows) {
    c.col_indices.insert(c.col_indices.end(), a.col_indices.begin() + a.row_offsets[r],
                         a.col_indices.begin() + a.row_offsets[r + 1]);
    c.values.insert(c.values.end(), a.values.begin() + a.row_offsets[r], a.values.begin() + a.row_offsets[r + 1]);
    c.row_offsets.push_back(c.nnz());
  }
  return c;
}

template <typename T>
csr_matrix<T> run_typed(const matrix_op& op, const std::vector<const any_csr*>& operands) {
  const csr_matrix<T> a = as<T>(*operands[0]);
  return std::visit(
      [&](const auto& o) -> csr_matrix<T> {
        using O = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<O, ewise_add>) {
          return ewise(a, as<T>(*operands[1]), o.op, true);
        } else if constexpr (std::is_same_v<O, ewise_mult>) {
          return ewise(a, as<T>(*operands[1]), o.op, false);
        } else if constexpr (std::is_same_v<O, apply_unary>) {
          return map_values(a, [&](T v) { return ops::apply(o.op, v); });
        } else if constexpr (std::is_same_v<O, apply_scalar>) {
          return map_values(a, [&](T v) { return ops::apply(o, v); });
        } else if constexpr (std::is_same_v<O, select_entries>) {
          return keep_if(a, [&](std::int64_t i, index_t j, T v, offset_t) { return ops::selects(o, i, j, v); });
        } else if constexpr (std::is_same_v<O, top_k>) {
          return o.columns ? cpu_transpose(top_k_rows(cpu_transpose(a), o.k)) : top_k_rows(a, o.k);
        } else if constexpr (std::is_same_v<O, reduce>) {
          return reduced(a, o);
        } else if constexpr (std::is_same_v<O, scale>) {
          return scaled(a, as<T>(*operands[1]), o);
        } else {
          return rows_of(a, o.rows);
        }
      },
      op);
}

}  // namespace

any_csr cpu_run_op(const matrix_op& op, const std::vector<const any_csr*>& operands) {
  std::vector<matrix_info> infos;
  for (const any_csr* m : operands) infos.push_back(info_of(*m));
  const matrix_info c = result_bound(op, infos);
  if (c.type == value_type::f32) return run_typed<float>(op, operands);
  return run_typed<double>(op, operands);
}

}  // namespace spgemm
