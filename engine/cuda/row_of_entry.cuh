// Searches in the sorted arrays of CSR matrices, for kernels: the row an
// entry lies in.
#pragma once

#include <cstdint>

#include "spgemm/csr.hpp"

namespace spgemm::cuda {

// The row of entry e of a matrix of `rows` rows: the last r with offsets[r] <= e.
__device__ __forceinline__ std::int64_t row_of_entry(const offset_t* __restrict__ offsets, std::int64_t rows,
                                                     offset_t e) {
  std::int64_t lo = 0;
  std::int64_t hi = rows;
  while (hi - lo > 1) {
    const std::int64_t mid = lo + ((hi - lo) >> 1);
    if (offsets[mid] <= e) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

}  // namespace spgemm::cuda
