#include "gpu/cuda_stored_matrix.hpp"

#include "planner/statistics.hpp"

namespace spgemm::gpu {

cuda_stored_matrix::cuda_stored_matrix(std::shared_ptr<cuda::device_context> context, cuda::any_device_csr m)
    : context_(std::move(context)), matrix_(std::move(m)) {
  std::visit([&](auto& d) { d.bind_stream(context_->release_stream); }, matrix_);
}

cuda_stored_matrix::~cuda_stored_matrix() {
  // Free on the device that holds the memory.
  int previous = -1;
  (void)cudaGetDevice(&previous);
  if (previous != context_->device) (void)cudaSetDevice(context_->device);
  matrix_ = cuda::any_device_csr{};
  if (previous >= 0 && previous != context_->device) (void)cudaSetDevice(previous);
}

matrix_info cuda_stored_matrix::info() const {
  return std::visit([](const auto& d) { return d.info(); }, matrix_);
}

cuda::structure_view cuda_stored_matrix::structure() const {
  return std::visit([](const auto& d) { return d.view().structure(); }, matrix_);
}

const planner::row_stats& cuda_stored_matrix::row_stats(cudaStream_t stream) const {
  std::call_once(row_stats_once_, [&] {
    planner::row_stats s = planner::compute_row_stats(structure(), context_->memory, stream);
    s.diagonal_distance = planner::compute_diagonal_distance(structure(), context_->memory, stream);
    row_stats_ = s;
  });
  return row_stats_;
}

void cuda_stored_matrix::adopt_row_stats(const planner::row_stats& same_pattern) const {
  std::call_once(row_stats_once_, [&] { row_stats_ = same_pattern; });
}

planner::size_mask cuda_stored_matrix::block_sizes(cudaStream_t stream) const {
  std::call_once(block_sizes_once_,
                 [&] { block_sizes_ = planner::detect_block_sizes(structure(), context_->memory, stream); });
  return block_sizes_;
}

}  // namespace spgemm::gpu
