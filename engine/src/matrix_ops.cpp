#include "spgemm/matrix_ops.hpp"

#include <array>
#include <sstream>
#include <utility>

#include "spgemm/errors.hpp"

namespace spgemm {
namespace {

constexpr std::array<std::pair<unary_op, std::string_view>, 9> unary_names = {{
    {unary_op::identity, "identity"},
    {unary_op::abs, "abs"},
    {unary_op::ainv, "ainv"},
    {unary_op::minv, "minv"},
    {unary_op::lnot, "lnot"},
    {unary_op::one, "one"},
    {unary_op::sqrt, "sqrt"},
    {unary_op::exp, "exp"},
    {unary_op::log, "log"},
}};

constexpr std::array<std::pair<selector, std::string_view>, 14> selector_names = {{
    {selector::tril, "tril"},       {selector::triu, "triu"},         {selector::diag, "diag"},
    {selector::offdiag, "offdiag"}, {selector::value_eq, "valueeq"},  {selector::value_ne, "valuene"},
    {selector::value_gt, "valuegt"}, {selector::value_ge, "valuege"}, {selector::value_lt, "valuelt"},
    {selector::value_le, "valuele"}, {selector::rowle, "rowle"},      {selector::rowgt, "rowgt"},
    {selector::colle, "colle"},     {selector::colgt, "colgt"},
}};

constexpr std::array<std::pair<reduce_axis, std::string_view>, 3> axis_names = {{
    {reduce_axis::rows, "rows"},
    {reduce_axis::columns, "columns"},
    {reduce_axis::all, "all"},
}};

template <typename Table, typename Value>
std::string_view name_in(const Table& table, Value v) {
  for (const auto& entry : table)
    if (entry.first == v) return entry.second;
  return "unknown";
}

template <typename Table>
auto parse_in(const Table& table, std::string_view name, const char* what) {
  for (const auto& entry : table)
    if (entry.second == name) return entry.first;
  std::string known;
  for (const auto& entry : table) known += (known.empty() ? "" : ", ") + std::string(entry.second);
  throw_bad_input("unknown " + std::string(what) + " '" + std::string(name) + "' (known: " + known + ")");
}

std::string shape(const matrix_info& m) { return std::to_string(m.rows) + " x " + std::to_string(m.cols); }

value_type wider(value_type a, value_type b) {
  return a == value_type::f64 || b == value_type::f64 ? value_type::f64 : value_type::f32;
}

// Whether `v` is a vector of n elements (n x 1 or 1 x n).
bool is_vector_of(const matrix_info& v, std::int64_t n) {
  return (v.rows == n && v.cols == 1) || (v.rows == 1 && v.cols == n);
}

}  // namespace

std::string_view to_string(unary_op op) { return name_in(unary_names, op); }
std::string_view to_string(selector s) { return name_in(selector_names, s); }
std::string_view to_string(reduce_axis a) { return name_in(axis_names, a); }
unary_op parse_unary_op(std::string_view name) { return parse_in(unary_names, name, "unary operator"); }
selector parse_selector(std::string_view name) { return parse_in(selector_names, name, "selector"); }
reduce_axis parse_reduce_axis(std::string_view name) { return parse_in(axis_names, name, "reduction axis"); }

std::string describe(const matrix_op& op) {
  std::ostringstream out;
  std::visit(
      [&](const auto& o) {
        using O = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<O, ewise_add>) {
          out << "ewise_add " << to_string(o.op);
        } else if constexpr (std::is_same_v<O, ewise_mult>) {
          out << "ewise_mult " << to_string(o.op);
        } else if constexpr (std::is_same_v<O, apply_unary>) {
          out << "apply " << to_string(o.op);
        } else if constexpr (std::is_same_v<O, apply_scalar>) {
          out << "apply " << to_string(o.op) << (o.scalar_first ? " scalar first " : " ") << o.scalar;
        } else if constexpr (std::is_same_v<O, select_entries>) {
          out << "select " << to_string(o.which) << " " << o.thunk;
        } else if constexpr (std::is_same_v<O, top_k>) {
          out << "top_k " << o.k << (o.columns ? " per column" : " per row");
        } else if constexpr (std::is_same_v<O, reduce>) {
          out << "reduce " << to_string(o.axis) << " " << (o.count ? "count" : to_string(o.add));
        } else if constexpr (std::is_same_v<O, scale>) {
          out << "scale " << (o.columns ? "columns " : "rows ") << to_string(o.op);
        } else {
          out << "extract_rows " << o.rows.size();
        }
      },
      op);
  return out.str();
}

int operand_count(const matrix_op& op) {
  return std::holds_alternative<ewise_add>(op) || std::holds_alternative<ewise_mult>(op) ||
                 std::holds_alternative<scale>(op)
             ? 2
             : 1;
}

matrix_info result_bound(const matrix_op& op, const std::vector<matrix_info>& operands) {
  const int n = operand_count(op);
  if (static_cast<int>(operands.size()) != n) {
    throw_bad_input(describe(op) + " takes " + std::to_string(n) + " operand(s), got " +
                    std::to_string(operands.size()));
  }
  const matrix_info& a = operands[0];
  matrix_info c{a.rows, a.cols, a.nnz, a.type};
  std::visit(
      [&](const auto& o) {
        using O = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<O, ewise_add> || std::is_same_v<O, ewise_mult>) {
          const matrix_info& b = operands[1];
          if (a.rows != b.rows || a.cols != b.cols) {
            throw_bad_input(describe(op) + " needs A and B of one shape; got A (" + shape(a) + ") and B (" + shape(b) +
                            ")");
          }
          c.type = wider(a.type, b.type);
          c.nnz = std::is_same_v<O, ewise_add> ? a.nnz + b.nnz : std::min(a.nnz, b.nnz);
        } else if constexpr (std::is_same_v<O, top_k>) {
          if (o.k < 0) throw_bad_input("top_k needs k >= 0; got " + std::to_string(o.k));
          c.nnz = std::min(a.nnz, o.k * (o.columns ? a.cols : a.rows));
        } else if constexpr (std::is_same_v<O, reduce>) {
          if (o.axis == reduce_axis::rows) {
            c = {a.rows, 1, std::min(a.rows, a.nnz), a.type};
          } else if (o.axis == reduce_axis::columns) {
            c = {1, a.cols, std::min(a.cols, a.nnz), a.type};
          } else {
            c = {1, 1, std::min<std::int64_t>(1, a.nnz), a.type};
          }
        } else if constexpr (std::is_same_v<O, scale>) {
          const std::int64_t length = o.columns ? a.cols : a.rows;
          if (!is_vector_of(operands[1], length)) {
            throw_bad_input(describe(op) + " needs a vector of " + std::to_string(length) + " elements (" +
                            std::to_string(length) + " x 1 or 1 x " + std::to_string(length) + "); got " +
                            shape(operands[1]));
          }
        } else if constexpr (std::is_same_v<O, extract_rows>) {
          for (const std::int64_t r : o.rows) {
            if (r < 0 || r >= a.rows) {
              throw_bad_input("extract_rows: row " + std::to_string(r) + " is not a row of A (" + shape(a) + ")");
            }
          }
          // Its entries are those of the rows taken: the backend counts them.
          c.rows = static_cast<std::int64_t>(o.rows.size());
          c.nnz = 0;
        }
      },
      op);
  return c;
}

}  // namespace spgemm
