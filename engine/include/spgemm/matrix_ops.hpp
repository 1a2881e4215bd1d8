// What a graph algorithm does to matrices between its products, in
// GraphBLAS's terms: element-wise addition and multiplication, apply,
// select, reduce, scaling by a vector, top-k and row extraction. Each is a
// matrix_op that a backend runs on stored matrices (backend::run_op), so
// that a chain of products and these steps never leaves the device; the
// CPU implementation (cpu_run_op) is the reference of the GPU's.
//
// Values are the operands' own (float or double; the wider where two
// meet); boolean results are 1 or 0 of that type, as GraphBLAS's operators
// give them on floating types. A vector is a matrix of one row or one
// column.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "spgemm/csr.hpp"
#include "spgemm/semiring.hpp"

namespace spgemm {

// z = f(x).
enum class unary_op : std::uint8_t {
  identity,
  abs,
  ainv,  // -x
  minv,  // 1 / x
  lnot,  // x == 0, as 1 or 0
  one,   // 1
  sqrt,
  exp,
  log,
};

// C = A (op) B on the union of A's and B's entries (GraphBLAS's eWiseAdd):
// where only one has an entry, C has it unchanged.
struct ewise_add {
  binary_op op = binary_op::plus;
};

// C = A (op) B on the intersection of their entries (eWiseMult).
struct ewise_mult {
  binary_op op = binary_op::times;
};

// C = f(A), entry by entry, the structure unchanged.
struct apply_unary {
  unary_op op = unary_op::identity;
};

// C = A (op) s, or s (op) A where scalar_first: a binary operator with a
// scalar bound (GraphBLAS's apply with a bound scalar): pow with 2 squares
// every entry (the inflation of Markov clustering), times scales.
struct apply_scalar {
  binary_op op = binary_op::times;
  double scalar = 0;
  bool scalar_first = false;
};

// The entries select keeps, with its thunk k (GraphBLAS's GrB_select):
// tril j <= i + k, triu j >= i + k, diag j == i + k, offdiag j != i + k;
// the value selectors compare a_ij with k (value_ge keeps a_ij >= k:
// thresholds and pruning); rowle / rowgt i <= k / i > k, colle / colgt on j.
enum class selector : std::uint8_t {
  tril,
  triu,
  diag,
  offdiag,
  value_eq,
  value_ne,
  value_gt,
  value_ge,
  value_lt,
  value_le,
  rowle,
  rowgt,
  colle,
  colgt,
};

struct select_entries {
  selector which = selector::tril;
  double thunk = 0;
};

// The k largest entries of each row (or of each column), in their places;
// of equal values, those of smaller column (row) first.
struct top_k {
  std::int64_t k = 1;
  bool columns = false;
};

enum class reduce_axis : std::uint8_t {
  rows,     // a rows x 1 matrix: an entry for each row with entries
  columns,  // 1 x cols: an entry for each column with entries
  all,      // 1 x 1: an entry unless A has none
};

// Each row's, column's or all entries summed by the monoid (taken in the
// order of A's rows, then columns), or counted.
struct reduce {
  reduce_axis axis = reduce_axis::rows;
  monoid add = monoid::plus;
  bool count = false;  // the number of entries instead of their sum
};

// C = diag(v) A (rows: a_ij (op) v_i) or A diag(v) (columns: a_ij (op)
// v_j), v the second operand, a vector of rows(A) (cols(A)) entries; an
// entry of A whose element of v is absent is dropped, as in the product
// with diag(v).
struct scale {
  bool columns = false;
  binary_op op = binary_op::times;
};

// Rows `rows` of A, in that order (repeats allowed): |rows| x cols(A).
struct extract_rows {
  std::vector<std::int64_t> rows;
};

using matrix_op =
    std::variant<ewise_add, ewise_mult, apply_unary, apply_scalar, select_entries, top_k, reduce, scale, extract_rows>;

std::string_view to_string(unary_op op);
std::string_view to_string(selector s);
std::string_view to_string(reduce_axis a);
// Throw error(bad_input) listing the known names.
unary_op parse_unary_op(std::string_view name);
selector parse_selector(std::string_view name);
reduce_axis parse_reduce_axis(std::string_view name);

// "ewise_add plus", "apply_scalar pow 2", "select tril 0", ...
std::string describe(const matrix_op& op);
// 2 for ewise_add, ewise_mult and scale, else 1.
int operand_count(const matrix_op& op);

// The shape and value type of the op's result (nnz: a bound of it), after
// checking its operands (their number, shapes and the op's parameters);
// throws error(bad_input) naming what is wrong.
matrix_info result_bound(const matrix_op& op, const std::vector<matrix_info>& operands);

// The op on host matrices (operands: as operand_count says): the reference
// the GPU's implementation is checked against, and the CPU backend's.
any_csr cpu_run_op(const matrix_op& op, const std::vector<const any_csr*>& operands);

}  // namespace spgemm
