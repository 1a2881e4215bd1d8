// The GPU matrix ops, host dispatch (see gpu_ops.hpp for the contract and
// gpu_ops_kernels.cuh for the kernels). Each op's allocations, in order,
// are mirrored by its estimate below: C (exact where it is known before the
// op runs, else its bound) and the workspace (flags and positions of 8
// bytes per entry, CUB's storage, sort buffers, transposes).
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include <algorithm>

#include "cuda/compact_entries.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/read_back.hpp"
#include "matrix_ops/gpu_ops.hpp"
#include "matrix_ops/gpu_ops_kernels.cuh"
#include "spgemm/errors.hpp"
#include "transpose/transpose.hpp"

namespace spgemm::matrix_ops {
namespace {

using cuda::csr_view;
using cuda::device_buffer;
using cuda::device_csr;
using cuda::memory_resource;

unsigned blocks_for(std::int64_t threads) {
  return static_cast<unsigned>(std::max<std::int64_t>((threads + kernels::block_threads - 1) / kernels::block_threads, 1));
}

std::size_t flags_bytes(std::int64_t n) { return static_cast<std::size_t>(n + 1) * sizeof(offset_t); }

// v[0 .. n] scanned in place (exclusive), CUB's storage from `memory`.
void exclusive_scan(offset_t* v, std::int64_t n, memory_resource& memory, cudaStream_t stream) {
  std::size_t bytes = cuda::compact_scan_bytes(n);
  device_buffer<unsigned char> temp(memory, bytes, stream);
  SPGEMM_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.data(), bytes, v, n + 1, stream));
}

template <typename T>
std::size_t sort_bytes(std::int64_t nnz, std::int64_t rows) {
  std::size_t bytes = 0;
  SPGEMM_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairsDescending(
      nullptr, bytes, static_cast<const T*>(nullptr), static_cast<T*>(nullptr),
      static_cast<const std::int64_t*>(nullptr), static_cast<std::int64_t*>(nullptr), nnz, rows,
      static_cast<const offset_t*>(nullptr), static_cast<const offset_t*>(nullptr)));
  return bytes;
}

template <typename T>
std::size_t reduce_bytes(std::int64_t n) {
  std::size_t bytes = 0;
  SPGEMM_CUDA_CHECK(cub::DeviceReduce::Reduce(nullptr, bytes, static_cast<const T*>(nullptr), static_cast<T*>(nullptr),
                                              n, kernels::monoid_fn<T>{monoid::plus}, T(0)));
  return bytes;
}

std::size_t transpose_total(const cuda::structure_view& a, std::size_t value_bytes) {
  return transpose::estimate({a.rows, a.cols, a.nnz, value_bytes == sizeof(float) ? value_type::f32 : value_type::f64})
      .total();
}

// --- estimates: what each op's run holds at most ----------------------------

std::size_t select_workspace(std::int64_t nnz) { return flags_bytes(nnz) + cuda::compact_scan_bytes(nnz); }

std::size_t top_rows_workspace(const cuda::structure_view& a, std::size_t value_bytes) {
  const auto n = static_cast<std::size_t>(a.nnz);
  const std::size_t sort = n * (value_bytes + 2 * sizeof(std::int64_t)) +
                           (value_bytes == sizeof(float) ? sort_bytes<float>(a.nnz, a.rows)
                                                         : sort_bytes<double>(a.nnz, a.rows));
  return flags_bytes(a.nnz) + std::max(sort, cuda::compact_scan_bytes(a.nnz));
}

std::size_t reduce_rows_workspace(const cuda::structure_view& a, std::size_t value_bytes) {
  return static_cast<std::size_t>(a.rows) * value_bytes + flags_bytes(a.rows) + cuda::compact_scan_bytes(a.rows);
}

// --- runs --------------------------------------------------------------------

