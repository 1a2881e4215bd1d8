// bhSPARSE: C = A * B on the GPU by Liu & Vinter's framework (JPDC 2015,
// "A framework for general sparse matrix-matrix multiplication on GPUs and
// heterogeneous processors"): rows binned by the upper bound of their nnz,
// the heap method for the shortest rows, bitonic ESC in shared memory for
// the medium ones, merge path for the long rows, and the hybrid progressive
// allocation of the temporary matrix. The method's row of the table
// (method/method.hpp); the public entry point is spgemm::backend with
// algorithm::bhsparse (the planner does not choose it). With
// tuning::bhsparse_segmented_merge the long rows are computed by Ji et al.'s
// segmented merge instead: the segmerge method runs it so (engine/segmerge/).
//
// Contract:
//  * Operands are device CSR views of the same value type T (float or double),
//    columns sorted and unique within each row; a.cols == b.rows.
//  * C has sorted, unique columns; entries that cancel to zero are kept; its
//    structure equals that of the CPU reference.
//  * Deterministic: every row's sum is a fixed function of its products in
//    A's order (the long rows by merge path equal the CPU reference bit for
//    bit); bit-identical on every run.
//  * Every allocation comes from job.memory on job.stream; the job never
//    holds more than estimate(job).total() bytes at once. The estimate bounds
//    the temporary matrix and every round of the long rows' lists; the run
//    allocates the rounds as it needs them (bhsparse.cu).
//  * `cancel` is polled between stages and rounds.
#pragma once

#include "cuda/device_csr.hpp"
#include "method/method.hpp"
#include "spgemm/multiply.hpp"

namespace spgemm::bhsparse {

// From stage (1) of the method (a pass over the rows of A, counters read back).
memory_estimate estimate(const method::job& job);

template <typename T>
cuda::device_csr<T> run(const method::job& job, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b);

}  // namespace spgemm::bhsparse
