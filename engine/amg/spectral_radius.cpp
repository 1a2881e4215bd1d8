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

double spectral_radius(operations& ops, const stored_matrix& a, const vector& s, int steps) {
  std::vector<double> alpha, beta;
  ops.lanczos(a, s, steps, alpha, beta);
  return largest_eigenvalue(alpha, beta);
}

}  // namespace spgemm::amg