template <typename T, bool Union>
device_csr<T> ewise(const csr_view<T>& a, const csr_view<T>& b, binary_op op, memory_resource& memory,
                    cudaStream_t stream) {
  device_csr<T> c = cuda::with_offsets<T>(a.rows, a.cols, memory, stream);
  kernels::ewise_rows_kernel<T, Union, false><<<blocks_for(a.rows + 1), kernels::block_threads, 0, stream>>>(
      a.rows, a.row_offsets, a.col_indices, a.values, b.row_offsets, b.col_indices, b.values, op,
      c.row_offsets.data(), nullptr, nullptr);
  SPGEMM_CUDA_CHECK_LAUNCH();
  exclusive_scan(c.row_offsets.data(), a.rows, memory, stream);
  cuda::allocate_entries(c, cuda::read_back(c.row_offsets.data() + a.rows, stream), memory, stream);
  kernels::ewise_rows_kernel<T, Union, true><<<blocks_for(a.rows + 1), kernels::block_threads, 0, stream>>>(
      a.rows, a.row_offsets, a.col_indices, a.values, b.row_offsets, b.col_indices, b.values, op,
      c.row_offsets.data(), c.col_indices.data(), c.values.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  return c;
}

template <typename T, typename F>
device_csr<T> map_values(const csr_view<T>& a, F f, memory_resource& memory, cudaStream_t stream) {
  device_csr<T> c = cuda::allocate_csr<T>(a.rows, a.cols, a.nnz, memory, stream);
  SPGEMM_CUDA_CHECK(cudaMemcpyAsync(c.row_offsets.data(), a.row_offsets, c.row_offsets.bytes(),
                                    cudaMemcpyDeviceToDevice, stream));
  if (a.nnz > 0) {
    SPGEMM_CUDA_CHECK(cudaMemcpyAsync(c.col_indices.data(), a.col_indices, c.col_indices.bytes(),
                                      cudaMemcpyDeviceToDevice, stream));
    kernels::map_values_kernel<<<blocks_for(a.nnz), kernels::block_threads, 0, stream>>>(a.nnz, a.values,
                                                                                          c.values.data(), f);
    SPGEMM_CUDA_CHECK_LAUNCH();
  }
  return c;
}

template <typename T>
device_csr<T> selected(const csr_view<T>& a, const select_entries& s, memory_resource& memory, cudaStream_t stream) {
  device_buffer<offset_t> flags(memory, static_cast<std::size_t>(a.nnz) + 1, stream);
  kernels::select_flags_kernel<T><<<blocks_for(a.nnz + 1), kernels::block_threads, 0, stream>>>(
      a.rows, a.nnz, a.row_offsets, a.col_indices, a.values, s, flags.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  return cuda::compact_entries<T>(a.rows, a.cols, a.row_offsets, a.col_indices, a.nnz, a.values, flags, memory, stream);
}

template <typename T>
device_csr<T> top_rows(const csr_view<T>& a, std::int64_t k, memory_resource& memory, cudaStream_t stream) {
  const auto n = static_cast<std::size_t>(a.nnz);
  device_buffer<offset_t> flags(memory, n + 1, stream);
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(flags.data(), 0, flags.bytes(), stream));
  if (a.nnz > 0) {
    device_buffer<T> sorted(memory, n, stream);
    device_buffer<std::int64_t> order_in(memory, n, stream);
    device_buffer<std::int64_t> order(memory, n, stream);
    kernels::iota_kernel<<<blocks_for(a.nnz), kernels::block_threads, 0, stream>>>(a.nnz, order_in.data());
    SPGEMM_CUDA_CHECK_LAUNCH();
    std::size_t bytes = sort_bytes<T>(a.nnz, a.rows);
    device_buffer<unsigned char> temp(memory, bytes, stream);
    SPGEMM_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairsDescending(
        temp.data(), bytes, a.values, sorted.data(), order_in.data(), order.data(), a.nnz, a.rows, a.row_offsets,
        a.row_offsets + 1, stream));
    kernels::top_flags_kernel<<<blocks_for(a.nnz), kernels::block_threads, 0, stream>>>(
        a.rows, a.nnz, a.row_offsets, order.data(), k, flags.data());
    SPGEMM_CUDA_CHECK_LAUNCH();
  }
  return cuda::compact_entries<T>(a.rows, a.cols, a.row_offsets, a.col_indices, a.nnz, a.values, flags, memory, stream);
}

