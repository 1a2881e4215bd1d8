// Host launchers of the MulLimited kernels (rmerge_kernels.cuh), one
// translation unit per value type plus one for the structure pass, so that
// the 90 kernel instantiations compile in parallel.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "rmerge/rmerge_tuning.hpp"
#include "spgemm/csr.hpp"

namespace spgemm::rmerge {

// The left factor of one MulLimited pass. Explicit: row r holds the entries
// [offsets[r], offsets[r+1]) of (columns, values). Implicit (columns and
// values null): row r merges rows [offsets[r], offsets[r+1]) of B, weight 1.
template <typename T>
struct left_factor {
  std::int64_t rows = 0;
  const offset_t* offsets = nullptr;
  const index_t* columns = nullptr;
  const T* values = nullptr;
  bool is_explicit() const { return columns != nullptr; }
};

// The rows of an explicit left factor and of B that repeat the row before
// them (planner/row_repeats.hpp), for the structure pass to skip; a null
// array: none known.
struct known_repeats {
  const unsigned char* left = nullptr;
  const unsigned char* b = nullptr;
};

// Structure pass: c_lengths[r] = nnz of row r of C, r < rows. Values unused.
// b_stage_capacity (see rmerge_tuning.hpp): entries of B each warp stages in
// shared memory; 0 stages none. Where `repeats` shows that row r of C has the
// structure of row r - 1 (the same, or shifted by one column), c_lengths[r]
// is planner::repeated_length, to be replaced by the length before it.
void launch_mul_limited_count(pass_config pass, std::int64_t rows, const offset_t* left_off,
                              const index_t* left_col, const offset_t* b_off, const index_t* b_col,
                              offset_t* c_lengths, cudaStream_t stream, int b_stage_capacity,
                              known_repeats repeats);

// Value pass: fills the rows of C at c_off. stage_capacity (see
// rmerge_tuning.hpp): entries of C each warp stages in shared memory; 0
// stages none. b_stage_capacity: as in the structure pass. c_col null: c_off
// is a known structure's, and the values alone are written, each row within
// its end (rmerge_kernels.cuh, Known); an implicit left factor (a split
// plan's last pass) then needs default_split_rows_per_thread.
template <typename T>
void launch_mul_limited_values(pass_config pass, const left_factor<T>& left, const offset_t* b_off,
                               const index_t* b_col, const T* b_val, const offset_t* c_off, index_t* c_col,
                               T* c_val, cudaStream_t stream, int stage_capacity, int b_stage_capacity);

// Blocks of 128 threads for `rows` sub-warps of W threads.
inline unsigned mul_limited_blocks(std::int64_t rows, int subwarp) {
  const std::int64_t threads = rows * subwarp;
  return static_cast<unsigned>((threads + block_threads - 1) / block_threads);
}

}  // namespace spgemm::rmerge
