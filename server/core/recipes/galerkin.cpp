#include "core/recipes/galerkin.hpp"

#include "core/matrices.hpp"
#include "core/recipes/steps.hpp"
#include "spgemm/galerkin.hpp"

namespace spgemmd::core {

namespace {

// What the steps share: the order the second chose.
struct galerkin_state {
  spgemm::galerkin_order order = spgemm::galerkin_order::right_first;
};

}  // namespace

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
  // Intermediate 0 = P^T. R A Q: R = P^T, Q = P (P^T A P), or R = P, Q = P^T.
  const operand r = ptap ? intermediate(0) : input(0);
  const operand q = ptap ? input(0) : intermediate(0);
  auto state = std::make_shared<galerkin_state>();
  std::vector<job_step> steps;
  steps.push_back(transpose_step(0));

  // Intermediate 1: A Q or R A, whichever order the estimates favour.
  job_step first;
  first.what = "multiply";
  first.estimate = [=](job& j, spgemm::backend& b) {
    const spgemm::memory_estimate a_q = b.estimate_multiply(stored(j, input(1)), stored(j, q), options);
    const spgemm::memory_estimate r_a = b.estimate_multiply(stored(j, r), stored(j, input(1)), options);
    state->order = spgemm::plan_galerkin(stored(j, r).info(), stored(j, q).info(), a_q, r_a).order;
    return state->order == spgemm::galerkin_order::right_first ? a_q : r_a;
  };
  first.run = [=](job& j, spgemm::backend& b) {
    const bool right = state->order == spgemm::galerkin_order::right_first;
    const steady::time_point started = steady::now();
    auto c = right ? b.multiply(stored(j, input(1)), stored(j, q), options, j.step_estimate, j.cancel)
                   : b.multiply(stored(j, r), stored(j, input(1)), options, j.step_estimate, j.cancel);
    note_engine(j, started);
    const std::size_t held = intermediate_bytes(j);
    j.temps.push_back(std::move(c));
    return held + j.temps.back()->info().bytes();
  };
  steps.push_back(std::move(first));

  // The product: R (A Q) or (R A) Q; numeric only on the structure of the
  // last Galerkin product of these matrices while it is kept (its structure
  // does not depend on the order).
  auto key = [=](const job& j) {
    const cache_entry& pe = *j.inputs[0];
    return estimate_memo::key(pe.tenant, std::string(ptap ? "galerkin PtAP " : "galerkin PAPt ") + pe.handle,
                              j.inputs[1]->handle, j.device, options);
  };
  job_step second;
  second.what = "multiply";
  second.estimate = [=](job& j, spgemm::backend& b) {
    const bool right = state->order == spgemm::galerkin_order::right_first;
    return right ? b.estimate_multiply(stored(j, r), stored(j, intermediate(1)), options)
                 : b.estimate_multiply(stored(j, intermediate(1)), stored(j, q), options);
  };
  second.run = [=, &memo](job& j, spgemm::backend& b) {
    const bool right = state->order == spgemm::galerkin_order::right_first;
    const spgemm::stored_matrix& x = right ? stored(j, r) : stored(j, intermediate(1));
    const spgemm::stored_matrix& y = right ? stored(j, intermediate(1)) : stored(j, q);
    const std::string k = key(j);
    auto known = memo.find(k);
    if (!known) {
      memo.put(k, {}, {j.inputs[0].watch(), j.inputs[1].watch()});  // a slot for what it gives
      known = memo.find(k);
    }
    auto c = product_of(j, b, x, y, options, known->structure);
    memo.note_result(k, c);
    const std::size_t held = intermediate_bytes(j);
    j.temps.push_back(std::move(c));
    return held + j.temps.back()->info().bytes();
  };
  steps.push_back(std::move(second));
  *out = make_job("galerkin", std::string(spgemm::to_string(options.algo)), priority, std::move(inputs),
                  std::move(steps));
  return {};
}

}  // namespace spgemmd::core
