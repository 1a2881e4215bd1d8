// Hash SpGEMM: C = A * B on the GPU with per-bin hash accumulators (the
// technique of nsparse, spECK and OpSparse), row binning by work (bhSPARSE),
// dense shared-memory accumulators per segment of B's columns for the rows of
// C that are dense in them (segment rows), and a dense global accumulator for
// the rows that overflow the largest shared-memory table. Engine-internal API (CUDA host code; the public entry
// point is spgemm::backend with algorithm::hash, or automatic via the planner).
//
// Contract:
//  * Operands are device CSR views of the same value type T (float or double),
//    columns sorted and unique within each row; a.cols == b.rows.
//  * C has sorted, unique columns; entries that cancel to zero are kept.
//  * Deterministic: every entry of C is summed in the order of A's entries
//    (as the CPU reference does), bit-identical on every run; see hash.cu.
//  * Every allocation comes from `memory` on `stream`; the job never holds
//    more than estimate_from(...).total() bytes at once.
//  * `cancel` is polled between phases.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "cuda/device_csr.hpp"
#include "planner/planner.hpp"
#include "spgemm/multiply.hpp"

namespace spgemm::hash {

// Statistics of the product (one kernel, one read-back): what the planner and
// the estimate need.
planner::job_stats compute_stats(const cuda::structure_view& a, const cuda::structure_view& b,
                                 std::size_t value_bytes, const tuning& t, cuda::memory_resource& memory,
                                 cudaStream_t stream);

// Upper bound of what multiply() allocates (exact = false).
memory_estimate estimate_from(const planner::job_stats& s, std::size_t value_bytes);

memory_estimate estimate_multiply(const cuda::structure_view& a, const cuda::structure_view& b,
                                  std::size_t value_bytes, const tuning& t, cuda::memory_resource& memory,
                                  cudaStream_t stream);

template <typename T>
cuda::device_csr<T> multiply(const cuda::csr_view<T>& a, const cuda::csr_view<T>& b,
                             cuda::memory_resource& memory, cudaStream_t stream, const cancel_token& cancel,
                             const tuning& t);

}  // namespace spgemm::hash
