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

std::vector<std::shared_ptr<backend>> open_default_backends() {
  std::vector<std::shared_ptr<backend>> backends;
  std::vector<int> gpus(static_cast<std::size_t>(cuda_device_count()));
  for (std::size_t i = 0; i < gpus.size(); ++i) gpus[i] = static_cast<int>(i);
  if (gpus.empty()) return {make_cpu_backend()};
  return open_cuda_backends(gpus);
}

}  // namespace spgemm
