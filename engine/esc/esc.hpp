// ESC SpGEMM: C = A * B on the GPU by expansion, sorting and compression
// (Bell, Dalton & Olson 2012, section 3.3), on slices of the rows of A so
// that the expanded products never exceed a fixed budget. Engine-internal API
// (CUDA host code; the public entry point is spgemm::backend with
// algorithm::esc; the planner never chooses it).
//
// Contract:
//  * Operands are device CSR views of the same value type T (float or double),
//    columns sorted and unique within each row; a.cols == b.rows.
//  * C has sorted, unique columns; entries that cancel to zero are kept; its
//    structure equals that of the CPU reference (spgemm::cpu_multiply).
//  * Deterministic, and equal to the CPU reference bit for bit: every product
//    is rounded on its own, then the products of an entry of C are added one
//    after another in the order of A's entries (see esc.cu).
//  * Every allocation comes from `memory` on `stream`; the job never holds
//    more than estimate_from(...).total() bytes at once. The workspace is
//    bounded by the slice budget (slice_products()) plus O(rows + nnz(A)),
//    independent of the number of products; the formula is in esc.cu.
//  * `cancel` is polled between phases and between slices.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "cuda/device_csr.hpp"
#include "planner/planner.hpp"
#include "spgemm/multiply.hpp"

namespace spgemm::esc {

// Products expanded at once (the slice budget S): tuning::esc_slice_products,
// clamped to 2 .. 2^30. A row of A with more products than S is processed
// alone, by column bands of S / 2 columns and chunks of S - S / 2 products,
// so the budget holds for it too.
std::int64_t slice_products(const tuning& t);

// Upper bound of what multiply() allocates (exact = false), from the
// statistics of hash::compute_stats.
memory_estimate estimate_from(const planner::job_stats& s, std::size_t value_bytes, const tuning& t);

memory_estimate estimate_multiply(const cuda::structure_view& a, const cuda::structure_view& b,
                                  std::size_t value_bytes, const tuning& t, cuda::memory_resource& memory,
                                  cudaStream_t stream);

template <typename T>
cuda::device_csr<T> multiply(const cuda::csr_view<T>& a, const cuda::csr_view<T>& b,
                             cuda::memory_resource& memory, cudaStream_t stream, const cancel_token& cancel,
                             const tuning& t);

}  // namespace spgemm::esc
