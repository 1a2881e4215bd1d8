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

// The stored matrix of an operand, on the job's device.
const spgemm::stored_matrix& stored(job& j, operand o);
// Adds the time since `started` to the job's engine phase.
void note_engine(job& j, steady::time_point started);
// The bytes of the job's intermediates.
std::size_t intermediate_bytes(const job& j);

// A kept result held for a step that reads its structure: its entry pinned,
// resident on `device` and in use (counted: it neither spills nor is freed
// meanwhile); nothing where `m` is no longer an entry's matrix there. `m` is
// a weak reference, looked up under the cache's lock: a strong one held
// through the step would keep a matrix the cache spills or frees meanwhile
// allocated beside the cache's count (its device past its budget).
class structure_hold {
 public:
  structure_hold(matrix_cache& cache, const std::weak_ptr<spgemm::stored_matrix>& m, int device);
  ~structure_hold();
  structure_hold(const structure_hold&) = delete;
  structure_hold& operator=(const structure_hold&) = delete;
  explicit operator bool() const { return stored_ != nullptr; }
  const spgemm::stored_matrix* get() const { return stored_.get(); }

 private:
  matrix_cache& cache_;
  pin pin_;
  std::shared_ptr<spgemm::stored_matrix> stored_;
};

// x * y within the step's estimate: numeric only on the structure of `last`
// (the same product's last result, empty where unknown) where that is still
// a kept result on the job's device and its numeric phase fits the
// estimate, else whole. Its engine time counts on the job.
std::shared_ptr<spgemm::stored_matrix> product_of(job& j, spgemm::backend& b, const spgemm::stored_matrix& x,
                                                  const spgemm::stored_matrix& y, const spgemm::multiply_options& options,
                                                  const std::weak_ptr<spgemm::stored_matrix>& last);

// left * right. The estimate of a product of two inputs is memoized in
// `memo`, with what it gave (the step's gave_before when it comes again);
// while that result is kept, the product reruns numeric only on its structure.
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
