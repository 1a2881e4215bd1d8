// Gustavson's row-wise SpGEMM (gustavson.cpp): the CPU backend's method and,
// through spgemm::cpu_multiply, the test oracle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "cpu/host_memory.hpp"
#include "spgemm/csr.hpp"
#include "spgemm/multiply.hpp"

namespace spgemm::cpu {

// The mask of a product as Gustavson reads it: M's rows, and which of their
// entries count (every one, or those of nonzero value).
struct mask_rows {
  const offset_t* offsets = nullptr;  // nullptr: no mask
  const index_t* cols = nullptr;
  const void* values = nullptr;  // a value mask: M's values (float where f32, else double)
  bool f32 = false;
  bool complement = false;

  template <typename M>
  static mask_rows of(const csr_matrix<M>& m, const mask_options& o) {
    return {m.row_offsets.data(), m.col_indices.data(), o.structural ? nullptr : m.values.data(),
            std::is_same_v<M, float>, o.complement};
  }
  bool counts(offset_t k) const {
    if (values == nullptr) return true;
    return f32 ? static_cast<const float*>(values)[k] != 0.0f : static_cast<const double*>(values)[k] != 0.0;
  }
};

// The slices of rows a product runs in: one per thread, at most one per row of A.
int gustavson_parts(std::int64_t a_rows, int threads);

// Bytes gustavson() holds besides C: the work per row of A, the slice
// bounds, and per slice a marker and an accumulator per column of B.
std::size_t gustavson_workspace_bytes(std::int64_t a_rows, std::int64_t b_cols, std::size_t value_bytes, int threads);
// Of those, the markers, accumulators and bits of `threads` slices: what a product
// of any number of rows (at least `threads`) holds.
std::size_t gustavson_accumulator_bytes(std::int64_t b_cols, std::size_t value_bytes, int threads);

// C = A (+).(x) B over `ring`, within `mask` where it has rows (reference.hpp,
// cpu_multiply), every array taken from `memory` before it is allocated and
// given back before the call returns (C's too: the caller counts C where it
// keeps it). Polls `cancel` about every 10^6 scalar products: throws
// error(cancelled) about a millisecond after it fires.
template <typename T>
csr_matrix<T> gustavson(const csr_matrix<T>& a, const csr_matrix<T>& b, const semiring& ring, const mask_rows& mask,
                        int threads, job_memory& memory, const cancel_token& cancel);

// Bytes gustavson_numeric() holds besides C: the slice bounds and work, and
// an accumulator per column of B and slice.
std::size_t gustavson_numeric_workspace_bytes(std::int64_t a_rows, std::int64_t b_cols, std::size_t value_bytes,
                                              int threads);

// The numeric pass alone: the values of A * B on the known structure of C
// (offsets and columns of a product of operands with these patterns),
// summed in the order gustavson() sums them: the same values, bit for bit.
// C's values are written; its arrays are counted by the caller.
template <typename T>
void gustavson_numeric(const csr_matrix<T>& a, const csr_matrix<T>& b, csr_matrix<T>& c, int threads,
                       job_memory& memory);

}  // namespace spgemm::cpu
