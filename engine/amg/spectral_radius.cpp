#include "amg/spectral_radius.hpp"

#include <algorithm>
#include <cmath>

#include "amg/independent_set_rule.hpp"

namespace spgemm::amg {
namespace {

// Eigenvalues of the tridiagonal matrix below x (Sturm sequence).
std::int64_t count_below(const std::vector<double>& alpha, const std::vector<double>& beta, double x) {
  std::int64_t count = 0;
  double d = 1;
  for (std::size_t i = 0; i < alpha.size(); ++i) {
    const double b2 = i > 0 ? beta[i - 1] * beta[i - 1] : 0.0;
    d = alpha[i] - x - (i > 0 ? b2 / d : 0.0);
    if (d == 0) d = 1e-300;
    if (d < 0) ++count;
  }
  return count;
}

}  // namespace

double largest_eigenvalue(const std::vector<double>& alpha, const std::vector<double>& beta) {
  if (alpha.empty()) return 0;
  // Gershgorin bounds, then bisection for the point with every eigenvalue below.
  double lo = alpha[0], hi = alpha[0];
  for (std::size_t i = 0; i < alpha.size(); ++i) {
    const double radius = (i > 0 ? std::abs(beta[i - 1]) : 0.0) + (i + 1 < alpha.size() ? std::abs(beta[i]) : 0.0);
    lo = std::min(lo, alpha[i] - radius);
    hi = std::max(hi, alpha[i] + radius);
  }
  const auto n = static_cast<std::int64_t>(alpha.size());
  for (int it = 0; it < 200 && hi - lo > 1e-14 * std::max(std::abs(lo), std::abs(hi)); ++it) {
    const double mid = 0.5 * (lo + hi);
    if (count_below(alpha, beta, mid) == n) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return hi;
}

double spectral_radius(operations& ops, const stored_matrix& a, const vector& s, int steps) {
  const std::int64_t n = s.size();
  if (n == 0) return 0;
  // A start with every eigenvector in it: hashed values in [-1, 1).
  std::vector<double> start(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) start[i] = node_priority(i) * (2.0 / 4294967296.0) - 1.0;
  auto v = ops.upload(start.data(), n);
  auto previous = ops.zeros(n);
  auto u = ops.zeros(n);
  auto w = ops.zeros(n);
  ops.axpby(0.0, *v, 1.0 / std::sqrt(ops.dot(*v, *v)), *v);
  std::vector<double> alpha, beta;
  double last_beta = 0;
  for (int k = 0; k < std::min<std::int64_t>(steps, n); ++k) {
    ops.scaled_axpby(1.0, s, *v, 0.0, *u);  // u = S v
    ops.spmv(a, *u, 1.0, 0.0, *w);          // w = A S v
    ops.scaled_axpby(1.0, s, *w, 0.0, *w);  // w = S A S v
    const double a_k = ops.dot(*w, *v);
    alpha.push_back(a_k);
    ops.axpby(-a_k, *v, 1.0, *w);
    if (k > 0) ops.axpby(-last_beta, *previous, 1.0, *w);
    const double b_k = std::sqrt(std::max(ops.dot(*w, *w), 0.0));
    if (b_k <= 1e-12 * std::abs(a_k) || k + 1 == std::min<std::int64_t>(steps, n)) break;  // an invariant subspace
    beta.push_back(b_k);
    last_beta = b_k;
    std::swap(previous, v);
    ops.axpby(1.0 / b_k, *w, 0.0, *v);
  }
  return largest_eigenvalue(alpha, beta);
}

}  // namespace spgemm::amg
