// The backend of one CUDA device (spgemm::backend): matrices stored in device
// memory from the device's stream-ordered pool; each call runs on a stream of
// its own from a small pool and synchronizes before it returns.
#pragma once

#include <memory>
#include <mutex>

#include "block/block_rule.hpp"
#include "cuda/device_context.hpp"
#include "cuda/device_csr.hpp"
#include "rmerge/rmerge_tuning.hpp"
#include "spgemm/backend.hpp"

namespace spgemm::cuda {

// A matrix stored on a CUDA device. Keeps the device context alive.
class cuda_stored_matrix final : public stored_matrix {
 public:
  cuda_stored_matrix(std::shared_ptr<device_context> context, any_device_csr m);
  ~cuda_stored_matrix() override;
  matrix_info info() const override;

  const any_device_csr& matrix() const { return matrix_; }
  const device_context& context() const { return *context_; }
  // The shape of its rows (the planner's and RMerge's input), measured on
  // first use with `stream` and kept: a stored matrix never changes. Saves a
  // kernel and a synchronization per product of a cached matrix.
  const rmerge::row_stats& row_stats(cudaStream_t stream) const;
  // The sizes of dense blocks it is made of (block_rule.hpp; one kernel over
  // its entries where its shape allows any), measured on first use and kept.
  block::size_mask block_sizes(cudaStream_t stream) const;

 private:
  std::shared_ptr<device_context> context_;
  any_device_csr matrix_;
  mutable std::once_flag row_stats_once_;
  mutable rmerge::row_stats row_stats_;
  mutable std::once_flag block_sizes_once_;
  mutable block::size_mask block_sizes_ = 0;
};

class cuda_backend final : public backend {
 public:
  explicit cuda_backend(int ordinal);

  std::string name() const override;
  std::string description() const override;
  bool is_gpu() const override { return true; }
  backend_memory memory() const override;
  void reset_peak() override;

  std::shared_ptr<stored_matrix> store(const any_csr& m) override;
  std::unique_ptr<matrix_writer> open_writer(const matrix_info& info, const host_csr_arrays& arrays) override;  // cuda_writer.cpp
  any_csr fetch(const stored_matrix& m, std::int64_t row_begin, std::int64_t row_end) override;
  using backend::fetch;

  memory_estimate estimate_multiply(const stored_matrix& a, const stored_matrix& b,
                                    const multiply_options& options) override;
  std::shared_ptr<stored_matrix> multiply(const stored_matrix& a, const stored_matrix& b,
                                          const multiply_options& options, std::size_t memory_limit,
                                          const cancel_token& cancel = {}, std::size_t* peak_bytes = nullptr) override;
  using backend::multiply;
  std::shared_ptr<stored_matrix> transpose(const stored_matrix& a, const cancel_token& cancel = {},
                                           std::size_t* peak_bytes = nullptr) override;
  memory_estimate estimate_transpose(const stored_matrix& a) override;

  // The device this backend runs on (for engine-internal callers such as benchmarks).
  device_context& context() { return *context_; }

 private:
  const cuda_stored_matrix& own(const stored_matrix& m, const char* what) const;
  std::shared_ptr<stored_matrix> keep(any_device_csr m, cudaStream_t stream);

  std::shared_ptr<device_context> context_;
};

}  // namespace spgemm::cuda
