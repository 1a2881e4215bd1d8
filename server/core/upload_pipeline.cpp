#include "core/upload_pipeline.hpp"

#include <utility>

namespace spgemmd::core {

std::unique_ptr<upload_pipeline> upload_pipeline::open(matrix_cache& cache, const spgemm::matrix_info& info,
                                                       std::size_t bytes, const spgemm::host_csr_arrays& arrays) {
  const int device = cache.roomiest_device();
  if (device < 0) return nullptr;
  reservation room(&cache, device);
  if (!room.try_grow(bytes)) return nullptr;
  auto writer = cache.backends()[static_cast<std::size_t>(device)]->open_writer(info, arrays);
  return std::make_unique<upload_pipeline>(std::move(room), std::move(writer));
}

upload_pipeline::upload_pipeline(reservation room, std::unique_ptr<spgemm::matrix_writer> writer)
    : room_(std::move(room)), writer_(std::move(writer)) {}

upload_pipeline::~upload_pipeline() {
  if (copying_.valid()) copying_.wait();
}

void upload_pipeline::wait() {
  if (copying_.valid()) copying_.get();
}

void upload_pipeline::arrived(int64_t rows, int64_t nnz) {
  // Offsets 8 bytes, an entry 12 (f64) or 8 (f32): near enough to pace the blocks.
  const int64_t bytes = rows * 8 + nnz * 12;
  if (bytes - bytes_started_ < block_bytes) return;
  wait();
  bytes_started_ = bytes;
  copying_ = std::async(std::launch::async, [w = writer_.get(), rows] { w->write(rows); });
}

std::shared_ptr<spgemm::stored_matrix> upload_pipeline::finish(int64_t rows) {
  wait();
  writer_->write(rows);
  return writer_->finish();
}

}  // namespace spgemmd::core
