// Hash SpGEMM: C = A * B on the GPU with per-bin hash accumulators (the
// technique of nsparse, spECK and OpSparse), row binning by work (bhSPARSE),
// dense shared-memory accumulators per segment of B's columns for the rows of
// C that are dense in them (segment rows), and a dense global accumulator for
// the rows that overflow the largest shared-memory table. The method's row
// of the table (method/method.hpp); the public entry point is
// spgemm::backend with algorithm::hash, or automatic via the planner.
//
// Contract:
//  * Operands are device CSR views of the same value type T (float or double),
//    columns sorted and unique within each row; a.cols == b.rows.
//  * C has sorted, unique columns; entries that cancel to zero are kept.
//  * Over any semiring (job.semiring): C's structure is the product's, its
//    entries the semiring's sums (GraphBLAS's; plus_times as before).
//  * Deterministic: every entry of C is summed in the order of A's entries
//    (as the CPU reference does), bit-identical on every run; see hash.cu.
//  * Every allocation comes from job.memory on job.stream; the job never
//    holds more than estimate(job).total() bytes at once.
//  * The bins and their kernels follow the planner's row rules
//    (planner/row_bins.hpp) with the job's tuning.
//  * `cancel` is polled between phases.
#pragma once

#include "cuda/device_csr.hpp"
#include "method/method.hpp"
#include "spgemm/multiply.hpp"

namespace spgemm::hash {

// From the statistics pass over the product (one kernel, one read-back).
memory_estimate estimate(const method::job& job);

template <typename T>
cuda::device_csr<T> run(const method::job& job, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b);

}  // namespace spgemm::hash
