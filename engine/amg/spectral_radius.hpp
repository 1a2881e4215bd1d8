// rho(D^-1 A) for the prolongator's and the smoothers' weights: Lanczos steps
// on the symmetric D^-1/2 A D^-1/2 (the same eigenvalues), then the largest
// eigenvalue of the tridiagonal matrix by bisection. A few steps give rho to
// a few percent from below, as pyamg's Arnoldi estimate does. The steps are
// operations::lanczos (its portable form is defined in spectral_radius.cpp; the
// GPU backend keeps the scalars on the device).
#pragma once

#include <vector>

#include "amg/operations.hpp"

namespace spgemm::amg {

// A: symmetric, positive diagonal; `inverse_sqrt_diagonal`: |a_ii|^-1/2.
double spectral_radius(operations& ops, const stored_matrix& a, const vector& inverse_sqrt_diagonal, int steps);

// The largest eigenvalue of the symmetric tridiagonal matrix with diagonal
// `alpha` and off-diagonal `beta` (beta.size() == alpha.size() - 1).
double largest_eigenvalue(const std::vector<double>& alpha, const std::vector<double>& beta);

}  // namespace spgemm::amg
