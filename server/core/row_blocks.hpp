// The rows of a matrix being streamed, as host blocks: fetched from the
// backend that stores it a block at a time (the next block in the background
// while the current one is sent), or a host copy's blocks as they are, without a copy,
// or from the row panels of a product as its job computes them (each panel
// freed on its device once its last block is fetched). A slow reader holds
// about two blocks of host memory (and, for panels, its device the panels).
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <vector>
#include <optional>

#include "core/matrix_cache.hpp"
#include "core/outcome.hpp"
#include "core/panels/panel_stream.hpp"
#include "spgemm/backend.hpp"

namespace spgemmd::core {

class row_blocks {
 public:
  struct block {
    int64_t first_row = 0;                       // of the matrix
    std::shared_ptr<const spgemm::any_csr> rows;  // offsets rebased to 0
  };

  // Blocks of about `block_bytes` (at least one row) of a stored matrix.
  row_blocks(std::shared_ptr<spgemm::backend> backend, std::shared_ptr<spgemm::stored_matrix> stored,
             std::size_t block_bytes);
  // The rows of a cache entry (pinned by the caller), wherever it lives now.
  row_blocks(matrix_cache& cache, cache_entry& e, std::size_t block_bytes);
  // The rows of C of `shape` (nnz unknown) as its row panels come.
  row_blocks(std::shared_ptr<panel_stream> panels, const spgemm::matrix_info& shape, std::size_t block_bytes);
  row_blocks(const row_blocks&) = delete;  // a fetch in flight refers to this object
  row_blocks& operator=(const row_blocks&) = delete;
  ~row_blocks();  // waits for a fetch in flight

  const spgemm::matrix_info& info() const { return info_; }
  bool more() const { return next_row_ < info_.rows && !failure_; }
  // Whether next() can go on without waiting for a panel to be computed;
  // else `wake` is called once, from the job, when it can. Always true but
  // for panels.
  bool ready(std::function<void()> wake);
  // Why the panels stopped coming: the job failed (more() is false then).
  const std::optional<outcome>& failure() const { return failure_; }
  // The next block (waiting for its fetch); call only while more() and ready().
  block next();
  // Where the rows are a whole matrix stored on a backend, none of them taken
  // yet: the backend and the matrix (else both empty). take_whole() then
  // says the caller copied them all itself.
  struct stored_whole {
    std::shared_ptr<spgemm::backend> backend;
    std::shared_ptr<spgemm::stored_matrix> matrix;
  };
  stored_whole whole() const;
  void take_whole() { next_row_ = info_.rows; }
  // The first row (of the matrix) that next() or next_to() goes on from.
  int64_t next_row() const { return next_row_; }
  // The next rows handed to `sink` instead of as a block: the rest of a
  // stored matrix at once, through its backend's staging (backend::fetch_to),
  // else the next block. Call only while more() and ready(), never after next().
  void next_to(spgemm::rows_sink& sink);
  // The call is gone: panels not taken yet are freed now, later ones at once.
  void abandon();

 private:
  // ends_: where the blocks of stored_ end, each about block_bytes_ by
  // where its rows' entries lie (rows of very different lengths, a
  // power-law graph's, make blocks of equal rows anything but equal).
  void plan_blocks();
  // The end of the block that begins at row `begin` of stored_; the blocks
  // are planned at the first block asked for (a whole matrix written into a
  // region needs none).
  int64_t block_end(int64_t begin);
  std::shared_ptr<const spgemm::any_csr> fetch(int64_t begin, int64_t end) const;
  block next_of_panel();

  std::shared_ptr<spgemm::backend> backend_;
  std::shared_ptr<spgemm::stored_matrix> stored_;
  std::shared_ptr<const host_matrix> host_;
  std::size_t host_block_ = 0;  // the next of host_'s blocks
  spgemm::matrix_info info_;
  std::vector<int64_t> ends_;  // ascending, the last stored_'s rows; empty: not planned yet
  int64_t next_row_ = 0;
  std::future<std::shared_ptr<const spgemm::any_csr>> ahead_;  // rows from next_row_
  // Panels: where they come from, the one being fetched (backend_ and
  // stored_ are its) and its first row.
  std::shared_ptr<panel_stream> panels_;
  std::optional<device_panel> panel_;
  int64_t panel_row_ = 0;  // of C, where the panel being fetched begins
  std::size_t block_bytes_ = 0;  // about, in a block of rows
  std::optional<outcome> failure_;
};

}  // namespace spgemmd::core
