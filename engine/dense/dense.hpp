// Dense SpGEMM: C = A * B on the GPU with dense accumulators in shared
// memory over tiles of B's columns, a row of C per block or, where A has few
// rows, per thread-block cluster (its blocks split the row's entries of A and
// add their accumulators through distributed shared memory). For products
// whose rows of C are dense in a narrow B: A * A^T of a wide matrix with few
// rows (LP constraint matrices), matrices of a few hundred dense-ish columns.
// The method's row of the table (method/method.hpp); the public entry point
// is spgemm::backend with algorithm::dense, or automatic via the planner
// (planner/job_rules.hpp).
//
// Contract:
//  * Operands are device CSR views of the same value type T (float or double),
//    columns sorted and unique within each row; a.cols == b.rows.
//  * C has sorted, unique columns; entries that cancel to zero are kept; its
//    structure equals that of the CPU reference.
//  * Deterministic: every entry of C is a fixed sum tree of its products (the
//    products of a warp's run of A's entries in order, then warps in order,
//    then the cluster's blocks in order); bit-identical on every run on one
//    device (the plan reads the device's SMs and shared memory).
//  * Every allocation comes from job.memory on job.stream: C (its offsets
//    first, the entries exactly once their number is known) and the scan's
//    storage; nothing else. Any B is correct: a B wider than a tile is taken
//    a tile at a time (slowly: the planner picks the method for narrow B only).
//  * `cancel` is polled between phases.
#pragma once

#include "cuda/device_csr.hpp"
#include "method/method.hpp"
#include "spgemm/multiply.hpp"

namespace spgemm::dense {

// From the statistics pass over the product (the bound of nnz(C)).
memory_estimate estimate(const method::job& job);

template <typename T>
cuda::device_csr<T> run(const method::job& job, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b);

}  // namespace spgemm::dense
