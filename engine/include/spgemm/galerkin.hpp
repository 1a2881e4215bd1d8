// Galerkin products, the coarse operators of multigrid: P^T A P (P fine x
// coarse) or P A P^T (P coarse x fine), written R A Q below (R = P^T, Q = P,
// or R = P, Q = P^T), as one call on a backend: the transpose of P by the
// backend's transpose, then two products in the cheaper association order,
// R (A Q) or (R A) Q, each held to its own estimate. Where A and P are made
// of dense blocks (elasticity), automatic runs the products by the block
// method (spgemm's planner).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "spgemm/backend.hpp"
#include "spgemm/multiply.hpp"

namespace spgemm {

enum class galerkin_form { pt_a_p, p_a_pt };
enum class galerkin_order {
  right_first,  // R (A Q): Bell, Dalton & Olson's order
  left_first,   // (R A) Q
};

std::string_view to_string(galerkin_order order);

// The estimated work of both orders (scalar products): the first product's
// estimate, and the second's from the first's bound of nnz spread evenly over
// its rows: R (A Q) costs about nnz(R) nnz(A Q) / rows(A Q) more, (R A) Q
// about nnz(R A) nnz(Q) / rows(Q). The cheaper wins; ties go to R (A Q).
struct galerkin_plan {
  galerkin_order order = galerkin_order::right_first;
  double right_first_work = 0;
  double left_first_work = 0;
};
galerkin_plan plan_galerkin(const matrix_info& r, const matrix_info& q, const memory_estimate& a_q,
                            const memory_estimate& r_a);

// What a Galerkin product gives: C, and what a numeric-only rerun needs (the
// transpose and the first product's structure).
struct galerkin_result {
  std::shared_ptr<stored_matrix> c;
  std::shared_ptr<stored_matrix> transpose;     // of P
  std::shared_ptr<stored_matrix> intermediate;  // A Q or R A
  galerkin_order order = galerkin_order::right_first;
  std::string methods;        // of the three calls, " + "-joined
  std::int64_t products = 0;  // scalar multiplications of both products
  std::size_t peak_bytes = 0; // the most held at once, by the calls' own counts
};

// Throws error(bad_input) unless A is square with as many rows as P has rows
// (P^T A P) or columns (P A P^T).
galerkin_result galerkin(backend& on, const stored_matrix& p, const stored_matrix& a, galerkin_form form,
                         const multiply_options& options, const cancel_token& cancel = {});
// The same product for operands whose values changed, patterns kept: both
// products numeric only on the structures `previous` holds (a galerkin() of
// operands with these patterns, same form and options), the transpose again.
galerkin_result galerkin_numeric(backend& on, const stored_matrix& p, const stored_matrix& a, galerkin_form form,
                                 const galerkin_result& previous, const multiply_options& options,
                                 const cancel_token& cancel = {});

}  // namespace spgemm
