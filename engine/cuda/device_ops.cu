// Value conversion and transpose on the device.
//
// Transpose method: one stable radix sort of (column, entry index) pairs over
// the entries in CSR order (keys of bits(cols) bits only). The input is
// ordered by (row, column), so a stable sort by column yields the (column,
// row) order of A^T: sorted rows, bit-identical on every run. Then one gather
// pass: entry k of A^T takes the value of entry idx[k] of A and its row (a
// binary search of idx[k] in A's row offsets; neighbouring threads search
// neighbouring entries, so the searches hit the same cache lines), and the
// row offsets of A^T come from the boundaries of the sorted keys (thread k
// writes offsets (key[k-1], key[k]]) -- no atomics, no scan.
// Workspace: 12 bytes per entry (entry indices in and out, sorted keys) plus
// CUB's temporary storage. Work: O(nnz * bits(cols)/8) for the radix sort,
// O(nnz log rows) cached reads for the gather, O(nnz + cols) for the offsets.
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <climits>

#include "cuda/cuda_check.hpp"
#include "cuda/device_ops.hpp"
#include "spgemm/errors.hpp"

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

__global__ void iota_kernel(index_t* __restrict__ out, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    out[i] = static_cast<index_t>(i);
  }
}

// Entry k of A^T from entry idx[k] of A; row offsets of A^T from the sorted keys.
template <typename T>
__global__ void transpose_gather_kernel(const index_t* __restrict__ keys, const index_t* __restrict__ idx,
                                        std::int64_t nnz, const offset_t* __restrict__ a_off, std::int64_t a_rows,
                                        const T* __restrict__ a_val, std::int64_t a_cols,
                                        offset_t* __restrict__ t_off, index_t* __restrict__ t_col,
                                        T* __restrict__ t_val) {
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; k < nnz;
       k += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const offset_t e = idx[k];
    std::int64_t lo = 0;
    std::int64_t hi = a_rows - 1;
    while (lo < hi) {  // last row r with a_off[r] <= e
      const std::int64_t mid = (lo + hi + 1) >> 1;
      if (a_off[mid] <= e) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    t_col[k] = static_cast<index_t>(lo);
    t_val[k] = a_val[e];
    const index_t key = keys[k];
    const std::int64_t previous = k > 0 ? static_cast<std::int64_t>(keys[k - 1]) : -1;
    for (std::int64_t c = previous + 1; c <= key; ++c) t_off[c] = k;
    if (k == nnz - 1) {
      for (std::int64_t c = static_cast<std::int64_t>(key) + 1; c <= a_cols; ++c) t_off[c] = nnz;
    }
  }
}

int key_bits(std::int64_t cols) {
  int bits = 1;
  while (bits < 31 && (std::int64_t{1} << bits) < cols) ++bits;
  return bits;
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
  return sort_temp_bytes<index_t>(a.nnz, key_bits(a.cols));
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
  e.workspace_bytes = 0;
  if (a.nnz > 0) e.workspace_bytes = 3 * static_cast<std::size_t>(a.nnz) * sizeof(index_t) + transpose_temp_bytes(a);
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
  if (a.nnz > static_cast<std::int64_t>(INT32_MAX)) {
    throw_bad_input("transpose of more than 2^31 - 1 entries is not supported on the GPU");
  }
  t.col_indices = device_buffer<index_t>(allocator, static_cast<std::size_t>(a.nnz), stream, meter);
  t.values = device_buffer<T>(allocator, static_cast<std::size_t>(a.nnz), stream, meter);
  if (a.nnz == 0) {
    SPGEMM_CUDA_CHECK(cudaMemsetAsync(t.row_offsets.data(), 0, t.row_offsets.bytes(), stream));
    SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
    return t;
  }

  const std::size_t temp_bytes = transpose_temp_bytes(matrix_info{a.rows, a.cols, a.nnz, value_type_of<T>()});
  device_buffer<unsigned char> temp(allocator, temp_bytes, stream, meter);
  device_buffer<index_t> idx_in(allocator, static_cast<std::size_t>(a.nnz), stream, meter);
  device_buffer<index_t> idx_out(allocator, static_cast<std::size_t>(a.nnz), stream, meter);
  device_buffer<index_t> keys_out(allocator, static_cast<std::size_t>(a.nnz), stream, meter);
  iota_kernel<<<blocks_for(a.nnz), threads_per_block, 0, stream>>>(idx_in.data(), a.nnz);
  SPGEMM_CUDA_CHECK_LAUNCH();
  std::size_t bytes = temp_bytes;
  SPGEMM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, a.col_indices, keys_out.data(),
                                                    static_cast<const index_t*>(idx_in.data()), idx_out.data(),
                                                    a.nnz, 0, key_bits(a.cols), stream));
  cancel.throw_if_cancelled();
  transpose_gather_kernel<T><<<blocks_for(a.nnz), threads_per_block, 0, stream>>>(
      keys_out.data(), idx_out.data(), a.nnz, a.row_offsets, a.rows, a.values, a.cols, t.row_offsets.data(),
      t.col_indices.data(), t.values.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
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
