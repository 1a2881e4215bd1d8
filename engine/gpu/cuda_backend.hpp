// The backend of one CUDA device (spgemm::backend): matrices stored in device
// memory from the device's stream-ordered pool; each call runs on a stream of
// its own from a small pool and synchronizes before it returns. A product
// runs the method of the table (method_table.hpp) that its options or the
// planner name, on the job's own memory resource, capped at its estimate.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <mutex>

#include "cuda/device_context.hpp"
#include "cuda/device_csr.hpp"
#include "gpu/cuda_stored_matrix.hpp"
#include "spgemm/backend.hpp"

namespace spgemm::gpu {

struct ipc_table;  // the IPC handles a backend has open (ipc_transfer.cpp)

class cuda_backend final : public backend {
 public:
  explicit cuda_backend(int ordinal);

  std::string name() const override;
  std::string description() const override;
  bool is_gpu() const override { return true; }
  backend_memory memory() const override;
  void reset_peak() override;
  void release_idle(std::size_t keep_bytes) override;

  std::shared_ptr<stored_matrix> store(const any_csr& m) override;
  std::unique_ptr<matrix_writer> open_writer(const matrix_info& info,
                                             const host_csr_arrays& arrays) override;  // cuda_writer.cpp
  any_csr fetch(const stored_matrix& m, std::int64_t row_begin, std::int64_t row_end) override;
  std::vector<offset_t> sample_row_offsets(const stored_matrix& m, std::int64_t stride) override;
  using backend::fetch;
  void fetch_to(const stored_matrix& m, std::int64_t row_begin, std::int64_t row_end, rows_sink& sink) override;
  void append_rows(const stored_matrix& m, std::int64_t row_begin, std::int64_t row_end, any_csr& out) override;

  memory_estimate estimate_multiply(const stored_matrix& a, const stored_matrix& b,
                                    const multiply_options& options) override;
  std::shared_ptr<stored_matrix> multiply(const stored_matrix& a, const stored_matrix& b,
                                          const multiply_options& options, std::size_t memory_limit,
                                          const cancel_token& cancel = {}, std::size_t* peak_bytes = nullptr) override;
  using backend::multiply;
  memory_estimate estimate_masked_multiply(const stored_matrix& a, const stored_matrix& b, const stored_matrix& mask,
                                           const mask_options& how, const multiply_options& options) override;
  std::shared_ptr<stored_matrix> masked_multiply(const stored_matrix& a, const stored_matrix& b,
                                                 const stored_matrix& mask, const mask_options& how,
                                                 const multiply_options& options, std::size_t memory_limit,
                                                 const cancel_token& cancel = {},
                                                 std::size_t* peak_bytes = nullptr) override;
  memory_estimate estimate_op(const matrix_op& op, const std::vector<const stored_matrix*>& operands) override;
  std::shared_ptr<stored_matrix> run_op(const matrix_op& op, const std::vector<const stored_matrix*>& operands,
                                        std::size_t memory_limit, const cancel_token& cancel = {},
                                        std::size_t* peak_bytes = nullptr) override;
  std::shared_ptr<stored_matrix> transpose(const stored_matrix& a, const cancel_token& cancel = {},
                                           std::size_t* peak_bytes = nullptr) override;
  memory_estimate estimate_transpose(const stored_matrix& a) override;
  std::shared_ptr<stored_matrix> copy_rows(const stored_matrix& m, std::int64_t row_begin,
                                           std::int64_t row_end) override;
  row_work work_per_row(const stored_matrix& a, const stored_matrix& b) override;

  std::shared_ptr<stored_matrix> store_from_ipc(const matrix_info& info, const ipc_csr_arrays& arrays) override;  // ipc_transfer.cpp
  void fetch_into_ipc(const stored_matrix& m, const ipc_csr_arrays& arrays) override;  // ipc_transfer.cpp
  std::shared_ptr<const ipc_mapping> open_ipc(const std::string& handle) override;      // ipc_transfer.cpp
  bool pin_host(void* p, std::size_t bytes) override;                                   // pinned_transfer.cpp
  void unpin_host(void* p) override;                                                    // pinned_transfer.cpp
  void fetch_into_pinned(const stored_matrix& m, const host_csr_targets& to) override;  // pinned_transfer.cpp
  std::shared_ptr<stored_matrix> store_from_pinned(const matrix_info& info,
                                                   const host_csr_arrays& arrays) override;  // pinned_transfer.cpp
  void write_values(stored_matrix& m, const void* values) override;
  std::shared_ptr<stored_matrix> with_values(const stored_matrix& m, const void* values) override;
  memory_estimate estimate_multiply_numeric(const stored_matrix& a, const stored_matrix& b,
                                            const stored_matrix& structure, const multiply_options& options) override;
  std::shared_ptr<stored_matrix> multiply_numeric(const stored_matrix& a, const stored_matrix& b,
                                                  const stored_matrix& structure, const multiply_options& options,
                                                  std::size_t memory_limit, const cancel_token& cancel = {},
                                                  std::size_t* peak_bytes = nullptr) override;
  std::unique_ptr<amg::operations> amg_operations() override;  // cuda_amg.cpp

 private:
  // A product's operands, checked (stored here, conformable, valid tuning
  // and semiring, the mask of C's shape where there is one), and C's value type.
  struct product {
    const cuda_stored_matrix& a;
    const cuda_stored_matrix& b;
    const cuda_stored_matrix* mask;
    value_type out;
  };
  product checked(const stored_matrix& a, const stored_matrix& b, const stored_matrix* mask,
                  const multiply_options& options) const;
  // The product's estimate and run, masked where `how` is given.
  memory_estimate estimate(const product& p, const mask_options* how, const multiply_options& options);
  std::shared_ptr<stored_matrix> run(const product& p, const mask_options* how, const multiply_options& options,
                                     std::size_t memory_limit, const cancel_token& cancel, std::size_t* peak_bytes);
  const cuda_stored_matrix& own(const stored_matrix& m, const char* what) const;
  // An op's operands, checked (stored here, as result_bound accepts them), and C's shape and value type.
  std::vector<const cuda_stored_matrix*> op_operands(const matrix_op& op,
                                                     const std::vector<const stored_matrix*>& operands,
                                                     matrix_info* result) const;
  // The structure a numeric-only product is given, checked against the product's shape.
  const cuda_stored_matrix& own_structure(const product& p, const stored_matrix& structure) const;
  // `m` stored once `stream` is done; with the row shape of a matrix of the
  // same pattern where given.
  std::shared_ptr<stored_matrix> keep(cuda::any_device_csr m, cudaStream_t stream,
                                      const planner::row_stats* same_pattern = nullptr);
  // A matrix of `info` stored from memory outside this backend (another
  // process's by CUDA IPC, pinned host memory): `fill` enqueues the copies
  // of its arrays into the new device arrays on the stream; only the copy is
  // checked, on the device (the owner may change its arrays at any time), and kept.
  struct arrays_to_fill {
    void* row_offsets;
    std::size_t offset_bytes;
    void* col_indices;
    std::size_t column_bytes;
    void* values;
    std::size_t value_bytes;
  };
  std::shared_ptr<stored_matrix> store_checked(const matrix_info& info,
                                               const std::function<void(const arrays_to_fill&, cudaStream_t)>& fill);

  std::shared_ptr<cuda::device_context> context_;
  // The IPC handles open in this device's context, each once (the driver
  // opens a handle once a context): shared by the calls and regions that
  // name it, closed with its last user (ipc_transfer.cpp).
  std::once_flag ipc_once_;
  std::shared_ptr<ipc_table> ipc_;
};

}  // namespace spgemm::gpu
