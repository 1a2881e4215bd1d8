// Masked dot products, host dispatch (see dot.hpp for the contract and
// dot_kernels.cuh for the kernels).
//
// Phases: (1) B's column lengths; (2) the first pass: one dot product per
// entry of M into a value and a found flag per entry, by B's rows, but the
// entries a search in B's column would do far faster, counted and read back;
// (3) where there are such entries, B^T by the GPU transpose (B's columns as
// rows) and the second pass over them; (4) the found entries compacted into
// C, allocated exactly (cuda/compact_entries.hpp: a scan of the flags, nnz(C)
// read back).
// Workspace (bytes): max( 4 cols(B) + 8, B^T and its transpose workspace
// (transpose::estimate), CUB's scan storage ) + nnz(M) (value bytes + 8) + 8;
// C: at most nnz(M) entries.
#include <algorithm>
#include <type_traits>

#include "cuda/compact_entries.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/read_back.hpp"
#include "dot/dot.hpp"
#include "dot/dot_kernels.cuh"
#include "spgemm/errors.hpp"
#include "transpose/transpose.hpp"

namespace spgemm::dot {
namespace {

using cuda::device_buffer;
using cuda::device_csr;

unsigned blocks_for(std::int64_t threads) {
  const std::int64_t b = (threads + kernels::block_threads - 1) / kernels::block_threads;
  return static_cast<unsigned>(std::max<std::int64_t>(b, 1));
}

// 1 + the binary digits of B's mean row length: the cost of a search in a row of B.
template <typename T>
int row_steps(const cuda::csr_view<T>& b) {
  std::int64_t mean = b.rows > 0 ? b.nnz / b.rows : 0;
  int steps = 1;
  for (; mean > 0; mean >>= 1) ++steps;
  return steps;
}

void require_allowing_mask(const method::job& job) {
  if (!job.mask.present() || job.mask.complement) {
    throw_bad_input("algorithm 'dot' runs masked products C<M> only (a mask that allows, not C<!M>)");
  }
}

}  // namespace

memory_estimate estimate(const method::job& job) {
  require_allowing_mask(job);
  const std::int64_t m = job.mask.m.nnz;
  const matrix_info b{job.b.rows, job.b.cols, job.b.nnz, job.value_bytes == sizeof(float) ? value_type::f32
                                                                                           : value_type::f64};
  const std::size_t per_entry = static_cast<std::size_t>(m) * (job.value_bytes + sizeof(offset_t)) + sizeof(offset_t);
  memory_estimate e;
  e.exact = false;
  e.nnz_bound = m;
  e.output_bytes = cuda::csr_bytes(job.a.rows, m, job.value_bytes);
  const std::size_t first_pass = static_cast<std::size_t>(job.b.cols) * sizeof(index_t) + sizeof(unsigned long long);
  e.workspace_bytes =
      per_entry + std::max({first_pass, transpose::estimate(b).total(), cuda::compact_scan_bytes(m)});
  // Products: at most the shorter of each pair of lists per entry of M; the
  // work is that of M's entries, not of the product without the mask.
  e.products = 0;
  e.method = "dot";
  return e;
}

template <typename T>
device_csr<T> run(const method::job& job, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b) {
  require_allowing_mask(job);
  cuda::memory_resource& memory = job.memory;
  const cudaStream_t stream = job.stream;
  const method::mask_view<T> mask = method::mask_view_of<T>(job.mask);
  const std::int64_t m = job.mask.m.nnz;
  device_buffer<T> vals(memory, static_cast<std::size_t>(m), stream);
  device_buffer<offset_t> position(memory, static_cast<std::size_t>(m) + 1, stream);
  const planner::row_stats& b_facts = job.facts.b_rows();
  const kernels::operands<T> x{a.row_offsets, a.col_indices, a.values, b.row_offsets, b.col_indices, b.values};
  const kernels::shape_of_b shape{row_steps(b), b_facts.lower_triangular, b_facts.upper_triangular};
  const auto pass = [&](const kernels::columns_of_b<T>& bt, unsigned long long* left) {
    const auto launch = [&](auto ring, auto count) {
      kernels::dot_kernel<T, decltype(ring), count.value><<<blocks_for(m + 1), kernels::block_threads, 0, stream>>>(
          mask, a.rows, m, x, bt, shape, ring, vals.data(), position.data(), left);
      SPGEMM_CUDA_CHECK_LAUNCH();
    };
    // Over a `pair` multiply every product is 1: the kernel counts them, reading no values.
    if (job.semiring.multiply == binary_op::pair) {
      launch(ops::semiring_ops(job.semiring), std::true_type{});
    } else {
      ops::with_semiring(job.semiring, [&](auto ring) { launch(ring, std::false_type{}); });
    }
  };
  unsigned long long left = 0;
  {
    device_buffer<index_t> lengths(memory, static_cast<std::size_t>(b.cols), stream);
    device_buffer<unsigned long long> counter(memory, 1, stream);
    SPGEMM_CUDA_CHECK(cudaMemsetAsync(lengths.data(), 0, lengths.bytes(), stream));
    SPGEMM_CUDA_CHECK(cudaMemsetAsync(counter.data(), 0, counter.bytes(), stream));
    if (b.nnz > 0) {
      kernels::column_lengths_kernel<<<blocks_for(b.nnz), kernels::block_threads, 0, stream>>>(b.nnz, b.col_indices,
                                                                                                lengths.data());
      SPGEMM_CUDA_CHECK_LAUNCH();
    }
    pass({nullptr, nullptr, nullptr, lengths.data()}, counter.data());
    left = cuda::read_back(counter.data(), stream);
  }
  if (left > 0) {
    job.cancel.throw_if_cancelled();
    const device_csr<T> bt = transpose::run(b, memory, stream, job.cancel);
    pass({bt.row_offsets.data(), bt.col_indices.data(), bt.values.data(), nullptr}, nullptr);
  }
  return cuda::compact_entries<T>(a.rows, b.cols, job.mask.m.row_offsets, job.mask.m.col_indices, m, vals.data(),
                                  position, memory, stream);
}

template device_csr<float> run(const method::job&, const cuda::csr_view<float>&, const cuda::csr_view<float>&);
template device_csr<double> run(const method::job&, const cuda::csr_view<double>&, const cuda::csr_view<double>&);

}  // namespace spgemm::dot
