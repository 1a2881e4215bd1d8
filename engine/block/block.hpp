// Block SpGEMM: C = A * B on the GPU for operands made of dense b x b blocks
// (multi-dof FEM matrices: elasticity), b in {1, 2, 3, 4, 6}. Engine-internal
// API (CUDA host code; the public entry point is spgemm::backend with
// algorithm::block, or automatic via the planner where A and B share a block
// size). The rule for block structure is in block_rule.hpp.
//
// Contract:
//  * Operands are device CSR views of the same value type T (float or double),
//    columns sorted and unique within each row; a.cols == b.rows; both
//    operands have the block structure of size `b` (b = 1: any matrices; the
//    method is then correct, not fast).
//  * C has sorted, unique columns and every structural entry (b * b per
//    block of the block product, including entries that cancel to zero): its
//    structure equals that of the CPU reference.
//  * Deterministic: every entry of C is summed in the order of A's entries
//    (block columns of A in order, and within a block its columns in order),
//    products rounded before they are added, as the CPU reference does;
//    bit-identical on every run, no atomics on values.
//  * Every allocation comes from `memory` on `stream`; the job never holds
//    more than estimate_multiply(...).total() bytes at once.
//  * `cancel` is polled between phases.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "block/block_rule.hpp"
#include "cuda/device_csr.hpp"
#include "rmerge/rmerge_tuning.hpp"
#include "spgemm/multiply.hpp"

namespace spgemm::block {

// The sizes (bit b for b in 2, 3, 4, 6) for which `m` has dense b x b block
// structure: one kernel over the entries for all candidate sizes, one read
// back; none where the shape allows none. The GPU backend keeps the result
// per stored matrix.
size_mask detect_sizes(const cuda::structure_view& m, cuda::memory_resource& memory, cudaStream_t stream);

// Upper bound of what multiply() allocates (exact = false) with block size
// `b`; a_stats, b_stats: the row statistics of A and B (the backend keeps
// them per stored matrix).
memory_estimate estimate_multiply(const cuda::structure_view& a, const cuda::structure_view& b, int block_size,
                                  std::size_t value_bytes, const rmerge::row_stats& a_stats, const tuning& t,
                                  cuda::memory_resource& memory, cudaStream_t stream);

template <typename T>
cuda::device_csr<T> multiply(const cuda::csr_view<T>& a, const cuda::csr_view<T>& b, int block_size,
                             const rmerge::row_stats& a_stats, const rmerge::row_stats& b_stats, const tuning& t,
                             cuda::memory_resource& memory, cudaStream_t stream, const cancel_token& cancel);

}  // namespace spgemm::block
