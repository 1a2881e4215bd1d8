#include "core/panels/panel_queue.hpp"

#include <algorithm>

namespace spgemmd::core {

panel_queue::panel_queue(const panel_cuts& cuts, const std::optional<spgemm::memory_estimate>& whole) : cuts_(cuts) {
  const double bound = static_cast<double>(cuts_.c_bound_bytes(0, cuts_.rows()));
  if (whole && bound > 0) {
    fixed_ = static_cast<double>(whole->fixed_workspace_bytes);
    ratio_ = std::max(0.0, static_cast<double>(whole->total()) - fixed_) / bound;
  }
}

std::optional<std::pair<int64_t, int64_t>> panel_queue::take(double bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (next_ >= cuts_.rows()) return std::nullopt;
  const int64_t begin = next_;
  next_ = cut_locked(begin, cuts_.rows(), bytes);
  return std::make_pair(begin, next_);
}

void panel_queue::learn(int64_t begin, int64_t end, const spgemm::memory_estimate& e) {
  const double bound = static_cast<double>(cuts_.c_bound_bytes(begin, end));
  std::lock_guard<std::mutex> lock(mu_);
  fixed_ = std::max(fixed_, static_cast<double>(e.fixed_workspace_bytes));
  if (bound > 0) ratio_ = std::max(ratio_, (static_cast<double>(e.total()) - fixed_) / bound);
}

int64_t panel_queue::cut(int64_t begin, int64_t limit, double bytes) const {
  std::lock_guard<std::mutex> lock(mu_);
  return cut_locked(begin, limit, bytes);
}

int64_t panel_queue::cut_locked(int64_t begin, int64_t limit, double bytes) const {
  return cuts_.cut(begin, limit, ratio_, bytes - fixed_);
}

double panel_queue::fixed_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fixed_;
}

}  // namespace spgemmd::core
