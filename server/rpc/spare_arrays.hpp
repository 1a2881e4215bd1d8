// Arrays of finished uploads, kept for the next uploads to be assembled into
// (wire::csr_arrays): their memory is mapped and written already, so reusing
// them saves the page faults and zeroed pages of fresh memory, which cost an
// upload more than its copy. At most `limit_bytes` are kept, the newest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>

#include "wire/chunk_codec.hpp"

namespace spgemmd {

class spare_arrays {
 public:
  explicit spare_arrays(std::size_t limit_bytes) : limit_(limit_bytes) {}

  // Kept arrays that hold `rows` rows and `nnz` values of `type` without
  // being more than twice that size (a matrix kept on the host holds them as
  // they are), or empty ones.
  spgemm::wire::csr_arrays take(int64_t rows, int64_t nnz, spgemm::v1::ValueType type);
  // Keeps `a` for a later take, dropping the oldest kept beyond the limit.
  void give(spgemm::wire::csr_arrays a);
  // Drops every array kept (the server went quiet: their memory goes back).
  void clear();

 private:
  std::mutex mutex_;
  std::deque<spgemm::wire::csr_arrays> kept_;  // oldest first
  std::size_t bytes_ = 0;
  const std::size_t limit_;
};

}  // namespace spgemmd
