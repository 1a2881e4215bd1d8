// A rows_sink (spgemm/csr.hpp) that puts the pieces a fetch hands it back
// together into a host matrix, checking the order the sink's contract
// promises: the offsets first, in one piece, then each array's pieces end to
// end.
#pragma once

#include <gtest/gtest.h>

#include <cstring>

#include "spgemm/csr.hpp"

namespace spgemm::testing {

template <typename T>
class collected_rows final : public rows_sink {
 public:
  explicit collected_rows(std::int64_t cols) { rows_.cols = cols; }

  void piece(array which, std::int64_t at, const void* data, std::size_t bytes) noexcept override {
    ++pieces_;
    switch (which) {
      case array::row_offsets:
        EXPECT_EQ(pieces_, 1) << "the offsets come first, in one piece";
        EXPECT_EQ(at, 0);
        rows_.row_offsets.resize(bytes / sizeof(offset_t));
        std::memcpy(rows_.row_offsets.data(), data, bytes);
        rows_.rows = static_cast<std::int64_t>(rows_.row_offsets.size()) - 1;
        return;
      case array::col_indices:
        append(rows_.col_indices, at, data, bytes);
        return;
      case array::values:
        append(rows_.values, at, data, bytes);
        return;
    }
  }

  const csr_matrix<T>& rows() const { return rows_; }
  int pieces() const { return pieces_; }

 private:
  template <typename V>
  static void append(std::vector<V>& to, std::int64_t at, const void* data, std::size_t bytes) {
    EXPECT_EQ(static_cast<std::size_t>(at), to.size() * sizeof(V)) << "pieces end to end";
    const auto* from = static_cast<const V*>(data);
    to.insert(to.end(), from, from + bytes / sizeof(V));
  }

  csr_matrix<T> rows_;
  int pieces_ = 0;
};

}  // namespace spgemm::testing