// Each row of A reduced (or counted) as a vector: rows x 1, or 1 x rows where as_row.
template <typename T>
device_csr<T> reduce_rows(const csr_view<T>& a, monoid add, bool count, bool as_row, memory_resource& memory,
                          cudaStream_t stream) {
  device_buffer<T> vals(memory, static_cast<std::size_t>(a.rows), stream);
  device_buffer<offset_t> position(memory, static_cast<std::size_t>(a.rows) + 1, stream);
  kernels::reduce_rows_kernel<T><<<blocks_for(a.rows + 1), kernels::block_threads, 0, stream>>>(
      a.rows, a.row_offsets, a.values, add, count, vals.data(), position.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  exclusive_scan(position.data(), a.rows, memory, stream);
  device_csr<T> c = as_row ? cuda::with_offsets<T>(1, a.rows, memory, stream)
                           : cuda::with_offsets<T>(a.rows, 1, memory, stream);
  cuda::allocate_entries(c, cuda::read_back(position.data() + a.rows, stream), memory, stream);
  const auto kernel = as_row ? kernels::vector_kernel<T, true> : kernels::vector_kernel<T, false>;
  kernel<<<blocks_for(a.rows + 1), kernels::block_threads, 0, stream>>>(a.rows, position.data(), vals.data(),
                                                                        c.row_offsets.data(), c.col_indices.data(),
                                                                        c.values.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  return c;
}

// Every entry reduced by CUB in one pass over A's values (a count: nnz(A),
// known here); 1 x 1, without an entry where A has none.
template <typename T>
device_csr<T> reduce_all(const csr_view<T>& a, monoid add, bool count, memory_resource& memory, cudaStream_t stream) {
  const bool any = a.nnz > 0;
  device_csr<T> c = cuda::allocate_csr<T>(1, 1, any ? 1 : 0, memory, stream);
  const offset_t offsets[2] = {0, any ? 1 : 0};
  const T entries = static_cast<T>(a.nnz);
  SPGEMM_CUDA_CHECK(cudaMemcpyAsync(c.row_offsets.data(), offsets, sizeof offsets, cudaMemcpyHostToDevice, stream));
  if (any) {
    SPGEMM_CUDA_CHECK(cudaMemsetAsync(c.col_indices.data(), 0, c.col_indices.bytes(), stream));
    if (count) {
      SPGEMM_CUDA_CHECK(cudaMemcpyAsync(c.values.data(), &entries, sizeof entries, cudaMemcpyHostToDevice, stream));
    } else {
      std::size_t bytes = reduce_bytes<T>(a.nnz);
      device_buffer<unsigned char> temp(memory, bytes, stream);
      SPGEMM_CUDA_CHECK(cub::DeviceReduce::Reduce(temp.data(), bytes, a.values, c.values.data(), a.nnz,
                                                  kernels::monoid_fn<T>{add}, ops::identity<T>(add), stream));
    }
  }
  SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));  // `offsets` and `entries` leave scope
  return c;
}

template <typename T>
device_csr<T> reduced(const csr_view<T>& a, const reduce& o, memory_resource& memory, cudaStream_t stream,
                      const cancel_token& cancel) {
  if (o.axis == reduce_axis::rows) return reduce_rows(a, o.add, o.count, false, memory, stream);
  if (o.axis == reduce_axis::all) return reduce_all(a, o.add, o.count, memory, stream);
  const device_csr<T> at = transpose::run(a, memory, stream, cancel);
  return reduce_rows(at.view(), o.add, o.count, true, memory, stream);
}

template <typename T>
device_csr<T> scaled(const csr_view<T>& a, const csr_view<T>& v, const scale& o, memory_resource& memory,
                     cudaStream_t stream) {
  const std::int64_t n = o.columns ? a.cols : a.rows;
  device_buffer<T> element(memory, static_cast<std::size_t>(n), stream);
  device_buffer<unsigned char> present(memory, static_cast<std::size_t>(n), stream);
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(present.data(), 0, present.bytes(), stream));
  if (v.nnz > 0) {
    kernels::dense_vector_kernel<T><<<blocks_for(v.nnz), kernels::block_threads, 0, stream>>>(
        v.rows, v.nnz, v.rows == 1 && v.cols == n, v.row_offsets, v.col_indices, v.values, element.data(),
        present.data());
    SPGEMM_CUDA_CHECK_LAUNCH();
  }
  device_buffer<T> values(memory, static_cast<std::size_t>(a.nnz), stream);
  device_buffer<offset_t> flags(memory, static_cast<std::size_t>(a.nnz) + 1, stream);
  kernels::scale_kernel<T><<<blocks_for(a.nnz + 1), kernels::block_threads, 0, stream>>>(
      a.rows, a.nnz, a.row_offsets, a.col_indices, a.values, o.columns, o.op, element.data(), present.data(),
      values.data(), flags.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  return cuda::compact_entries<T>(a.rows, a.cols, a.row_offsets, a.col_indices, a.nnz, values.data(), flags, memory,
                                  stream);
}

