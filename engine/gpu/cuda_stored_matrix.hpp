// A matrix stored on a CUDA device, with what the planner and the methods
// read of it, measured on first use and kept: a stored matrix never changes,
// so a product of cached matrices saves those kernels and synchronizations.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <optional>

#include "cuda/device_context.hpp"
#include "cuda/device_csr.hpp"
#include "planner/block_structure.hpp"
#include "planner/job_rules.hpp"
#include "spgemm/backend.hpp"

namespace spgemm::gpu {

// Keeps the device context alive, so that its memory can be freed after the
// backend is gone.
class cuda_stored_matrix final : public stored_matrix {
 public:
  cuda_stored_matrix(std::shared_ptr<cuda::device_context> context, cuda::any_device_csr m);
  ~cuda_stored_matrix() override;
  matrix_info info() const override;

  const cuda::any_device_csr& matrix() const { return matrix_; }
  cuda::structure_view structure() const;
  const cuda::device_context& context() const { return *context_; }
  // The shape of its rows, measured with `stream` the first time.
  const planner::row_stats& row_stats(cudaStream_t stream) const;
  // The sizes of dense blocks it is made of (one kernel over its entries
  // where its shape allows any), measured with `stream` the first time.
  // Whichever of the two is asked for first, both are measured together.
  planner::size_mask block_sizes(cudaStream_t stream) const;
  // Takes the row shape of a matrix of the same pattern (a numeric-only
  // product's structure, the matrix whose values were replaced) instead of
  // measuring it; no effect once measured.
  void adopt_row_stats(const planner::row_stats& same_pattern) const;

 private:
  void measure(cudaStream_t stream) const;  // both, facts_mutex_ held

  std::shared_ptr<cuda::device_context> context_;
  cuda::any_device_csr matrix_;
  mutable std::mutex facts_mutex_;
  mutable std::optional<planner::row_stats> row_stats_;
  mutable std::optional<planner::size_mask> block_sizes_;
};

}  // namespace spgemm::gpu
