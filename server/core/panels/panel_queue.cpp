#include "core/panels/panel_queue.hpp"

#include <algorithm>

namespace spgemmd::core {

std::optional<std::pair<int64_t, int64_t>> panel_queue::take(double bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (next_ >= cuts_.rows()) return std::nullopt;
  const int64_t begin = next_;
  next_ = cuts_.cut(begin, cuts_.rows(), ratio_, bytes);
  return std::make_pair(begin, next_);
}

double panel_queue::learn(int64_t begin, int64_t end, double estimate) {
  const double bound = static_cast<double>(cuts_.c_bound_bytes(begin, end));
  std::lock_guard<std::mutex> lock(mu_);
  if (bound > 0) ratio_ = std::max(ratio_, estimate / bound);
  return ratio_;
}

double panel_queue::ratio() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ratio_;
}

}  // namespace spgemmd::core
