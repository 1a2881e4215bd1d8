// ESC SpGEMM: C = A * B on the GPU by expansion, sorting and compression
// (Bell, Dalton & Olson 2012, section 3.3), on slices of the rows of A so
// that the expanded products never exceed a fixed budget. The method's row of
// the table (method/method.hpp); the public entry point is spgemm::backend
// with algorithm::esc (the planner never chooses it).
//
// Contract:
//  * Operands are device CSR views of the same value type T (float or double),
//    columns sorted and unique within each row; a.cols == b.rows.
//  * C has sorted, unique columns; entries that cancel to zero are kept; its
//    structure equals that of the CPU reference (spgemm::cpu_multiply).
//  * Deterministic, and equal to the CPU reference bit for bit: every product
//    is rounded on its own, then the products of an entry of C are added one
//    after another in the order of A's entries (see esc.cu).
//  * Every allocation comes from job.memory on job.stream; the job never
//    holds more than estimate(job).total() bytes at once. The workspace is
//    bounded by the slice budget (tuning::esc_slice_products: products
//    expanded at once; a row of more products is processed alone, by column
//    bands and chunks, so the budget holds for it too) plus O(rows + nnz(A)),
//    independent of the number of products; the formula is in esc.cu.
//  * Over any semiring (job.semiring), and masked (job.mask: C<M> or C<!M>,
//    structural or by value): the products M forbids are dropped after the
//    expansion, before the sort; C holds the entries M allows.
//  * `cancel` is polled between phases and between slices.
#pragma once

#include "cuda/device_csr.hpp"
#include "method/method.hpp"
#include "spgemm/multiply.hpp"

namespace spgemm::esc {

// From the statistics pass over the product (planner/statistics.hpp).
memory_estimate estimate(const method::job& job);

template <typename T>
cuda::device_csr<T> run(const method::job& job, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b);

}  // namespace spgemm::esc
