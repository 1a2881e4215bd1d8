// The mask of a masked product (method::job_mask) as kernels read it: whether
// M allows an entry (i, j) of C, by a binary search in M's row i.
#pragma once

#include <cstdint>

#include "method/method.hpp"
#include "spgemm/csr.hpp"

namespace spgemm::method {

template <typename T>
struct mask_view {
  const offset_t* offsets = nullptr;  // nullptr: no mask, every entry allowed
  const index_t* cols = nullptr;
  const T* values = nullptr;  // a value mask's values; nullptr: structural
  bool complement = false;

  // Whether M holds (row, col) and counts it (structural, or a nonzero value).
  __device__ __forceinline__ bool holds(std::int64_t row, index_t col) const {
    offset_t lo = offsets[row];
    offset_t hi = offsets[row + 1];
    while (lo < hi) {
      const offset_t mid = lo + ((hi - lo) >> 1);
      if (cols[mid] < col) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo < offsets[row + 1] && cols[lo] == col && (values == nullptr || values[lo] != T(0));
  }
  __device__ __forceinline__ bool allows(std::int64_t row, index_t col) const {
    return offsets == nullptr || holds(row, col) != complement;
  }
};

template <typename T>
mask_view<T> mask_view_of(const job_mask& m) {
  return {m.m.row_offsets, m.m.col_indices, static_cast<const T*>(m.values), m.complement};
}

}  // namespace spgemm::method
