// The operators of spgemm/semiring.hpp as functions the CPU code and the
// kernels apply alike (host and device), and the two semirings the methods
// are instantiated for: plus_times_ops, the arithmetic product at compile
// time (the methods' plus-times kernels are those they always were), and
// semiring_ops, any semiring as data, its operators chosen per call by a
// switch that every thread of a kernel takes the same way.
//
// A method accumulates an entry as add(identity, p1), add(.., p2), ...
// (tables cleared to the identity) or as p1, add(p1, p2), ... (the CPU
// reference): the same values, since for every monoid the engine runs
// add(identity, p) == p (check_semiring keeps the logical monoids to
// operators whose results are 1 or 0; for plus, 0 + -0 is +0, which
// compares equal).
#pragma once

#include <cmath>

#include "planner/host_device.hpp"
#include "spgemm/semiring.hpp"

namespace spgemm::ops {

template <typename T>
SPGEMM_HOST_DEVICE inline T truth(bool b) {
  return b ? T(1) : T(0);
}

template <typename T>
SPGEMM_HOST_DEVICE inline T apply(binary_op op, T x, T y) {
  switch (op) {
    case binary_op::first: return x;
    case binary_op::second: return y;
    case binary_op::pair: return T(1);
    case binary_op::plus: return x + y;
    case binary_op::minus: return x - y;
    case binary_op::rminus: return y - x;
    case binary_op::times: return x * y;
    case binary_op::div: return x / y;
    case binary_op::rdiv: return y / x;
    case binary_op::min: return std::fmin(x, y);
    case binary_op::max: return std::fmax(x, y);
    // The square rounded once, as the host's pow gives it (CUDA's pow may be 1-2 ulp off).
    case binary_op::pow: return y == T(2) ? x * x : std::pow(x, y);
    case binary_op::land: return truth<T>(x != T(0) && y != T(0));
    case binary_op::lor: return truth<T>(x != T(0) || y != T(0));
    case binary_op::lxor: return truth<T>((x != T(0)) != (y != T(0)));
    case binary_op::eq: return truth<T>(x == y);
    case binary_op::ne: return truth<T>(x != y);
    case binary_op::gt: return truth<T>(x > y);
    case binary_op::ge: return truth<T>(x >= y);
    case binary_op::lt: return truth<T>(x < y);
    case binary_op::le: return truth<T>(x <= y);
  }
  return x;
}

template <typename T>
SPGEMM_HOST_DEVICE inline T apply(monoid m, T x, T y) {
  switch (m) {
    case monoid::plus: return x + y;
    case monoid::times: return x * y;
    case monoid::min: return std::fmin(x, y);
    case monoid::max: return std::fmax(x, y);
    case monoid::lor: return truth<T>(x != T(0) || y != T(0));
    case monoid::land: return truth<T>(x != T(0) && y != T(0));
    case monoid::lxor: return truth<T>((x != T(0)) != (y != T(0)));
    case monoid::any: return y;
  }
  return x;
}

template <typename T>
SPGEMM_HOST_DEVICE inline T identity(monoid m) {
  switch (m) {
    case monoid::times:
    case monoid::land: return T(1);
    case monoid::min: return static_cast<T>(INFINITY);
    case monoid::max: return -static_cast<T>(INFINITY);
    default: return T(0);
  }
}

// C = A * B over (+, *).
struct plus_times_ops {
  template <typename T>
  SPGEMM_HOST_DEVICE T add(T x, T y) const {
    return x + y;
  }
  template <typename T>
  SPGEMM_HOST_DEVICE T mul(T x, T y) const {
    return x * y;
  }
  template <typename T>
  SPGEMM_HOST_DEVICE T identity() const {
    return T(0);
  }
};

// Any semiring the engine runs (check_semiring), as data.
struct semiring_ops {
  monoid add_op = monoid::plus;
  binary_op mul_op = binary_op::times;

  semiring_ops() = default;
  explicit semiring_ops(const semiring& s) : add_op(s.add), mul_op(s.multiply) {}

  template <typename T>
  SPGEMM_HOST_DEVICE T add(T x, T y) const {
    return apply(add_op, x, y);
  }
  template <typename T>
  SPGEMM_HOST_DEVICE T mul(T x, T y) const {
    return apply(mul_op, x, y);
  }
  template <typename T>
  SPGEMM_HOST_DEVICE T identity() const {
    return ops::identity<T>(add_op);
  }
};

// Calls f(plus_times_ops{}) for plus-times, else f(semiring_ops(s)).
template <typename F>
decltype(auto) with_semiring(const semiring& s, F&& f) {
  if (s.is_plus_times()) return f(plus_times_ops{});
  return f(semiring_ops(s));
}

}  // namespace spgemm::ops
