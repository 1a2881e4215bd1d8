#include "core/recipes/transpose.hpp"

#include "core/recipes/steps.hpp"

namespace spgemmd::core {

std::shared_ptr<job> transpose_job(pin a) {
  std::vector<pin> inputs;
  inputs.push_back(std::move(a));
  std::vector<job_step> steps;
  steps.push_back(transpose_step(0));
  return make_job("transpose", "transpose", 0, std::move(inputs), std::move(steps));
}

}  // namespace spgemmd::core
