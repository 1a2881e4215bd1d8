#include "amg/chebyshev.hpp"

#include <cmath>

namespace spgemm::amg {

std::vector<double> chebyshev_coefficients(double lower, double upper, int degree) {
  const double pi = std::acos(-1.0);
  // The monic polynomial with the roots, highest power first (numpy.poly).
  std::vector<double> poly = {1.0};
  for (int k = 0; k < degree; ++k) {
    const double root = 0.5 * (upper - lower) * (1 + std::cos(pi * (k + 0.5) / degree)) + lower;
    std::vector<double> next(poly.size() + 1, 0.0);
    for (std::size_t i = 0; i < poly.size(); ++i) {
      next[i] += poly[i];
      next[i + 1] -= root * poly[i];
    }
    poly = next;
  }
  const double at_zero = poly.back();
  std::vector<double> out;
  for (std::size_t i = 0; i + 1 < poly.size(); ++i) out.push_back(-poly[i] / at_zero);
  return out;
}

}  // namespace spgemm::amg
