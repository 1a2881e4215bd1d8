// RMerge: C = A * B on the GPU by iterative row merging (Gremse et al. 2015;
// Becker et al. 2016 for several rows per thread). Engine-internal API (CUDA
// host code; the public entry point is spgemm::backend with algorithm::rmerge).
//
// Contract:
//  * Operands are device CSR views of the same value type T (float or double),
//    columns sorted and unique within each row; a.cols == b.rows (the caller
//    checks; see spgemm::require_conformable).
//  * C has sorted, unique columns; entries that cancel to zero are kept; its
//    structure equals that of the CPU reference (spgemm::cpu_multiply).
//  * Deterministic: the same inputs give bit-identical output.
//  * Every allocation comes from `memory` on `stream`; the job never holds
//    more than estimate_multiply(...).total() bytes at once. multiply()
//    synchronizes `stream` only to read sizes back (nnz of each pass); it
//    returns with C complete on the stream.
//  * `cancel` is polled between phases; on cancellation or error everything
//    the job allocated is freed (stream-ordered) before the exception leaves.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "cuda/device_csr.hpp"
#include "rmerge/rmerge_tuning.hpp"
#include "spgemm/multiply.hpp"

namespace spgemm::rmerge {

// Size bounds of one intermediate C_l = G_l ... G_1 B.
struct level_bound {
  std::int64_t rows = 0;       // exact: sum over rows of A of ceil(len / M^l)
  std::int64_t nnz_bound = 0;  // sum over those rows of min(products, cols of B)
};

struct product_bounds {
  std::int64_t products = 0;     // scalar multiplications of A * B
  std::int64_t nnz_c_bound = 0;  // sum over rows of A of min(row products, cols of B)
  std::vector<level_bound> intermediates;  // C_1 .. C_{k-1} (plan.split_levels of them)
};

// Row count, nnz and longest row of `a` (one small reduction kernel).
row_stats compute_row_stats(const cuda::structure_view& a, cuda::memory_resource& memory,
                            cudaStream_t stream);

// Bounds of the product and of every intermediate that `p` will create.
product_bounds compute_bounds(const cuda::structure_view& a, const cuda::structure_view& b, const plan& p,
                              cuda::memory_resource& memory, cudaStream_t stream);

// Bytes multiply() with plan `p` allocates at most (exact = false).
memory_estimate estimate_from(const plan& p, const product_bounds& bounds, std::int64_t a_rows,
                              std::size_t value_bytes);

// Plans and bounds the product: the estimate of multiply(a, b, config, ...)
// for values of `value_bytes` bytes. Throws error(bad_input) for an
// unsupported explicit config. `a_stats`: A's row statistics
// (compute_row_stats; the GPU backend keeps them per stored matrix).
memory_estimate estimate_multiply(const cuda::structure_view& a, const cuda::structure_view& b,
                                  std::size_t value_bytes, const rmerge_config& config, const row_stats& a_stats,
                                  cuda::memory_resource& memory, cudaStream_t stream);

// C = A * B with the plan made from A's row statistics and `config`.
template <typename T>
cuda::device_csr<T> multiply(const cuda::csr_view<T>& a, const cuda::csr_view<T>& b, const rmerge_config& config,
                             const row_stats& a_stats, cuda::memory_resource& memory, cudaStream_t stream,
                             const cancel_token& cancel);

// C = A * B with a given plan (p.split_levels and p.last must suit A's longest row).
template <typename T>
cuda::device_csr<T> multiply_planned(const cuda::csr_view<T>& a, const cuda::csr_view<T>& b, const plan& p,
                                     cuda::memory_resource& memory, cudaStream_t stream,
                                     const cancel_token& cancel);

}  // namespace spgemm::rmerge
