#include "cuda/copy_rows.hpp"

#include <algorithm>
#include <string>

#include "cuda/cuda_check.hpp"
#include "cuda/device_guard.hpp"
#include "spgemm/errors.hpp"

namespace spgemm::cuda {
namespace {

constexpr int threads_per_block = 256;

__global__ void rebase_kernel(offset_t* __restrict__ offsets, std::int64_t n, offset_t base) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    offsets[i] -= base;
  }
}

// `bytes` from `src` on `src_device` to `dst` on `dst_device`, on `stream`.
void copy_bytes(void* dst, int dst_device, const void* src, int src_device, std::size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return;
  if (src_device == dst_device) {
    SPGEMM_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
  } else {
    SPGEMM_CUDA_CHECK(cudaMemcpyPeerAsync(dst, dst_device, src, src_device, bytes, stream));
  }
}

}  // namespace

template <typename T>
device_csr<T> copy_rows(const device_csr<T>& src, int src_device, std::int64_t row_begin, std::int64_t row_end,
                        memory_resource& memory, cudaStream_t stream) {
  require_rows_within(row_begin, row_end, src.rows);
  int device = 0;
  SPGEMM_CUDA_CHECK(cudaGetDevice(&device));
  // Where the rows' entries begin and end: two offsets of the source, read
  // on the source's device (a copy out of another device's memory on this
  // device's stream fails with "invalid argument"; on two H100s it did).
  offset_t ends[2] = {0, 0};
  {
    const device_guard on_source(src_device);
    SPGEMM_CUDA_CHECK(cudaMemcpy(&ends[0], src.row_offsets.data() + row_begin, sizeof(offset_t),
                                 cudaMemcpyDeviceToHost));
    SPGEMM_CUDA_CHECK(cudaMemcpy(&ends[1], src.row_offsets.data() + row_end, sizeof(offset_t),
                                 cudaMemcpyDeviceToHost));
  }
  const offset_t first = ends[0];
  const offset_t nnz = ends[1] - first;
  const std::int64_t rows = row_end - row_begin;

  device_csr<T> d = allocate_csr<T>(rows, src.cols, nnz, memory, stream);
  copy_bytes(d.row_offsets.data(), device, src.row_offsets.data() + row_begin, src_device,
             d.row_offsets.bytes(), stream);
  copy_bytes(d.col_indices.data(), device, src.col_indices.data() + first, src_device, d.col_indices.bytes(), stream);
  copy_bytes(d.values.data(), device, src.values.data() + first, src_device, d.values.bytes(), stream);
  if (first != 0) {
    const std::int64_t n = rows + 1;
    const auto blocks = static_cast<unsigned>(
        std::min<std::int64_t>(std::max<std::int64_t>((n + threads_per_block - 1) / threads_per_block, 1), 1 << 20));
    rebase_kernel<<<blocks, threads_per_block, 0, stream>>>(d.row_offsets.data(), n, first);
    SPGEMM_CUDA_CHECK_LAUNCH();
  }
  return d;
}

template device_csr<float> copy_rows(const device_csr<float>&, int, std::int64_t, std::int64_t, memory_resource&,
                                     cudaStream_t);
template device_csr<double> copy_rows(const device_csr<double>&, int, std::int64_t, std::int64_t, memory_resource&,
                                      cudaStream_t);

}  // namespace spgemm::cuda
