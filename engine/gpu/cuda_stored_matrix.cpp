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

void cuda_stored_matrix::measure(cudaStream_t stream) const {
  const planner::matrix_facts f =
      planner::measure_matrix(structure(), !block_sizes_.has_value(), context_->memory, stream);
  row_stats_ = f.rows;
  if (!block_sizes_) block_sizes_ = f.blocks;
}

const planner::row_stats& cuda_stored_matrix::row_stats(cudaStream_t stream) const {
  std::lock_guard<std::mutex> lock(facts_mutex_);
  if (!row_stats_) measure(stream);
  return *row_stats_;
}

void cuda_stored_matrix::adopt_row_stats(const planner::row_stats& same_pattern) const {
  std::lock_guard<std::mutex> lock(facts_mutex_);
  if (!row_stats_) row_stats_ = same_pattern;
}

planner::size_mask cuda_stored_matrix::block_sizes(cudaStream_t stream) const {
  std::lock_guard<std::mutex> lock(facts_mutex_);
  if (!block_sizes_) {
    if (row_stats_) {
      block_sizes_ = planner::detect_block_sizes(structure(), context_->memory, stream);
    } else {
      measure(stream);
    }
  }
  return *block_sizes_;
}

}  // namespace spgemm::gpu
