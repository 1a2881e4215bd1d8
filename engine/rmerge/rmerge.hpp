// RMerge: C = A * B on the GPU by iterative row merging (Gremse et al. 2015;
// Becker et al. 2016 for several rows per thread). The method's row of the
// table (method/method.hpp); the public entry point is spgemm::backend with
// algorithm::rmerge, or automatic via the planner.
//
// Contract:
//  * Operands are device CSR views of the same value type T (float or double),
//    columns sorted and unique within each row; a.cols == b.rows (the caller
//    checks; see spgemm::require_conformable).
//  * C has sorted, unique columns; entries that cancel to zero are kept; its
//    structure equals that of the CPU reference (spgemm::cpu_multiply).
//  * Deterministic: the same inputs give bit-identical output.
//  * Every allocation comes from job.memory on job.stream; the job never
//    holds more than estimate(job).total() bytes at once. run() synchronizes
//    the stream only to read sizes back (nnz of each pass); it returns with C
//    complete on the stream.
//  * The plan (rmerge_tuning.hpp) comes from A's row shape (job.facts) and
//    tuning::rmerge.
//  * `cancel` is polled between phases; on cancellation or error everything
//    the job allocated is freed (stream-ordered) before the exception leaves.
#pragma once

#include "cuda/device_csr.hpp"
#include "method/method.hpp"
#include "spgemm/multiply.hpp"

namespace spgemm::rmerge {

// Plans and bounds the product (one kernel per pass of the plan, one read-back).
memory_estimate estimate(const method::job& job);

template <typename T>
cuda::device_csr<T> run(const method::job& job, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b);

// The numeric phase alone on the structure of this product (method::numeric_fn):
// where A's rows fit one merge pass, its value pass (no workspace); where
// they are split and few, the split passes whole and the last one's value
// pass (their intermediates' workspace); else the table's numeric phase
// (job.methods).
memory_estimate estimate_numeric(const method::job& job, const cuda::structure_view& s);

template <typename T>
void run_numeric(const method::job& job, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b,
                 const cuda::structure_view& s, std::int64_t longest_row, cuda::device_csr<T>& c);

}  // namespace spgemm::rmerge
