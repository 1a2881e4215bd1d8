#include "amg/spectral_radius.hpp"

#include <algorithm>
#include <cmath>

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

void operations::lanczos(const stored_matrix& a, const vector& s, int steps, std::vector<double>& alpha,
                         std::vector<double>& beta) {
  alpha.clear();
  beta.clear();
  const std::int64_t n = s.size();
  const std::int64_t last = std::min<std::int64_t>(steps, n);
  if (last < 1) return;
  auto v = hashed(n);
  auto previous = zeros(n);
  auto u = zeros(n);
  auto w = zeros(n);
  axpby(0.0, *v, 1.0 / std::sqrt(dot(*v, *v)), *v);
  double last_beta = 0;
  for (std::int64_t k = 0; k < last; ++k) {
    scaled_axpby(1.0, s, *v, 0.0, *u);  // u = S v
    spmv(a, *u, 1.0, 0.0, *w);          // w = A S v
    scaled_axpby(1.0, s, *w, 0.0, *w);  // w = S A S v
    const double a_k = dot(*w, *v);
    alpha.push_back(a_k);
    if (k + 1 == last) break;
    axpby(-a_k, *v, 1.0, *w);
    if (k > 0) axpby(-last_beta, *previous, 1.0, *w);
    const double b_k = std::sqrt(std::max(dot(*w, *w), 0.0));
    if (b_k <= 1e-12 * std::abs(a_k)) break;  // an invariant subspace
    beta.push_back(b_k);
    last_beta = b_k;
    std::swap(previous, v);
    axpby(1.0 / b_k, *w, 0.0, *v);
  }
}

double spectral_radius(operations& ops, const stored_matrix& a, const vector& s, int steps) {
  std::vector<double> alpha, beta;
  ops.lanczos(a, s, steps, alpha, beta);
  return largest_eigenvalue(alpha, beta);
}

}  // namespace spgemm::amg
