// The recipe of a Galerkin product, the coarse operator of multigrid: P^T A P
// (P fine x coarse) or P A P^T (P coarse x fine), written R A Q. Three steps:
// the transpose of P, then two multiplies, each sized and admitted on its
// own, in the order the engine's estimates favour (spgemm/galerkin.hpp:
// R (A Q) or (R A) Q); the second runs numeric only on the structure of the
// last Galerkin product of the same matrices while that result is kept.
#pragma once

#include <memory>

#include "core/estimate_memo.hpp"
#include "core/job.hpp"
#include "core/outcome.hpp"

namespace spgemmd::core {

enum class galerkin_form { pt_a_p, p_a_pt };

// invalid_argument unless A is square with as many rows as P has rows
// (P^T A P) or columns (P A P^T).
outcome galerkin_job(estimate_memo& memo, galerkin_form form, pin p, pin a, const spgemm::multiply_options& options,
                     int priority, std::shared_ptr<job>* out);

}  // namespace spgemmd::core
