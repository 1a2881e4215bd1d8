// The steps recipes build jobs from, and the job they make of them.
//
// A step reads operands (the job's inputs, on its device, or the
// intermediates of the steps before it) and adds its product as the job's
// next intermediate; the last step's product becomes the job's result.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/estimate_memo.hpp"
#include "core/job.hpp"
#include "spgemm/matrix_ops.hpp"
#include "spgemm/multiply.hpp"

namespace spgemmd::core {

// An operand of a step: the job's input `index`, or its intermediate `index`.
struct operand {
  int index = 0;
  bool intermediate = false;
};
inline operand input(int index) { return {index, false}; }
inline operand intermediate(int index) { return {index, true}; }

// left * right. The estimate of a product of two inputs is memoized in
// `memo`, with what it gave (the step's gave_before when it comes again).
job_step multiply_step(estimate_memo& memo, operand left, operand right, const spgemm::multiply_options& options);
// The transpose of input `index`.
job_step transpose_step(int index);
// left * right within `mask` (C<M>, C<!M>), over options.semiring.
job_step masked_multiply_step(operand left, operand right, operand mask, const spgemm::mask_options& how,
                              const spgemm::multiply_options& options);
// A step between products (matrix_ops.hpp) on `operands`.
job_step op_step(const spgemm::matrix_op& op, std::vector<operand> operands);

// A job of `kind` running `steps` on `inputs`; `algorithm` names it in its
// stats until its steps report the methods they ran.
std::shared_ptr<job> make_job(const char* kind, std::string algorithm, int priority, std::vector<pin> inputs,
                              std::vector<job_step> steps);

}  // namespace spgemmd::core
