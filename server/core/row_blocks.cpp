#include "core/row_blocks.hpp"

#include <algorithm>

namespace spgemmd::core {

row_blocks::row_blocks(std::shared_ptr<spgemm::backend> backend, std::shared_ptr<spgemm::stored_matrix> stored,
                       std::size_t block_bytes)
    : backend_(std::move(backend)), stored_(std::move(stored)), info_(stored_->info()) {
  set_block_rows(info_, block_bytes);
}

row_blocks::row_blocks(matrix_cache& cache, cache_entry& e, std::size_t block_bytes) {
  int device = -1;
  cache.locate(e, &device, &stored_, &host_);
  if (stored_) {
    backend_ = cache.backends()[static_cast<std::size_t>(device)];
    info_ = stored_->info();
    set_block_rows(info_, block_bytes);
  } else {
    info_ = host_->info();
  }
}

row_blocks::row_blocks(std::shared_ptr<panel_stream> panels, const spgemm::matrix_info& shape,
                       std::size_t block_bytes)
    : info_(shape), panels_(std::move(panels)), block_bytes_(block_bytes) {}

void row_blocks::set_block_rows(const spgemm::matrix_info& rows, std::size_t block_bytes) {
  const double row_bytes = static_cast<double>(rows.bytes()) / static_cast<double>(std::max<int64_t>(1, rows.rows));
  rows_per_block_ = static_cast<int64_t>(std::max(1.0, static_cast<double>(block_bytes) / row_bytes));
}

row_blocks::~row_blocks() {
  if (ahead_.valid()) ahead_.wait();
}

std::shared_ptr<const spgemm::any_csr> row_blocks::fetch(int64_t begin, int64_t end) const {
  return std::make_shared<const spgemm::any_csr>(backend_->fetch(*stored_, begin, end));
}

bool row_blocks::ready(std::function<void()> wake) {
  if (!panels_ || panel_ || failure_) return true;
  std::optional<device_panel> p;
  outcome why;
  switch (panels_->poll(&p, std::move(wake), &why)) {
    case panel_stream::state::panel:
      panel_ = std::move(p);
      panel_row_ = panel_->first_row;
      backend_ = panel_->backend;
      stored_ = panel_->rows;
      set_block_rows(stored_->info(), block_bytes_);
      return true;
    case panel_stream::state::waiting:
      return false;
    case panel_stream::state::finished:
      if (next_row_ < info_.rows) failure_ = outcome{status::internal, "the product's panels ended early"};
      return true;
    case panel_stream::state::failed:
      failure_ = why;
      return true;
  }
  return true;
}

void row_blocks::abandon() {
  if (ahead_.valid()) ahead_.wait();
  stored_.reset();
  backend_.reset();
  panel_.reset();
  if (panels_) panels_->abandon();
}

row_blocks::block row_blocks::next() {
  if (panels_) return next_of_panel();
  if (host_) {
    const host_matrix::block& b = host_->blocks()[host_block_++];
    next_row_ = b.first_row + b.info().rows;
    return {b.first_row, b.load()};
  }
  const int64_t begin = next_row_;
  next_row_ = std::min(info_.rows, begin + rows_per_block_);
  // The first block is fetched here; each later one was fetched in the
  // background while the block before it was sent.
  std::shared_ptr<const spgemm::any_csr> rows = ahead_.valid() ? ahead_.get() : fetch(begin, next_row_);
  if (more()) {
    const int64_t end = std::min(info_.rows, next_row_ + rows_per_block_);
    ahead_ = std::async(std::launch::async, [this, b = next_row_, end] { return fetch(b, end); });
  }
  return {begin, std::move(rows)};
}

row_blocks::stored_whole row_blocks::whole() const {
  if (!stored_ || panels_ || next_row_ != 0 || ahead_.valid()) return {};
  return {backend_, stored_};
}

void row_blocks::next_to(spgemm::rows_sink& sink) {
  if (host_ || panels_) {
    spgemm::hand_rows(*next().rows, sink);
    return;
  }
  backend_->fetch_to(*stored_, next_row_, info_.rows, sink);
  next_row_ = info_.rows;
}

// The panel's next block; the next one of the same panel is fetched in the
// background, and the panel is freed once its last block is on the host.
row_blocks::block row_blocks::next_of_panel() {
  const int64_t panel_rows = stored_->info().rows;
  const int64_t begin = next_row_ - panel_row_;
  const int64_t end = std::min(panel_rows, begin + rows_per_block_);
  std::shared_ptr<const spgemm::any_csr> rows = ahead_.valid() ? ahead_.get() : fetch(begin, end);
  next_row_ = panel_row_ + end;
  if (end < panel_rows) {
    ahead_ = std::async(std::launch::async,
                        [this, b = end, e = std::min(panel_rows, end + rows_per_block_)] { return fetch(b, e); });
  } else {
    stored_.reset();
    backend_.reset();
    panel_.reset();  // off its device: its lane may compute the next
  }
  return {panel_row_ + begin, std::move(rows)};
}

}  // namespace spgemmd::core
