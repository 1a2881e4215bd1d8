#include "cuda/compact_entries.hpp"

#include <cub/device/device_scan.cuh>

#include <algorithm>

#include "cuda/cuda_check.hpp"
#include "cuda/read_back.hpp"

namespace spgemm::cuda {
namespace {

constexpr int block_threads = 256;

unsigned blocks_for(std::int64_t threads) {
  return static_cast<unsigned>(std::max<std::int64_t>((threads + block_threads - 1) / block_threads, 1));
}

__device__ __forceinline__ std::int64_t global_thread() {
  return blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
}

// C's row offsets: the scanned flags at the rows' first entries.
__global__ void row_offsets_kernel(const offset_t* __restrict__ offsets, std::int64_t rows,
                                   const offset_t* __restrict__ position, offset_t* __restrict__ c_off) {
  const std::int64_t r = global_thread();
  if (r <= rows) c_off[r] = position[offsets[r]];
}

// Every kept entry into C at its scanned position.
template <typename T>
__global__ void scatter_kernel(std::int64_t nnz, const index_t* __restrict__ cols, const offset_t* __restrict__ position,
                               const T* __restrict__ vals, index_t* __restrict__ c_col, T* __restrict__ c_val) {
  const std::int64_t e = global_thread();
  if (e >= nnz) return;
  const offset_t at = position[e];
  if (position[e + 1] == at) return;
  c_col[at] = cols[e];
  c_val[at] = vals[e];
}

}  // namespace

std::size_t compact_scan_bytes(std::int64_t nnz) {
  std::size_t bytes = 0;
  SPGEMM_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<offset_t*>(nullptr), nnz + 1));
  return bytes;
}

template <typename T>
device_csr<T> compact_entries(std::int64_t rows, std::int64_t cols, const offset_t* offsets, const index_t* col_indices,
                              std::int64_t nnz, const T* vals, device_buffer<offset_t>& position,
                              memory_resource& memory, cudaStream_t stream) {
  {
    std::size_t bytes = compact_scan_bytes(nnz);
    device_buffer<unsigned char> temp(memory, bytes, stream);
    SPGEMM_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.data(), bytes, position.data(), nnz + 1, stream));
  }
  device_csr<T> c = with_offsets<T>(rows, cols, memory, stream);
  row_offsets_kernel<<<blocks_for(rows + 1), block_threads, 0, stream>>>(offsets, rows, position.data(),
                                                                          c.row_offsets.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  allocate_entries(c, read_back(position.data() + nnz, stream), memory, stream);
  if (nnz > 0) {
    scatter_kernel<T><<<blocks_for(nnz), block_threads, 0, stream>>>(nnz, col_indices, position.data(), vals,
                                                                     c.col_indices.data(), c.values.data());
    SPGEMM_CUDA_CHECK_LAUNCH();
  }
  return c;
}

template device_csr<float> compact_entries(std::int64_t, std::int64_t, const offset_t*, const index_t*, std::int64_t,
                                           const float*, device_buffer<offset_t>&, memory_resource&, cudaStream_t);
template device_csr<double> compact_entries(std::int64_t, std::int64_t, const offset_t*, const index_t*, std::int64_t,
                                            const double*, device_buffer<offset_t>&, memory_resource&, cudaStream_t);

}  // namespace spgemm::cuda
