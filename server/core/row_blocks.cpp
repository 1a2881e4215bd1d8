#include "core/row_blocks.hpp"

#include <algorithm>

namespace spgemmd::core {

row_blocks::row_blocks(std::shared_ptr<spgemm::backend> backend, std::shared_ptr<spgemm::stored_matrix> stored,
                       std::size_t block_bytes)
    : backend_(std::move(backend)), stored_(std::move(stored)), info_(stored_->info()), block_bytes_(block_bytes) {}

row_blocks::row_blocks(matrix_cache& cache, cache_entry& e, std::size_t block_bytes) : block_bytes_(block_bytes) {
  int device = -1;
  cache.locate(e, &device, &stored_, &host_);
  if (stored_) {
    backend_ = cache.backends()[static_cast<std::size_t>(device)];
    info_ = stored_->info();
  } else {
    info_ = host_->info();
  }
}

row_blocks::row_blocks(std::shared_ptr<panel_stream> panels, const spgemm::matrix_info& shape,
                       std::size_t block_bytes)
    : info_(shape), panels_(std::move(panels)), block_bytes_(block_bytes) {}

void row_blocks::plan_blocks() {
  const spgemm::matrix_info m = stored_->info();
  if (m.bytes() <= block_bytes_ || m.rows <= 1) {
    ends_.push_back(m.rows);
    return;
  }
  // Offsets of every stride-th row: at most about 64k of them to copy, and
  // blocks end at those rows only.
  const int64_t stride = std::max<int64_t>(1, m.rows >> 16);
  const std::vector<spgemm::offset_t> at = backend_->sample_row_offsets(*stored_, stride);
  const auto row_of = [&](std::size_t k) { return std::min<int64_t>(static_cast<int64_t>(k) * stride, m.rows); };
  const auto entry_bytes = static_cast<int64_t>(sizeof(spgemm::index_t) + spgemm::size_of(m.type));
  const auto bytes = [&](std::size_t i, std::size_t j) {
    return static_cast<std::size_t>((row_of(j) - row_of(i)) * static_cast<int64_t>(sizeof(spgemm::offset_t)) +
                                    (at[j] - at[i]) * entry_bytes);
  };
  for (std::size_t i = 0; i + 1 < at.size();) {
    // The last sample j > i whose rows [row i, row j) fit; the next one where none does.
    std::size_t lo = i + 1, hi = at.size() - 1;
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo + 1) / 2;
      if (bytes(i, mid) <= block_bytes_) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    ends_.push_back(row_of(lo));
    i = lo;
  }
}

int64_t row_blocks::block_end(int64_t begin) {
  if (ends_.empty()) plan_blocks();
  return *std::upper_bound(ends_.begin(), ends_.end(), begin);
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
      ends_.clear();  // planned for this panel at its first block
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
  next_row_ = block_end(begin);
  // The first block is fetched here; each later one was fetched in the
  // background while the block before it was sent.
  std::shared_ptr<const spgemm::any_csr> rows = ahead_.valid() ? ahead_.get() : fetch(begin, next_row_);
  if (more()) {
    ahead_ = std::async(std::launch::async, [this, b = next_row_, end = block_end(next_row_)] { return fetch(b, end); });
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
  const int64_t end = block_end(begin);
  std::shared_ptr<const spgemm::any_csr> rows = ahead_.valid() ? ahead_.get() : fetch(begin, end);
  next_row_ = panel_row_ + end;
  if (end < panel_rows) {
    ahead_ = std::async(std::launch::async, [this, b = end, e = block_end(end)] { return fetch(b, e); });
  } else {
    stored_.reset();
    backend_.reset();
    panel_.reset();  // off its device: its lane may compute the next
  }
  return {panel_row_ + begin, std::move(rows)};
}

}  // namespace spgemmd::core
