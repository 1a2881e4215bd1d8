// The GPU transpose: CSR of A -> CSR of A^T (the CSC of A), columns sorted
// within each row, values exactly the input values, bit-identical on every
// run. Host-callable; the method is described in transpose_kernels.cuh, the
// launches in transpose.cu.
#pragma once

#include <cuda_runtime_api.h>

#include "cuda/device_csr.hpp"
#include "cuda/memory_resource.hpp"
#include "spgemm/multiply.hpp"

namespace spgemm::transpose {

// Bytes run() allocates (output plus workspace): exact.
memory_estimate estimate(const matrix_info& a);

// The transpose of `a`, enqueued on `stream` without a host synchronization
// (the caller synchronizes before it reads the result), every allocation from
// `memory`. Needs a valid CSR: columns strictly increasing within each row;
// nnz(a) and rows(a) below 2^31.
template <typename T>
cuda::device_csr<T> run(const cuda::csr_view<T>& a, cuda::memory_resource& memory, cudaStream_t stream,
                        const cancel_token& cancel);

}  // namespace spgemm::transpose
