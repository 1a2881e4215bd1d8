// The recipes of the graph calls: a product over a semiring, masked or not
// (mxm), and a step between products (matrix_ops.hpp). Any operand may be
// taken transposed: the job transposes it first (a step of its own, sized
// and admitted as the others), as GraphBLAS's descriptors take A' and B'.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "core/estimate_memo.hpp"
#include "core/job.hpp"
#include "core/outcome.hpp"
#include "spgemm/matrix_ops.hpp"
#include "spgemm/multiply.hpp"

namespace spgemmd::core {

// A pinned matrix as an operand, as it is or transposed.
struct graph_operand {
  pin matrix;
  bool transposed = false;
};

// C = A (+).(x) B over options.semiring, within `mask` where given (C<M>, or
// C<!M> per `how`): invalid_argument where the shapes (as taken) do not fit
// or the semiring is not one the engine runs.
outcome mxm_job(estimate_memo& memo, graph_operand a, graph_operand b, std::optional<graph_operand> mask,
                const spgemm::mask_options& how, const spgemm::multiply_options& options, int priority,
                std::shared_ptr<job>* out);

// The step `op` on its operands: invalid_argument where matrix_ops.hpp's
// result_bound refuses them.
outcome op_job(const spgemm::matrix_op& op, std::vector<graph_operand> operands, int priority,
               std::shared_ptr<job>* out);

}  // namespace spgemmd::core
