// The element functions of the matrix ops (spgemm/matrix_ops.hpp) as the
// CPU implementation and the kernels apply them alike (host and device):
// unary operators and the selectors. The binary operators and monoids are
// semiring/semiring_ops.hpp's.
#pragma once

#include <cmath>
#include <cstdint>

#include "planner/host_device.hpp"
#include "semiring/semiring_ops.hpp"
#include "spgemm/matrix_ops.hpp"

namespace spgemm::ops {

template <typename T>
SPGEMM_HOST_DEVICE inline T apply(unary_op op, T x) {
  switch (op) {
    case unary_op::identity: return x;
    case unary_op::abs: return std::fabs(x);
    case unary_op::ainv: return -x;
    case unary_op::minv: return T(1) / x;
    case unary_op::lnot: return truth<T>(x == T(0));
    case unary_op::one: return T(1);
    case unary_op::sqrt: return std::sqrt(x);
    case unary_op::exp: return std::exp(x);
    case unary_op::log: return std::log(x);
  }
  return x;
}

// a_ij (op) s, or s (op) a_ij.
template <typename T>
SPGEMM_HOST_DEVICE inline T apply(const apply_scalar& a, T x) {
  const T s = static_cast<T>(a.scalar);
  return a.scalar_first ? apply(a.op, s, x) : apply(a.op, x, s);
}

// Whether select keeps a_ij = v.
template <typename T>
SPGEMM_HOST_DEVICE inline bool selects(const select_entries& s, std::int64_t i, std::int64_t j, T v) {
  const auto k = static_cast<std::int64_t>(s.thunk);
  const T t = static_cast<T>(s.thunk);
  switch (s.which) {
    case selector::tril: return j <= i + k;
    case selector::triu: return j >= i + k;
    case selector::diag: return j == i + k;
    case selector::offdiag: return j != i + k;
    case selector::value_eq: return v == t;
    case selector::value_ne: return v != t;
    case selector::value_gt: return v > t;
    case selector::value_ge: return v >= t;
    case selector::value_lt: return v < t;
    case selector::value_le: return v <= t;
    case selector::rowle: return i <= k;
    case selector::rowgt: return i > k;
    case selector::colle: return j <= k;
    case selector::colgt: return j > k;
  }
  return false;
}

}  // namespace spgemm::ops