// The op's rows on the device, and their lengths scanned into `offsets` (n + 1).
device_buffer<std::int64_t> rows_on_device(const std::vector<std::int64_t>& rows, memory_resource& memory,
                                           cudaStream_t stream) {
  device_buffer<std::int64_t> d(memory, rows.size(), stream);
  if (!rows.empty()) {
    SPGEMM_CUDA_CHECK(cudaMemcpyAsync(d.data(), rows.data(), d.bytes(), cudaMemcpyHostToDevice, stream));
  }
  return d;
}

void scan_row_lengths(const std::int64_t* rows, std::int64_t n, const offset_t* a_off, offset_t* offsets,
                      memory_resource& memory, cudaStream_t stream) {
  kernels::row_lengths_kernel<<<blocks_for(n + 1), kernels::block_threads, 0, stream>>>(n, rows, a_off, offsets);
  SPGEMM_CUDA_CHECK_LAUNCH();
  exclusive_scan(offsets, n, memory, stream);
}

template <typename T>
device_csr<T> rows_of(const csr_view<T>& a, const std::vector<std::int64_t>& taken, memory_resource& memory,
                      cudaStream_t stream) {
  const auto n = static_cast<std::int64_t>(taken.size());
  const device_buffer<std::int64_t> rows = rows_on_device(taken, memory, stream);
  device_csr<T> c = cuda::with_offsets<T>(n, a.cols, memory, stream);
  scan_row_lengths(rows.data(), n, a.row_offsets, c.row_offsets.data(), memory, stream);
  cuda::allocate_entries(c, cuda::read_back(c.row_offsets.data() + n, stream), memory, stream);
  if (n > 0) {
    kernels::gather_rows_kernel<T><<<blocks_for(32 * n), kernels::block_threads, 0, stream>>>(
        n, rows.data(), a.row_offsets, a.col_indices, a.values, c.row_offsets.data(), c.col_indices.data(),
        c.values.data());
    SPGEMM_CUDA_CHECK_LAUNCH();
  }
  return c;
}

}  // namespace

