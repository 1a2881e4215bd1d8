// The recipe of a product C = A B: one multiply step, computed in row panels
// where it can never fit its device in one piece (recipes/panelled_multiply).
#pragma once

#include <memory>

#include "core/estimate_memo.hpp"
#include "core/job.hpp"
#include "core/outcome.hpp"

namespace spgemmd::core {

// invalid_argument where A's columns differ from B's rows.
outcome multiply_job(estimate_memo& memo, pin a, pin b, const spgemm::multiply_options& options, int priority,
                     std::shared_ptr<job>* out);

}  // namespace spgemmd::core
