// The setup passes' dispatch on the GPU (gpu_passes.hpp; their kernels in
// setup_kernels.cuh):
//  strength     the nodes' diagonal norms, the strong blocks counted, the scan, written
//  aggregate    rounds of the distance-2 independent set until no node is
//               undecided (one read-back a round), the roots numbered by a
//               scan, the two sweeps, the aggregation matrix's offsets by a scan
//  tentative    T's row counts and offsets, its entries from the near null
//               space, the nodes sorted by aggregate (CUB's stable radix sort:
//               each aggregate's members in node order, as the CPU pass takes
//               them), then a thread per aggregate orthonormalizes its block
//  prolongator  the merged rows of T and A T counted, the scan, written
#include <cub/device/device_radix_sort.cuh>

#include "amg/gpu/gpu_passes.hpp"
#include "amg/gpu/setup_kernels.cuh"
#include "cuda/cuda_check.hpp"
#include "cuda/read_back.hpp"

namespace spgemm::amg::gpu {

cuda::device_csr<float> strength(const cuda::csr_view<double>& a, int block_size, double theta,
                                 cuda::memory_resource& memory, cudaStream_t stream) {
  using namespace kernels;
  const std::int64_t nodes = a.rows / block_size;
  cuda::device_csr<float> s = cuda::with_offsets<float>(nodes, nodes, memory, stream);
  cuda::device_buffer<double> diagonal(memory, static_cast<std::size_t>(nodes), stream);
  const unsigned blocks = setup_blocks(nodes);
  node_diagonal_kernel<<<blocks, setup_threads, 0, stream>>>(nodes, block_size, a.row_offsets, a.col_indices,
                                                              a.values, diagonal.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  strong_kernel<false><<<blocks, setup_threads, 0, stream>>>(nodes, block_size, theta, a.row_offsets, a.col_indices,
                                                              a.values, diagonal.data(), s.row_offsets.data(),
                                                              nullptr, nullptr);
  SPGEMM_CUDA_CHECK_LAUNCH();
  const std::int64_t nnz = exclusive_sum(s.row_offsets.data(), nodes, memory, stream);
  cuda::allocate_entries(s, nnz, memory, stream);
  strong_kernel<true><<<blocks, setup_threads, 0, stream>>>(nodes, block_size, theta, a.row_offsets, a.col_indices,
                                                             a.values, diagonal.data(), s.row_offsets.data(),
                                                             s.col_indices.data(), s.values.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  return s;
}

aggregates aggregate(const cuda::structure_view& g, cuda::memory_resource& memory, cudaStream_t stream) {
  using namespace kernels;
  const std::int64_t n = g.rows;
  const auto count = static_cast<std::size_t>(n);
  const unsigned blocks = setup_blocks(n);
  aggregates out;
  out.matrix = cuda::with_offsets<double>(n, 0, memory, stream);
  cuda::device_buffer<unsigned char> state(memory, count, stream);
  cuda::device_buffer<offset_t> numbers(memory, count + 1, stream);  // the roots', by a scan of their flags
  {
    cuda::device_buffer<unsigned long long> keys(memory, 3 * count + 1, stream);
    unsigned long long* key = keys.data();
    unsigned long long* near_one = key + count;
    unsigned long long* near_two = near_one + count;
    unsigned long long* undecided = near_two + count;
    initial_state_kernel<<<blocks, setup_threads, 0, stream>>>(n, g.row_offsets, g.col_indices, state.data());
    SPGEMM_CUDA_CHECK_LAUNCH();
    for (unsigned long long left = n > 0 ? 1 : 0; left > 0; ++out.rounds) {
      key_kernel<<<blocks, setup_threads, 0, stream>>>(n, g.row_offsets, g.col_indices, state.data(), key);
      SPGEMM_CUDA_CHECK_LAUNCH();
      neighbourhood_max_kernel<<<blocks, setup_threads, 0, stream>>>(n, g.row_offsets, g.col_indices, key, near_one);
      SPGEMM_CUDA_CHECK_LAUNCH();
      neighbourhood_max_kernel<<<blocks, setup_threads, 0, stream>>>(n, g.row_offsets, g.col_indices, near_one,
                                                                     near_two);
      SPGEMM_CUDA_CHECK_LAUNCH();
      SPGEMM_CUDA_CHECK(cudaMemsetAsync(undecided, 0, sizeof(unsigned long long), stream));
      decide_kernel<<<blocks, setup_threads, 0, stream>>>(n, near_two, state.data(), undecided);
      SPGEMM_CUDA_CHECK_LAUNCH();
      left = cuda::read_back(undecided, stream);
    }
  }
  member_flag_kernel<<<blocks, setup_threads, 0, stream>>>(n, state.data(), numbers.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  out.count = exclusive_sum(numbers.data(), n, memory, stream);
  out.matrix.cols = out.count;
  cuda::device_buffer<index_t> sweeps(memory, 2 * count, stream);
  root_sweep_kernel<<<blocks, setup_threads, 0, stream>>>(n, g.row_offsets, g.col_indices, state.data(),
                                                          numbers.data(), sweeps.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  offset_t* off = out.matrix.row_offsets.data();
  neighbour_sweep_kernel<<<blocks, setup_threads, 0, stream>>>(n, g.row_offsets, g.col_indices, sweeps.data(),
                                                               sweeps.data() + count, off);
  SPGEMM_CUDA_CHECK_LAUNCH();
  const std::int64_t nnz = exclusive_sum(off, n, memory, stream);
  cuda::allocate_entries(out.matrix, nnz, memory, stream);
  aggregation_entries_kernel<<<blocks, setup_threads, 0, stream>>>(n, sweeps.data() + count, off,
                                                                   out.matrix.col_indices.data(),
                                                                   out.matrix.values.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  return out;
}

namespace {

int bits_for(std::int64_t value) {
  int bits = 1;
  while (bits < 31 && (std::int64_t{1} << bits) <= value) ++bits;
  return bits;
}

}  // namespace

tentative_prolongator tentative(const cuda::structure_view& aggregates, std::int64_t count, const double* b,
                                int rows_per_node, int columns, cuda::memory_resource& memory, cudaStream_t stream) {
  using namespace kernels;
  const std::int64_t nodes = aggregates.rows;
  const std::int64_t rows = nodes * rows_per_node;
  const unsigned blocks = setup_blocks(nodes);
  tentative_prolongator out;
  out.t = cuda::with_offsets<double>(rows, count * columns, memory, stream);
  out.coarse = cuda::device_buffer<double>(memory, static_cast<std::size_t>(count * columns * columns), stream);
  tentative_count_kernel<<<blocks, setup_threads, 0, stream>>>(nodes, rows_per_node, columns,
                                                               aggregates.row_offsets, out.t.row_offsets.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  const std::int64_t nnz = exclusive_sum(out.t.row_offsets.data(), rows, memory, stream);
  cuda::allocate_entries(out.t, nnz, memory, stream);

  // Keys and nodes, and the sort's other halves.
  const auto n = static_cast<std::size_t>(nodes);
  cuda::device_buffer<int> sort_arrays(memory, 4 * n, stream);
  cub::DoubleBuffer<int> keys(sort_arrays.data(), sort_arrays.data() + n);
  cub::DoubleBuffer<int> members(sort_arrays.data() + 2 * n, sort_arrays.data() + 3 * n);
  tentative_fill_kernel<<<blocks, setup_threads, 0, stream>>>(
      nodes, rows_per_node, columns, aggregates.row_offsets, aggregates.col_indices, count, b,
      out.t.row_offsets.data(), out.t.col_indices.data(), out.t.values.data(), keys.Current(), members.Current());
  SPGEMM_CUDA_CHECK_LAUNCH();
  std::size_t temp_bytes = 0;
  const int end_bit = bits_for(count);
  SPGEMM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys, members, nodes, 0, end_bit, stream));
  {
    cuda::device_buffer<unsigned char> temp(memory, temp_bytes, stream);
    SPGEMM_CUDA_CHECK(
        cub::DeviceRadixSort::SortPairs(temp.data(), temp_bytes, keys, members, nodes, 0, end_bit, stream));
  }
  cuda::device_buffer<offset_t> start(memory, static_cast<std::size_t>(count) + 1, stream);
  member_starts_kernel<<<blocks, setup_threads, 0, stream>>>(nodes, count, keys.Current(), start.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  orthonormalize_kernel<<<setup_blocks(count), setup_threads, 0, stream>>>(count, rows_per_node, columns,
                                                                           start.data(), members.Current(),
                                                                           out.t.row_offsets.data(),
                                                                           out.t.values.data(), out.coarse.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  return out;
}

cuda::device_csr<double> smooth_prolongator(const cuda::csr_view<double>& t, const cuda::csr_view<double>& at,
                                            const double* dinv, double omega, cuda::memory_resource& memory,
                                            cudaStream_t stream) {
  using namespace kernels;
  cuda::device_csr<double> p = cuda::with_offsets<double>(t.rows, t.cols, memory, stream);
  const unsigned blocks = setup_blocks(t.rows);
  prolongator_kernel<false><<<blocks, setup_threads, 0, stream>>>(
      t.rows, t.cols, t.row_offsets, t.col_indices, t.values, at.row_offsets, at.col_indices, at.values, dinv, omega,
      p.row_offsets.data(), nullptr, nullptr);
  SPGEMM_CUDA_CHECK_LAUNCH();
  const std::int64_t nnz = exclusive_sum(p.row_offsets.data(), t.rows, memory, stream);
  cuda::allocate_entries(p, nnz, memory, stream);
  prolongator_kernel<true><<<blocks, setup_threads, 0, stream>>>(
      t.rows, t.cols, t.row_offsets, t.col_indices, t.values, at.row_offsets, at.col_indices, at.values, dinv, omega,
      p.row_offsets.data(), p.col_indices.data(), p.values.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  return p;
}

}  // namespace spgemm::amg::gpu
