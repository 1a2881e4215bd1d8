// The multiply step in row panels: C = A B for a product that can never fit
// its device in one piece (its inputs or its estimate pass the device's
// budget). A is cut into row panels sized from the work of each row so that
// each panel fits with its workspace; the panels are computed on every device
// with room (B copied to each, peer-to-peer), each moved off its device while
// the next computes: streamed to the client in row order, or gathered in host
// memory for a kept result (then a handle like any other, on the host).
// docs/scaling.md says more.
#pragma once

#include <optional>

#include "core/job.hpp"
#include "spgemm/multiply.hpp"

namespace spgemmd::core {

// The step for inputs 0 (A) and 1 (B) of its job, and 2 (M) where `how`
// masks the product: C<M> = A B, or C<!M>, M's rows cut with A's. `whole`:
// the product's estimate in one piece, where it was made (its method runs
// every panel).
job_step panelled_multiply_step(const spgemm::multiply_options& options,
                                const std::optional<spgemm::memory_estimate>& whole,
                                const std::optional<spgemm::mask_options>& how = std::nullopt);

}  // namespace spgemmd::core
