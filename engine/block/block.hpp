// Block SpGEMM: C = A * B on the GPU for operands made of dense b x b blocks
// (multi-dof FEM matrices: elasticity), b in {1, 2, 3, 4, 6}. The method's
// row of the table (method/method.hpp); the public entry point is
// spgemm::backend with algorithm::block, or automatic via the planner where A
// and B share a block size. The rule for block structure is in
// planner/block_structure.hpp.
//
// Contract:
//  * Operands are device CSR views of the same value type T (float or double),
//    columns sorted and unique within each row; a.cols == b.rows; both
//    operands have the block structure of size b = job.facts.block_size()
//    (b = 1: any matrices; the method is then correct, not fast).
//  * C has sorted, unique columns and every structural entry (b * b per
//    block of the block product, including entries that cancel to zero): its
//    structure equals that of the CPU reference.
//  * Deterministic: every entry of C is summed in the order of A's entries
//    (block columns of A in order, and within a block its columns in order),
//    products rounded before they are added, as the CPU reference does;
//    bit-identical on every run, no atomics on values.
//  * Every allocation comes from job.memory on job.stream; the job never
//    holds more than estimate(job).total() bytes at once.
//  * `cancel` is polled between phases.
#pragma once

#include "cuda/device_csr.hpp"
#include "method/method.hpp"
#include "spgemm/multiply.hpp"

namespace spgemm::block {

// The block patterns and the estimate of their product (by the method the
// planner picks for their shape), scaled to b x b blocks.
memory_estimate estimate(const method::job& job);

template <typename T>
cuda::device_csr<T> run(const method::job& job, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b);

// The numeric pass alone (method::numeric_fn): C's values (and again its
// structure) on the known structure s of a product of operands with these
// patterns, from any method (all give the reference's structure), blocks of
// b = job.facts.block_size(). Workspace: s's block pattern where b > 1.
memory_estimate estimate_numeric(const method::job& job, const cuda::structure_view& s);
template <typename T>
void run_numeric(const method::job& job, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b,
                 const cuda::structure_view& s, std::int64_t longest_row, cuda::device_csr<T>& c);

}  // namespace spgemm::block
