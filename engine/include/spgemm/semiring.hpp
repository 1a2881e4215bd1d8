// The operators of graph products, in GraphBLAS's terms: binary operators,
// monoids, and the semiring of a product C = A (+).(x) B, whose entry C(i,j)
// exists where at least one product A(i,k) (x) B(k,j) does and is their
// monoid sum (kept even where it equals the monoid's identity, as
// SuiteSparse:GraphBLAS keeps it).
//
// Values are the matrices' own (float or double); boolean results are 1 or 0
// of that type, as GraphBLAS's operators on floating types give them (LAND,
// LOR, LXOR, and ISEQ .. ISLE for the comparisons). plus_times is the default
// and the arithmetic product every method runs; the others run on the CPU
// backend and on the GPU methods that take a semiring (docs/graph.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace spgemm {

// z = f(x, y).
enum class binary_op : std::uint8_t {
  first,   // x
  second,  // y
  pair,    // 1 (GraphBLAS's PAIR, ONEB)
  plus,
  minus,   // x - y
  rminus,  // y - x
  times,
  div,     // x / y
  rdiv,    // y / x
  min,     // fmin: a NaN operand gives the other
  max,     // fmax
  pow,     // x to the power y
  land,    // (x != 0) && (y != 0)
  lor,     // (x != 0) || (y != 0)
  lxor,    // (x != 0) != (y != 0)
  eq,      // x == y, as 1 or 0 (GraphBLAS's ISEQ)
  ne,
  gt,
  ge,
  lt,
  le,
};

// An associative, commutative binary operator with an identity.
enum class monoid : std::uint8_t {
  plus,   // identity 0
  times,  // 1
  min,    // +inf
  max,    // -inf
  lor,    // 0
  land,   // 1
  lxor,   // 0
  any,    // any one of the values (the engine gives the last in the order of A's entries)
};

struct semiring {
  monoid add = monoid::plus;
  binary_op multiply = binary_op::times;

  bool operator==(const semiring& o) const { return add == o.add && multiply == o.multiply; }
  bool operator!=(const semiring& o) const { return !(*this == o); }
  bool is_plus_times() const { return add == monoid::plus && multiply == binary_op::times; }
};

std::string_view to_string(binary_op op);
std::string_view to_string(monoid m);
// "min_plus": the monoid's name, '_', the operator's name (GraphBLAS's
// naming: plus_times, min_plus, lor_land, plus_pair, ...).
std::string to_string(const semiring& s);

// Throw error(bad_input) listing the known names.
binary_op parse_binary_op(std::string_view name);
monoid parse_monoid(std::string_view name);
// Also checks it is a semiring the engine runs (check_semiring).
semiring parse_semiring(std::string_view name);

// Throws error(bad_input) where the engine does not run `s`: a logical
// monoid (lor, land, lxor) takes only an operator whose results are 1 or 0
// (land, lor, lxor, pair, the comparisons), so that a single product is the
// entry GraphBLAS gives.
void check_semiring(const semiring& s);

std::vector<std::string_view> binary_op_names();
std::vector<std::string_view> monoid_names();

}  // namespace spgemm
