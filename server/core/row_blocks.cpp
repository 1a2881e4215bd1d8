#include "core/row_blocks.hpp"

#include <algorithm>

namespace spgemmd::core {

row_blocks::row_blocks(std::shared_ptr<spgemm::backend> backend, std::shared_ptr<spgemm::stored_matrix> stored,
                       std::size_t block_bytes)
    : backend_(std::move(backend)), stored_(std::move(stored)), info_(stored_->info()) {
  set_block_rows(block_bytes);
}

row_blocks::row_blocks(std::shared_ptr<const spgemm::any_csr> host)
    : host_(std::move(host)), info_(spgemm::info_of(*host_)), rows_per_block_(std::max<int64_t>(1, info_.rows)) {}

row_blocks::row_blocks(matrix_cache& cache, cache_entry& e, std::size_t block_bytes) {
  int device = -1;
  cache.locate(e, &device, &stored_, &host_);
  if (stored_) {
    backend_ = cache.backends()[static_cast<std::size_t>(device)];
    info_ = stored_->info();
    set_block_rows(block_bytes);
  } else {
    info_ = spgemm::info_of(*host_);
    rows_per_block_ = std::max<int64_t>(1, info_.rows);
  }
}

void row_blocks::set_block_rows(std::size_t block_bytes) {
  const double row_bytes = static_cast<double>(info_.bytes()) / static_cast<double>(std::max<int64_t>(1, info_.rows));
  rows_per_block_ = static_cast<int64_t>(std::max(1.0, static_cast<double>(block_bytes) / row_bytes));
}

row_blocks::~row_blocks() {
  if (ahead_.valid()) ahead_.wait();
}

std::shared_ptr<const spgemm::any_csr> row_blocks::fetch(int64_t begin, int64_t end) const {
  return std::make_shared<const spgemm::any_csr>(backend_->fetch(*stored_, begin, end));
}

row_blocks::block row_blocks::next() {
  const int64_t begin = next_row_;
  next_row_ = std::min(info_.rows, begin + rows_per_block_);
  if (host_) return {begin, host_};
  // The first block is fetched here; each later one was fetched in the
  // background while the block before it was sent.
  std::shared_ptr<const spgemm::any_csr> rows = ahead_.valid() ? ahead_.get() : fetch(begin, next_row_);
  if (more()) {
    const int64_t end = std::min(info_.rows, next_row_ + rows_per_block_);
    ahead_ = std::async(std::launch::async, [this, b = next_row_, end] { return fetch(b, end); });
  }
  return {begin, std::move(rows)};
}

}  // namespace spgemmd::core
