// The rows of a matrix being streamed, as host blocks: fetched from the
// backend that stores it a block at a time (the next block in the background
// while the current one is sent), or a host copy taken whole, without a copy.
// A slow reader holds about two blocks of host memory.
#pragma once

#include <cstdint>
#include <future>
#include <memory>

#include "core/matrix_cache.hpp"
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
  // The host copy as one block.
  explicit row_blocks(std::shared_ptr<const spgemm::any_csr> host);
  // The rows of a cache entry (pinned by the caller), wherever it lives now.
  row_blocks(matrix_cache& cache, cache_entry& e, std::size_t block_bytes);
  row_blocks(const row_blocks&) = delete;  // a fetch in flight refers to this object
  row_blocks& operator=(const row_blocks&) = delete;
  ~row_blocks();  // waits for a fetch in flight

  const spgemm::matrix_info& info() const { return info_; }
  bool more() const { return next_row_ < info_.rows; }
  // The next block (waiting for its fetch); call only while more().
  block next();

 private:
  void set_block_rows(std::size_t block_bytes);
  std::shared_ptr<const spgemm::any_csr> fetch(int64_t begin, int64_t end) const;

  std::shared_ptr<spgemm::backend> backend_;
  std::shared_ptr<spgemm::stored_matrix> stored_;
  std::shared_ptr<const spgemm::any_csr> host_;
  spgemm::matrix_info info_;
  int64_t rows_per_block_ = 0;
  int64_t next_row_ = 0;
  std::future<std::shared_ptr<const spgemm::any_csr>> ahead_;  // rows from next_row_
};

}  // namespace spgemmd::core
