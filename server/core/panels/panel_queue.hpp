// The row panels of one product, handed out in row order to the lanes
// (devices) that compute them. A lane takes the rows of its next panel as
// its room allows, at the bytes per byte of C bound that the panels'
// estimates showed so far beside the workspace every panel needs whatever
// its rows (estimate.fixed_workspace_bytes), and learns the queue what each
// estimate said. Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <utility>

#include "core/panels/panel_cuts.hpp"
#include "spgemm/multiply.hpp"

namespace spgemmd::core {

class panel_queue {
 public:
  // The first guess from the product's estimate in one piece, where it was made.
  panel_queue(const panel_cuts& cuts, const std::optional<spgemm::memory_estimate>& whole);

  // Rows [begin, end) for a panel of about `bytes` on a device; nullopt
  // once every row was handed out.
  std::optional<std::pair<int64_t, int64_t>> take(double bytes);
  // A panel of rows [begin, end) was estimated at `e` beside its rows of A:
  // later panels are cut by the largest fixed workspace and ratio seen.
  void learn(int64_t begin, int64_t end, const spgemm::memory_estimate& e);
  // The end of a panel from `begin` to at most `limit` of about `bytes`.
  int64_t cut(int64_t begin, int64_t limit, double bytes) const;
  // The workspace every panel needs whatever its rows.
  double fixed_bytes() const;
  const panel_cuts& cuts() const { return cuts_; }

 private:
  int64_t cut_locked(int64_t begin, int64_t limit, double bytes) const;

  const panel_cuts& cuts_;
  mutable std::mutex mu_;
  double fixed_ = 0;  // bytes
  double ratio_ = 1;  // estimate bytes beside the fixed ones per byte of C bound
  int64_t next_ = 0;
};

}  // namespace spgemmd::core
