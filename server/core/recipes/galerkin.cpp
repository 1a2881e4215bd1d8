#include "core/recipes/galerkin.hpp"

#include "core/matrices.hpp"
#include "core/recipes/steps.hpp"

namespace spgemmd::core {

outcome galerkin_job(estimate_memo& memo, galerkin_form form, pin p, pin a, const spgemm::multiply_options& options,
                     int priority, std::shared_ptr<job>* out) {
  const bool ptap = form == galerkin_form::pt_a_p;
  const int64_t fine = ptap ? p->info.rows : p->info.cols;
  if (a->info.rows != a->info.cols || a->info.rows != fine) {
    return {status::invalid_argument,
            std::string(ptap ? "P^T A P" : "P A P^T") + " needs a square A with as many rows as P has " +
                (ptap ? "rows" : "columns") + "; got A (" + shape(a->info) + ") and P (" + shape(p->info) + ")"};
  }
  std::vector<pin> inputs;
  inputs.push_back(std::move(p));  // input 0
  inputs.push_back(std::move(a));  // input 1
  // Intermediate 0 = P^T; intermediate 1 = A P (or A P^T); then the product.
  std::vector<job_step> steps;
  steps.push_back(transpose_step(0));
  if (ptap) {
    steps.push_back(multiply_step(memo, input(1), input(0), options));                // A P
    steps.push_back(multiply_step(memo, intermediate(0), intermediate(1), options));  // P^T (A P)
  } else {
    steps.push_back(multiply_step(memo, input(1), intermediate(0), options));  // A P^T
    steps.push_back(multiply_step(memo, input(0), intermediate(1), options));  // P (A P^T)
  }
  *out = make_job("galerkin", std::string(spgemm::to_string(options.algo)), priority, std::move(inputs),
                  std::move(steps));
  return {};
}

}  // namespace spgemmd::core
