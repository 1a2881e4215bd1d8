#include "core/recipes/multiply.hpp"

#include "core/matrices.hpp"
#include "core/recipes/panelled_multiply.hpp"
#include "core/recipes/steps.hpp"

namespace spgemmd::core {

outcome multiply_job(estimate_memo& memo, pin a, pin b, const spgemm::multiply_options& options, int priority,
                     std::shared_ptr<job>* out) {
  if (a->info.cols != b->info.rows) {
    return {status::invalid_argument, "cannot multiply A (" + shape(a->info) + ") by B (" + shape(b->info) +
                                          "): A's columns must equal B's rows"};
  }
  std::vector<pin> inputs;
  inputs.push_back(std::move(a));
  inputs.push_back(std::move(b));
  std::vector<job_step> steps;
  steps.push_back(multiply_step(memo, input(0), input(1), options));
  // Too large for a device in one piece: in row panels, over every device with room.
  steps.back().in_panels = [options](const std::optional<spgemm::memory_estimate>& whole) {
    return panelled_multiply_step(options, whole);
  };
  *out = make_job("multiply", std::string(spgemm::to_string(options.algo)), priority, std::move(inputs),
                  std::move(steps));
  return {};
}

}  // namespace spgemmd::core
