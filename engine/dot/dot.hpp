// Masked dot products: C<M> = A (+).(x) B with one dot product per entry of
// the mask (the dot method SuiteSparse:GraphBLAS runs for masked products,
// "dot3"), A's row against B's column (a row of B^T) or against the rows of B
// its indices select, the cheaper by their lengths: the work is that of M's
// entries only, whatever the product without the mask would cost --
// triangle counting (L<L> = L L) is its case. The method's row of the table (method/method.hpp); the planner
// chooses it for every product with a mask that allows (docs/graph.md).
//
// Contract:
//  * Masked products only, M allowing (job.mask present, not complemented);
//    anything else is bad input. Operands are device CSR views of the same
//    value type T, columns sorted and unique within each row.
//  * C's entries are those of M (counted: every entry, or those of nonzero
//    value) where A's row and B's column share an index k; each is the
//    semiring's sum of its products in the order of k (A's entries), as the
//    CPU reference sums them: plus_times bit for bit, on every run.
//  * Every allocation comes from job.memory on job.stream; the job never
//    holds more than estimate(job).total() bytes at once: a value and a
//    position per entry of M, B's column lengths, then B^T (the GPU
//    transpose, exact) only where the first pass left entries to a second,
//    then C of at most nnz(M) entries.
//  * `cancel` is polled between phases.
#pragma once

#include "cuda/device_csr.hpp"
#include "method/method.hpp"
#include "spgemm/multiply.hpp"

namespace spgemm::dot {

memory_estimate estimate(const method::job& job);

template <typename T>
cuda::device_csr<T> run(const method::job& job, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b);

}  // namespace spgemm::dot
