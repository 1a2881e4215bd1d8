// CSR checks on the device. Offsets: a thread per offset. Columns: a warp per
// row, each lane comparing its entries with the one before. Each kernel
// records the first bad row (atomicMin); the host reads it back. Workspace:
// one 8-byte counter. Time: one pass over the offsets and one over the columns.
#include <algorithm>
#include <climits>
#include <string>

#include "cuda/csr_check.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/read_back.hpp"

namespace spgemm::cuda {
namespace {

constexpr int threads_per_block = 256;
constexpr unsigned long long none = ULLONG_MAX;

unsigned blocks_for(std::int64_t threads) {
  const std::int64_t b = (threads + threads_per_block - 1) / threads_per_block;
  return static_cast<unsigned>(std::min<std::int64_t>(std::max<std::int64_t>(b, 1), 1 << 16));
}

// The first i where offsets[i] breaks a rule: offsets[0] != 0, offsets[i] <
// offsets[i - 1], offsets[rows] != nnz.
__global__ void check_offsets_kernel(structure_view m, unsigned long long* first_bad) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i <= m.rows;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const offset_t o = m.row_offsets[i];
    const bool bad = (i == 0 && o != 0) || (i > 0 && o < m.row_offsets[i - 1]) || (i == m.rows && o != m.nnz);
    if (bad) atomicMin(first_bad, static_cast<unsigned long long>(i));
  }
}

// The first row with a column outside [0, cols) or not above the one before it.
__global__ void check_columns_kernel(structure_view m, unsigned long long* first_bad) {
  const int lane = threadIdx.x % 32;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t r = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / 32; r < m.rows;
       r += warps) {
    const offset_t begin = m.row_offsets[r], end = m.row_offsets[r + 1];
    bool bad = false;
    for (offset_t k = begin + lane; k < end && !bad; k += 32) {
      const index_t c = m.col_indices[k];
      bad = c < 0 || c >= m.cols || (k > begin && m.col_indices[k - 1] >= c);
    }
    if (__any_sync(0xffffffffu, bad) && lane == 0) atomicMin(first_bad, static_cast<unsigned long long>(r));
  }
}

}  // namespace

std::string find_structure_problem(const structure_view& m, memory_resource& memory, cudaStream_t stream) {
  device_buffer<unsigned long long> first_bad(memory, 1, stream);
  auto reset = [&] { SPGEMM_CUDA_CHECK(cudaMemsetAsync(first_bad.data(), 0xff, sizeof(unsigned long long), stream)); };
  reset();
  check_offsets_kernel<<<blocks_for(m.rows + 1), threads_per_block, 0, stream>>>(m, first_bad.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  unsigned long long bad = read_back(first_bad.data(), stream);
  if (bad != none) {
    const auto i = static_cast<std::int64_t>(bad);
    const offset_t o = read_back(m.row_offsets + i, stream);
    const offset_t before = i > 0 ? read_back(m.row_offsets + i - 1, stream) : 0;
    const std::string at = "row_offsets[" + std::to_string(i) + "] = " + std::to_string(o);
    if (i == 0 && o != 0) return at + ", expected 0";
    if (i > 0 && o < before) {
      return at + " is less than row_offsets[" + std::to_string(i - 1) + "] = " + std::to_string(before) +
             " (offsets must not decrease)";
    }
    return at + " but there are " + std::to_string(m.nnz) + " column indices (the last offset must equal nnz)";
  }
  if (m.nnz == 0) return {};
  reset();
  check_columns_kernel<<<blocks_for(m.rows * 32), threads_per_block, 0, stream>>>(m, first_bad.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  bad = read_back(first_bad.data(), stream);
  if (bad == none) return {};
  return "row " + std::to_string(bad) + ": a column outside [0, " + std::to_string(m.cols) +
         ") or out of order (columns within a row must be sorted and unique)";
}

}  // namespace spgemm::cuda
