// Rows of a CSR matrix that repeat the row before them: the same columns
// (repeat_same), or each column one further (repeat_shifted): the rows of a
// node's unknowns in a FEM matrix, the interior rows of a stencil along its
// first axis. Where row i of A repeats row i - 1, so does row i of A * B
// (same: whatever B; shifted: where every row of B that row i of A takes
// repeats its own row before, shifted), and a structure pass may skip it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/device_csr.hpp"

namespace spgemm::planner {

inline constexpr unsigned char repeat_same = 1;
inline constexpr unsigned char repeat_shifted = 2;

// What a structure pass writes for the length of a row it skipped as the
// repeat of the row before, until cuda::fill_marked_in_place fills it in.
inline constexpr offset_t repeated_length = -1;

// flags[i] (m.rows of them) = repeat_same | repeat_shifted, as row i repeats
// row i - 1 (an empty row after an empty row: both; row 0: neither). One
// read of the entries, on `stream`.
void find_row_repeats(const cuda::structure_view& m, unsigned char* flags, cudaStream_t stream);

}  // namespace spgemm::planner
