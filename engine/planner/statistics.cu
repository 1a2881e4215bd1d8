// Host dispatch of the planner's passes (statistics.hpp; the kernels are in
// statistics_kernels.cuh).
#include "planner/statistics.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "cuda/cuda_check.hpp"
#include "cuda/device_facts.hpp"
#include "cuda/read_back.hpp"
#include "cuda/reduction_grid.hpp"
#include "planner/statistics_kernels.cuh"

namespace spgemm::planner {
namespace {

using kernels::helper_threads;
using kernels::ull;

// Blocks for a pass of `threads` threads of `kernel` (it strides over the rest).
template <typename Kernel>
unsigned pass_blocks(Kernel kernel, std::int64_t threads) {
  return cuda::reduction_blocks(kernel, threads, helper_threads);
}

// The words max_row_length_kernel wrote into `s`.
void take_row_lengths(const ull* found, row_stats& s) {
  s.max_row_length = static_cast<std::int64_t>(found[0]);
  s.lower_triangular = found[1] == 0;
  s.upper_triangular = found[2] == 0;
  s.same_candidates = static_cast<std::int64_t>(found[3]);
  s.shifted_candidates = static_cast<std::int64_t>(found[4]);
}

}  // namespace

row_stats compute_row_stats(const cuda::structure_view& m, cuda::memory_resource& memory, cudaStream_t stream) {
  row_stats s;
  s.rows = m.rows;
  s.nnz = m.nnz;
  if (m.rows == 0 || m.nnz == 0) return s;
  constexpr int words = kernels::row_length_words;
  cuda::device_buffer<ull> out(memory, words, stream);
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(out.data(), 0, out.bytes(), stream));
  const unsigned blocks = pass_blocks(kernels::max_row_length_kernel, m.rows);
  kernels::max_row_length_kernel<<<blocks, helper_threads, 0, stream>>>(m.rows, m.row_offsets, m.col_indices,
                                                                         out.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  ull found[words];
  cuda::read_back(out.data(), words, found, stream);
  take_row_lengths(found, s);
  return s;
}

matrix_facts measure_matrix(const cuda::structure_view& m, bool blocks, cuda::memory_resource& memory,
                            cudaStream_t stream) {
  matrix_facts f;
  f.rows.rows = m.rows;
  f.rows.nnz = m.nnz;
  const size_mask candidates = blocks ? shape_candidates(m.rows, m.cols, m.nnz) : 0;
  f.blocks = candidates;
  if (m.rows == 0 || m.nnz == 0) return f;
  // Words: the longest row, both sides of the diagonal and the repeat
  // candidates, the diagonal distance's units, the broken block sizes.
  constexpr int distance_word = kernels::row_length_words;
  constexpr int broken_word = distance_word + 1;
  static_assert((broken_word + 1) * sizeof(ull) == statistics_scratch_bytes);
  cuda::device_buffer<ull> out(memory, broken_word + 1, stream);
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(out.data(), 0, out.bytes(), stream));
  kernels::max_row_length_kernel<<<pass_blocks(kernels::max_row_length_kernel, m.rows), helper_threads, 0, stream>>>(
      m.rows, m.row_offsets, m.col_indices, out.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  const int lanes = stats_lanes(m.rows, m.nnz);
  if (m.cols > 0) {
    kernels::diagonal_distance_kernel<<<pass_blocks(kernels::diagonal_distance_kernel, m.rows * lanes),
                                        helper_threads, 0, stream>>>(m.rows, m.cols, lanes, m.row_offsets,
                                                                     m.col_indices, out.data() + distance_word);
    SPGEMM_CUDA_CHECK_LAUNCH();
  }
  auto* broken = reinterpret_cast<unsigned*>(out.data() + broken_word);
  if (candidates != 0) {
    kernels::detect_kernel<<<pass_blocks(kernels::detect_kernel, m.rows * lanes), helper_threads, 0, stream>>>(
        m.rows, lanes, m.row_offsets, m.col_indices, candidates, broken);
    SPGEMM_CUDA_CHECK_LAUNCH();
  }
  ull found[broken_word + 1];
  cuda::read_back(out.data(), broken_word + 1, found, stream);
  take_row_lengths(found, f.rows);
  f.rows.diagonal_distance = static_cast<double>(found[distance_word]) /
                             static_cast<double>(1u << kernels::diagonal_units_log2) / static_cast<double>(m.nnz);
  unsigned broken_host = 0;
  std::memcpy(&broken_host, &found[broken_word], sizeof broken_host);
  f.blocks = candidates & ~broken_host;
  return f;
}

size_mask detect_block_sizes(const cuda::structure_view& m, cuda::memory_resource& memory, cudaStream_t stream) {
  const size_mask candidates = shape_candidates(m.rows, m.cols, m.nnz);
  if (candidates == 0 || m.nnz == 0) return candidates;
  cuda::device_buffer<unsigned> broken(memory, 1, stream);
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(broken.data(), 0, broken.bytes(), stream));
  const int lanes = stats_lanes(m.rows, m.nnz);
  const unsigned blocks = pass_blocks(kernels::detect_kernel, m.rows * lanes);
  kernels::detect_kernel<<<blocks, helper_threads, 0, stream>>>(m.rows, lanes, m.row_offsets, m.col_indices,
                                                                candidates, broken.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  return candidates & ~cuda::read_back(broken.data(), stream);
}

limits job_limits(const cuda::structure_view& a, const cuda::structure_view& b, std::size_t value_bytes,
                  const tuning& t) {
  const std::size_t max_shared = cuda::current_device_facts().max_shared;
  limits lim = limits_for(max_shared, value_bytes);
  lim.segment_rows = lim.segment_rows && segment_table_fits(b.rows, b.cols, a.nnz, b.nnz) &&
                     segment_symbolic_shared_bytes(b.cols) <= max_shared;
  lim.segment_min_bound = t.segment_min_bound;
  lim.segment_min_width = t.segment_min_width;
  lim.segment_max_width = t.segment_max_width;
  return lim;
}

void launch_stats(const cuda::structure_view& a, const cuda::structure_view& b, const limits& lim,
                  unsigned char* bins, offset_t* row_nnz, unsigned long long* counters, cudaStream_t stream) {
  if (a.rows == 0) return;
  const int lanes = stats_lanes(a.rows, a.nnz);
  kernels::stats_kernel<<<pass_blocks(kernels::stats_kernel, a.rows * lanes), helper_threads, 0, stream>>>(
      a.rows, lanes, a.row_offsets, a.col_indices, b.row_offsets, b.cols, lim, bins, row_nnz, counters);
  SPGEMM_CUDA_CHECK_LAUNCH();
}

job_stats stats_of(const unsigned long long* counters, const cuda::structure_view& a, const cuda::structure_view& b) {
  job_stats s;
  s.rows = a.rows;
  s.nnz_a = a.nnz;
  s.b_rows = b.rows;
  s.b_cols = b.cols;
  s.nnz_b = b.nnz;
  s.products = static_cast<std::int64_t>(counters[stats_counter::products]);
  s.nnz_c_bound = static_cast<std::int64_t>(counters[stats_counter::bound]);
  s.max_row_products = static_cast<std::int64_t>(counters[stats_counter::max_products]);
  s.max_row_length = static_cast<std::int64_t>(counters[stats_counter::max_length]);
  s.numeric_dense_candidates = static_cast<std::int64_t>(counters[stats_counter::dense]);
  for (int i = 0; i < max_bins; ++i) s.symbolic_bins[i] = static_cast<std::int64_t>(counters[stats_counter::symbolic_hist + i]);
  return s;
}

job_stats compute_stats(const cuda::structure_view& a, const cuda::structure_view& b, std::size_t value_bytes,
                        const tuning& t, cuda::memory_resource& memory, cudaStream_t stream) {
  const limits lim = job_limits(a, b, value_bytes, t);
  cuda::device_buffer<ull> counters(memory, stats_counter::count, stream);
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(counters.data(), 0, counters.bytes(), stream));
  launch_stats(a, b, lim, nullptr, nullptr, counters.data(), stream);
  std::array<ull, stats_counter::count> host{};
  cuda::read_back(counters.data(), host.size(), host.data(), stream);
  return stats_of(host.data(), a, b);
}

}  // namespace spgemm::planner