memory_estimate estimate(const matrix_op& op, const std::vector<cuda::structure_view>& operands,
                         std::size_t value_bytes, std::int64_t entries) {
  std::vector<matrix_info> infos;
  for (const cuda::structure_view& m : operands) {
    infos.push_back({m.rows, m.cols, m.nnz, value_bytes == sizeof(float) ? value_type::f32 : value_type::f64});
  }
  const matrix_info c = result_bound(op, infos);
  const cuda::structure_view& a = operands[0];
  memory_estimate e;
  e.nnz_bound = std::holds_alternative<extract_rows>(op) ? entries : c.nnz;
  e.output_bytes = cuda::csr_bytes(c.rows, e.nnz_bound, value_bytes);
  e.method = describe(op);
  std::visit(
      [&](const auto& o) {
        using O = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<O, ewise_add> || std::is_same_v<O, ewise_mult>) {
          e.workspace_bytes = cuda::compact_scan_bytes(a.rows);
        } else if constexpr (std::is_same_v<O, apply_unary> || std::is_same_v<O, apply_scalar>) {
          e.exact = true;
        } else if constexpr (std::is_same_v<O, select_entries>) {
          e.workspace_bytes = select_workspace(a.nnz);
        } else if constexpr (std::is_same_v<O, top_k>) {
          if (!o.columns) {
            e.workspace_bytes = top_rows_workspace(a, value_bytes);
          } else {  // A^T, its top rows, their transpose
            const cuda::structure_view at{a.cols, a.rows, a.nnz, nullptr, nullptr};
            const cuda::structure_view top{a.cols, a.rows, c.nnz, nullptr, nullptr};
            e.workspace_bytes = transpose_total(a, value_bytes) + top_rows_workspace(at, value_bytes) +
                                transpose_total(top, value_bytes);
          }
        } else if constexpr (std::is_same_v<O, reduce>) {
          if (o.axis == reduce_axis::columns) {
            const cuda::structure_view at{a.cols, a.rows, a.nnz, nullptr, nullptr};
            e.workspace_bytes = transpose_total(a, value_bytes) + reduce_rows_workspace(at, value_bytes);
          } else if (o.axis == reduce_axis::all) {  // CUB's reduction of the values
            e.workspace_bytes = value_bytes == sizeof(float) ? reduce_bytes<float>(a.nnz) : reduce_bytes<double>(a.nnz);
          } else {
            e.workspace_bytes = reduce_rows_workspace(a, value_bytes);
          }
        } else if constexpr (std::is_same_v<O, scale>) {
          const std::int64_t n = o.columns ? a.cols : a.rows;
          e.workspace_bytes = static_cast<std::size_t>(n) * (value_bytes + 1) +
                              static_cast<std::size_t>(a.nnz) * value_bytes + select_workspace(a.nnz);
        } else {
          e.exact = true;
          e.workspace_bytes = o.rows.size() * sizeof(std::int64_t) + cuda::compact_scan_bytes(c.rows);
        }
      },
      op);
  return e;
}

std::int64_t extracted_entries(const cuda::structure_view& a, const std::vector<std::int64_t>& rows,
                               memory_resource& memory, cudaStream_t stream) {
  const auto n = static_cast<std::int64_t>(rows.size());
  const device_buffer<std::int64_t> d = rows_on_device(rows, memory, stream);
  device_buffer<offset_t> offsets(memory, static_cast<std::size_t>(n) + 1, stream);
  scan_row_lengths(d.data(), n, a.row_offsets, offsets.data(), memory, stream);
  return cuda::read_back(offsets.data() + n, stream);
}

template <typename T>
device_csr<T> run(const matrix_op& op, const std::vector<csr_view<T>>& operands, memory_resource& memory,
                  cudaStream_t stream, const cancel_token& cancel) {
  const csr_view<T>& a = operands[0];
  cancel.throw_if_cancelled();
  return std::visit(
      [&](const auto& o) -> device_csr<T> {
        using O = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<O, ewise_add>) {
          return ewise<T, true>(a, operands[1], o.op, memory, stream);
        } else if constexpr (std::is_same_v<O, ewise_mult>) {
          return ewise<T, false>(a, operands[1], o.op, memory, stream);
        } else if constexpr (std::is_same_v<O, apply_unary>) {
          return map_values(a, kernels::unary_fn<T>{o.op}, memory, stream);
        } else if constexpr (std::is_same_v<O, apply_scalar>) {
          return map_values(a, kernels::scalar_fn<T>{o}, memory, stream);
        } else if constexpr (std::is_same_v<O, select_entries>) {
          return selected(a, o, memory, stream);
        } else if constexpr (std::is_same_v<O, top_k>) {
          if (!o.columns) return top_rows(a, o.k, memory, stream);
          device_csr<T> top;
          {
            const device_csr<T> at = transpose::run(a, memory, stream, cancel);
            top = top_rows(at.view(), o.k, memory, stream);
          }
          return transpose::run(top.view(), memory, stream, cancel);
        } else if constexpr (std::is_same_v<O, reduce>) {
          return reduced(a, o, memory, stream, cancel);
        } else if constexpr (std::is_same_v<O, scale>) {
          return scaled(a, operands[1], o, memory, stream);
        } else {
          return rows_of(a, o.rows, memory, stream);
        }
      },
      op);
}

template device_csr<float> run(const matrix_op&, const std::vector<csr_view<float>>&, memory_resource&, cudaStream_t,
                               const cancel_token&);
template device_csr<double> run(const matrix_op&, const std::vector<csr_view<double>>&, memory_resource&,
                                cudaStream_t, const cancel_token&);

}  // namespace spgemm::matrix_ops
