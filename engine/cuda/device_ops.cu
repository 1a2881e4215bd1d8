// Value conversion and transpose on the device.
//
// Transpose method (a simple correct one; the segmented-merge transpose comes
// later): (1) count the entries of every column with integer atomics and
// exclusive-scan the counts into the row offsets of A^T; (2) expand the row
// index of every entry; (3) stable radix sort of (column, row) pairs and of
// (column, value) pairs keyed by column over the entries in CSR order. The
// input is ordered by (row, column), so a stable sort by column yields the
// (column, row) order of A^T: sorted rows, bit-identical on every run.
// Workspace: 8 bytes per entry (row indices and sorted keys) plus CUB's
// temporary storage. Work: O(nnz) for the counts, O(nnz * bits(cols)/8) for
// the radix sorts.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>

#include "cuda/cuda_check.hpp"
#include "cuda/device_ops.hpp"

namespace spgemm::cuda {
namespace {

constexpr int threads_per_block = 256;

unsigned blocks_for(std::int64_t n) {
  const std::int64_t b = (n + threads_per_block - 1) / threads_per_block;
  return static_cast<unsigned>(std::min<std::int64_t>(std::max<std::int64_t>(b, 1), 1 << 20));
}

template <typename To, typename From>
__global__ void convert_kernel(const From* __restrict__ in, To* __restrict__ out, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    out[i] = static_cast<To>(in[i]);
  }
}

__global__ void column_count_kernel(const index_t* __restrict__ cols, std::int64_t nnz,
                                    offset_t* __restrict__ counts) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < nnz;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    atomicAdd(reinterpret_cast<unsigned long long*>(counts + cols[i]), 1ull);
  }
}

__global__ void expand_rows_kernel(const offset_t* __restrict__ offsets, std::int64_t rows,
                                   index_t* __restrict__ row_of) {
  for (std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; r < rows;
       r += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    for (offset_t e = offsets[r]; e < offsets[r + 1]; ++e) row_of[e] = static_cast<index_t>(r);
  }
}

int key_bits(std::int64_t cols) {
  int bits = 1;
  while (bits < 31 && (std::int64_t{1} << bits) < cols) ++bits;
  return bits;
}

std::size_t scan_temp_bytes(std::int64_t items) {
  std::size_t bytes = 0;
  SPGEMM_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<offset_t*>(nullptr), items));
  return bytes;
}

template <typename V>
std::size_t sort_temp_bytes(std::int64_t items, int bits) {
  std::size_t bytes = 0;
  SPGEMM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, static_cast<const index_t*>(nullptr),
                                                    static_cast<index_t*>(nullptr),
                                                    static_cast<const V*>(nullptr), static_cast<V*>(nullptr),
                                                    items, 0, bits));
  return bytes;
}

std::size_t transpose_temp_bytes(const matrix_info& a) {
  const int bits = key_bits(a.cols);
  std::size_t temp = scan_temp_bytes(a.cols + 1);
  temp = std::max(temp, sort_temp_bytes<index_t>(a.nnz, bits));
  temp = std::max(temp, a.type == value_type::f32 ? sort_temp_bytes<float>(a.nnz, bits)
                                                  : sort_temp_bytes<double>(a.nnz, bits));
  return temp;
}

}  // namespace

template <typename To, typename From>
device_buffer<To> convert_values(const From* in, std::size_t n, device_allocator& allocator,
                                 cudaStream_t stream, job_meter* meter) {
  device_buffer<To> out(allocator, n, stream, meter);
  if (n > 0) {
    convert_kernel<To, From><<<blocks_for(static_cast<std::int64_t>(n)), threads_per_block, 0, stream>>>(
        in, out.data(), static_cast<std::int64_t>(n));
    SPGEMM_CUDA_CHECK_LAUNCH();
  }
  return out;
}

memory_estimate estimate_transpose(const matrix_info& a) {
  memory_estimate e;
  e.output_bytes = csr_bytes(a.cols, a.nnz, size_of(a.type));
  e.workspace_bytes = 2 * static_cast<std::size_t>(a.nnz) * sizeof(index_t);
  if (a.nnz > 0 || a.cols > 0) e.workspace_bytes += transpose_temp_bytes(a);
  e.exact = true;
  e.method = "transpose";
  return e;
}

template <typename T>
device_csr<T> transpose(const csr_view<T>& a, device_allocator& allocator, cudaStream_t stream,
                        job_meter* meter, const cancel_token& cancel) {
  device_csr<T> t;
  t.rows = a.cols;
  t.cols = a.rows;
  t.nnz = a.nnz;
  t.row_offsets = device_buffer<offset_t>(allocator, static_cast<std::size_t>(a.cols) + 1, stream, meter);
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(t.row_offsets.data(), 0, t.row_offsets.bytes(), stream));
  t.col_indices = device_buffer<index_t>(allocator, static_cast<std::size_t>(a.nnz), stream, meter);
  t.values = device_buffer<T>(allocator, static_cast<std::size_t>(a.nnz), stream, meter);
  if (a.nnz == 0) {
    SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
    return t;
  }

  const std::size_t temp_bytes = transpose_temp_bytes(matrix_info{a.rows, a.cols, a.nnz, value_type_of<T>()});
  device_buffer<unsigned char> temp(allocator, temp_bytes, stream, meter);

  // (1) Row offsets of A^T.
  column_count_kernel<<<blocks_for(a.nnz), threads_per_block, 0, stream>>>(a.col_indices, a.nnz,
                                                                            t.row_offsets.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  std::size_t bytes = temp_bytes;
  SPGEMM_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.data(), bytes, t.row_offsets.data(),
                                                  static_cast<std::int64_t>(a.cols + 1), stream));
  cancel.throw_if_cancelled();

  // (2) Row index of every entry; (3) stable sorts keyed by column.
  device_buffer<index_t> row_of(allocator, static_cast<std::size_t>(a.nnz), stream, meter);
  device_buffer<index_t> keys_out(allocator, static_cast<std::size_t>(a.nnz), stream, meter);
  expand_rows_kernel<<<blocks_for(a.rows), threads_per_block, 0, stream>>>(a.row_offsets, a.rows,
                                                                          row_of.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  const int bits = key_bits(a.cols);
  bytes = temp_bytes;
  SPGEMM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, a.col_indices, keys_out.data(),
                                                    static_cast<const index_t*>(row_of.data()),
                                                    t.col_indices.data(), a.nnz, 0, bits, stream));
  cancel.throw_if_cancelled();
  bytes = temp_bytes;
  SPGEMM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, a.col_indices, keys_out.data(),
                                                    a.values, t.values.data(), a.nnz, 0, bits, stream));
  SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  return t;
}

template device_buffer<float> convert_values(const double*, std::size_t, device_allocator&, cudaStream_t,
                                             job_meter*);
template device_buffer<double> convert_values(const float*, std::size_t, device_allocator&, cudaStream_t,
                                              job_meter*);
template device_csr<float> transpose(const csr_view<float>&, device_allocator&, cudaStream_t, job_meter*,
                                     const cancel_token&);
template device_csr<double> transpose(const csr_view<double>&, device_allocator&, cudaStream_t, job_meter*,
                                      const cancel_token&);

}  // namespace spgemm::cuda
