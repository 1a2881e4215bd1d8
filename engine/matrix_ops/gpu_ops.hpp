// The matrix ops (spgemm/matrix_ops.hpp) on the GPU: the GPU backend's
// run_op. A simple kernel per op, each memory-bound: element-wise ops by
// one thread per row merging two sorted rows, apply by one thread per entry,
// select / scale / top-k by flags and compaction (cuda/compact_entries.hpp),
// reductions by one thread per row, columns through the GPU transpose, all
// entries by CUB's reduction (a tree: plus sums differ from the CPU's
// sequential ones by rounding only), top-k by CUB's stable segmented sort.
//
// Contract: operands are device CSR views of C's value type T (the backend
// converts them), as matrix_ops.hpp's result_bound accepts them. Every
// allocation comes from `memory` on `stream`; run() never holds more than
// estimate().total() bytes at once. Results are those of cpu_run_op:
// exactly, but for the plus sums of a reduction of all entries.
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "cuda/device_csr.hpp"
#include "cuda/memory_resource.hpp"
#include "spgemm/matrix_ops.hpp"
#include "spgemm/multiply.hpp"

namespace spgemm::matrix_ops {

// What run() holds at most. `entries`: for extract_rows, the entries of the
// rows it takes (extracted_entries); unused otherwise.
memory_estimate estimate(const matrix_op& op, const std::vector<cuda::structure_view>& operands,
                         std::size_t value_bytes, std::int64_t entries = 0);

// The entries of A's rows `rows` (with repeats): a kernel and a read-back,
// memory taken from `memory` and freed before it returns.
std::int64_t extracted_entries(const cuda::structure_view& a, const std::vector<std::int64_t>& rows,
                               cuda::memory_resource& memory, cudaStream_t stream);

template <typename T>
cuda::device_csr<T> run(const matrix_op& op, const std::vector<cuda::csr_view<T>>& operands,
                        cuda::memory_resource& memory, cudaStream_t stream, const cancel_token& cancel);

}  // namespace spgemm::matrix_ops
