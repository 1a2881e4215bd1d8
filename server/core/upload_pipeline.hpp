// An upload's rows stored on a device while the rest still arrives: the
// device copy (about a quarter of a large upload on an H100 when done after
// the last chunk) overlaps receiving, a block at a time on a thread of its
// own, as row_blocks does for downloads.
#pragma once

#include <cstdint>
#include <future>
#include <memory>

#include "core/matrix_cache.hpp"
#include "spgemm/backend.hpp"

namespace spgemmd::core {

class upload_pipeline {
 public:
  // Room for the matrix (`bytes`, as its entry counts them) on the device
  // with the most room (spilling cold entries), held while it arrives;
  // nullptr where no device has it now (the upload then stores the matrix
  // whole at its end, or keeps it on the host).
  static std::unique_ptr<upload_pipeline> open(matrix_cache& cache, const spgemm::matrix_info& info,
                                               std::size_t bytes, const spgemm::host_csr_arrays& arrays);
  upload_pipeline(reservation room, std::unique_ptr<spgemm::matrix_writer> writer);
  upload_pipeline(const upload_pipeline&) = delete;  // a copy in flight refers to the writer
  upload_pipeline& operator=(const upload_pipeline&) = delete;
  ~upload_pipeline();  // waits for a copy in flight; the device memory goes unless finish() took it

  // Rows [0, rows) and `nnz` entries have arrived: starts copying them once
  // a block's worth waits (after the copy before it). Rethrows what a copy threw.
  void arrived(int64_t rows, int64_t nnz);
  // Every row arrived: copies the rest and returns the stored matrix; room()
  // holds its bytes for the cache.
  std::shared_ptr<spgemm::stored_matrix> finish(int64_t rows);
  reservation& room() { return room_; }

 private:
  // Bytes copied per block: large enough that a thread per block costs little.
  static constexpr int64_t block_bytes = 16 << 20;

  void wait();

  reservation room_;
  std::unique_ptr<spgemm::matrix_writer> writer_;
  std::future<void> copying_;
  int64_t bytes_started_ = 0;  // of the rows handed to a copy
};

}  // namespace spgemmd::core
