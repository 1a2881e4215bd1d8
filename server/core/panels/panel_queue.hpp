// The row panels of one product, handed out in row order to the lanes
// (devices) that compute them. A lane takes the rows of its next panel as
// its room allows, at the bytes per byte of C bound that the panels'
// estimates showed so far, and learns the queue what each estimate said.
// Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <utility>

#include "core/panels/panel_cuts.hpp"

namespace spgemmd::core {

class panel_queue {
 public:
  // `ratio`: the first guess of estimate bytes per byte of C bound (the
  // product's estimate in one piece, where it was made).
  panel_queue(const panel_cuts& cuts, double ratio) : cuts_(cuts), ratio_(ratio) {}

  // Rows [begin, end) for a panel of about `bytes` on a device; nullopt
  // once every row was handed out.
  std::optional<std::pair<int64_t, int64_t>> take(double bytes);
  // A panel of rows [begin, end) was estimated at `estimate` bytes beside
  // its rows of A: later panels are cut by the largest ratio seen.
  double learn(int64_t begin, int64_t end, double estimate);
  double ratio() const;
  const panel_cuts& cuts() const { return cuts_; }

 private:
  const panel_cuts& cuts_;
  mutable std::mutex mu_;
  double ratio_;
  int64_t next_ = 0;
};

}  // namespace spgemmd::core
