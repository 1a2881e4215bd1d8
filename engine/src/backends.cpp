#include "spgemm/backend.hpp"

#include "spgemm/errors.hpp"

namespace spgemm {

void matrix_writer::write(std::int64_t row_end) {
  if (row_end < rows_written_ || row_end > info_.rows) {
    throw_bad_input("matrix writer: rows up to " + std::to_string(row_end) + " after " +
                    std::to_string(rows_written_) + " of " + std::to_string(info_.rows));
  }
  if (row_end == rows_written_ && started_) return;
  copy(rows_written_, row_end);
  rows_written_ = row_end;
  started_ = true;
}

void matrix_writer::require_complete() const {
  if (rows_written_ != info_.rows || !started_) {
    throw_bad_input("matrix writer: finished after " + std::to_string(rows_written_) + " of " +
                    std::to_string(info_.rows) + " rows");
  }
}

void backend::fetch_to(const stored_matrix& m, std::int64_t row_begin, std::int64_t row_end, rows_sink& sink) {
  hand_rows(fetch(m, row_begin, row_end), sink);
}

std::vector<offset_t> sampled_row_offsets(const std::vector<offset_t>& row_offsets, std::int64_t stride) {
  if (stride < 1) throw_bad_input("row offsets sampled every " + std::to_string(stride) + " rows: at least 1");
  const auto rows = static_cast<std::int64_t>(row_offsets.size()) - 1;
  std::vector<offset_t> out;
  out.reserve(static_cast<std::size_t>((rows + stride - 1) / stride + 1));
  for (std::int64_t r = 0; r < rows; r += stride) out.push_back(row_offsets[static_cast<std::size_t>(r)]);
  out.push_back(row_offsets.back());
  return out;
}

std::vector<offset_t> backend::sample_row_offsets(const stored_matrix& m, std::int64_t stride) {
  return std::visit([&](const auto& c) { return sampled_row_offsets(c.row_offsets, stride); }, fetch(m));
}

std::shared_ptr<stored_matrix> backend::store_from_ipc(const matrix_info&, const ipc_csr_arrays&) {
  throw_bad_input("CUDA IPC needs a GPU backend; " + name() + " keeps matrices in host memory");
}

void backend::fetch_into_ipc(const stored_matrix&, const ipc_csr_arrays&) {
  throw_bad_input("CUDA IPC needs a GPU backend; " + name() + " keeps matrices in host memory");
}

std::shared_ptr<const ipc_mapping> backend::open_ipc(const std::string&) {
  throw_bad_input("CUDA IPC needs a GPU backend; " + name() + " keeps matrices in host memory");
}

bool backend::pin_host(void*, std::size_t) { return false; }

void backend::unpin_host(void*) {}

void backend::fetch_into_pinned(const stored_matrix&, const host_csr_targets&) {
  throw_bad_input(name() + " copies nothing into pinned host memory: it keeps matrices in host memory");
}

std::shared_ptr<stored_matrix> backend::store_from_pinned(const matrix_info&, const host_csr_arrays&) {
  throw_bad_input(name() + " copies nothing from pinned host memory: it keeps matrices in host memory");
}

memory_estimate backend::estimate_masked_multiply(const stored_matrix&, const stored_matrix&, const stored_matrix&,
                                                  const mask_options&, const multiply_options&) {
  throw_bad_input("backend " + name() + " runs no masked products");
}

std::shared_ptr<stored_matrix> backend::masked_multiply(const stored_matrix&, const stored_matrix&,
                                                        const stored_matrix&, const mask_options&,
                                                        const multiply_options&, std::size_t, const cancel_token&,
                                                        std::size_t*) {
  throw_bad_input("backend " + name() + " runs no masked products");
}

memory_estimate backend::estimate_op(const matrix_op& op, const std::vector<const stored_matrix*>&) {
  throw_bad_input("backend " + name() + " does not run " + describe(op));
}

std::shared_ptr<stored_matrix> backend::run_op(const matrix_op& op, const std::vector<const stored_matrix*>&,
                                               std::size_t, const cancel_token&, std::size_t*) {
  throw_bad_input("backend " + name() + " does not run " + describe(op));
}

void backend::write_values(stored_matrix&, const void*) {
  throw_bad_input("backend " + name() + " does not replace values");
}

std::shared_ptr<stored_matrix> backend::with_values(const stored_matrix&, const void*) {
  throw_bad_input("backend " + name() + " does not replace values");
}

memory_estimate backend::estimate_multiply_numeric(const stored_matrix&, const stored_matrix&, const stored_matrix&,
                                                   const multiply_options&) {
  throw_bad_input("backend " + name() + " has no numeric-only products");
}

std::shared_ptr<stored_matrix> backend::multiply_numeric(const stored_matrix&, const stored_matrix&,
                                                         const stored_matrix&, const multiply_options&, std::size_t,
                                                         const cancel_token&, std::size_t*) {
  throw_bad_input("backend " + name() + " has no numeric-only products");
}

std::unique_ptr<amg::operations> backend::amg_operations() {
  throw_bad_input("backend " + name() + " runs no algebraic multigrid");
}

std::vector<std::shared_ptr<backend>> open_default_backends() {
  std::vector<std::shared_ptr<backend>> backends;
  std::vector<int> gpus(static_cast<std::size_t>(cuda_device_count()));
  for (std::size_t i = 0; i < gpus.size(); ++i) gpus[i] = static_cast<int>(i);
  if (gpus.empty()) return {make_cpu_backend()};
  return open_cuda_backends(gpus);
}

}  // namespace spgemm
