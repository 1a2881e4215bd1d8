// Segmented merge SpGEMM: C = A * B on the GPU by Ji, Lu, Hou, Wang, Liu &
// Vinter's method (NPC 2020, "Segmented merge: a new primitive for parallel
// sparse matrix computations", section 4.3): bhSPARSE's bins (Liu & Vinter
// 2015) for the rows of up to 512 products, and its last bin -- every row of
// more -- by segmented merge: the scaled rows of B saved to global memory as
// the sub-segments of each row of C (a segment), all the long rows of a
// slice merged in one segmented-merge computation (cuda/segmented_merge.cuh),
// then compressed. The method's row of the table (method/method.hpp); the
// public entry point is spgemm::backend with algorithm::segmerge (the
// planner does not choose it).
//
// It runs the bhsparse method (found in the table) with
// tuning::bhsparse_segmented_merge set: the framework and the short bins are
// bhSPARSE's, the long bin Ji et al.'s (engine/bhsparse/segmerge_kernels.cuh).
//
// Contract: bhsparse's (bhsparse.hpp); the long rows equal the CPU reference
// bit for bit (the merge is stable, each column's products are added in A's
// order, a long row's result carried across its chunks). The workspace holds
// a slice of products (tuning::segmerge_slice_products) twice, not all of them.
#pragma once

#include "cuda/device_csr.hpp"
#include "method/method.hpp"
#include "spgemm/multiply.hpp"

namespace spgemm::segmerge {

memory_estimate estimate(const method::job& job);

template <typename T>
cuda::device_csr<T> run(const method::job& job, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b);

}  // namespace spgemm::segmerge
