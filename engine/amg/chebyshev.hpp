// The Chebyshev smoother's polynomial, as pyamg builds it: the polynomial
// with the roots of the Chebyshev polynomial of `degree` on [lower, upper],
// scaled to 1 at 0; its coefficients but the constant, negated, are p in
// x += p(M) r (applied by Horner's rule: h = c_0 r, h = c_k r + M h).
#pragma once

#include <vector>

namespace spgemm::amg {

// Highest power first, `degree` coefficients.
std::vector<double> chebyshev_coefficients(double lower, double upper, int degree);

}  // namespace spgemm::amg
