// Block SpGEMM host dispatch (see block.hpp for the contract,
// block_kernels.cuh for the kernels and block_rule.hpp for the rule).
//
// Phases, for operands of block size b:
//  (1) the block patterns Ab and Bb (block row offsets: off[bI] / b^2; block
//      columns: every b-th column of row bI, divided by b; one kernel each;
//      b = 1: A and B themselves; A * A builds one), with one zeroed f32
//      array as their values;
//  (2) Cb = Ab * Bb by the method the planner picks for the block patterns'
//      shape (RMerge on the FEM matrices; the hash method where their block
//      rows are long or skewed), in f32; only its structure is read;
//  (3) the longest block row of Cb (rmerge::compute_row_stats: one kernel,
//      one read back) sizes the numeric kernel's shared accumulators; C is
//      allocated exactly: b^2 nnz(Cb) entries, row bI + r starting at
//      b^2 off_Cb[I] + r b len(I);
//  (4) the numeric kernel writes C's offsets, columns and values.
// Workspace: the block patterns (8 (rows / b + 1) + 4 nnz / b^2 bytes each,
// A's only for A * A) and 4 max(nnz(Ab), nnz(Bb)) bytes of f32 values, plus
// what the block product takes (its estimate, Cb included), plus 8 bytes of
// row statistics: phases (1)-(2) hold the patterns and the block product,
// phases (3)-(4) Cb's structure and C. The bound of nnz(C) is b^2 times the
// block product's bound (sum over block rows of min(block products, block
// columns of B)).
// Complexity: the block product is the scalar product's work / b^3 in
// products and nnz(C) / b^2 in output; the numeric pass b^3 multiply-adds per
// pair of blocks, C written once.
#include <algorithm>
#include <string>

#include "block/block.hpp"
#include "block/block_kernels.cuh"
#include "cuda/cuda_check.hpp"
#include "cuda/device_facts.hpp"
#include "cuda/read_back.hpp"
#include "hash/hash.hpp"
#include "planner/planner.hpp"
#include "rmerge/rmerge.hpp"
#include "spgemm/errors.hpp"

namespace spgemm::block {
namespace {

using cuda::memory_resource;
using cuda::device_buffer;
using cuda::device_csr;

unsigned warp_blocks(std::int64_t warps) {
  const std::int64_t per_block = kernels::helper_threads / 32;
  return static_cast<unsigned>(std::clamp<std::int64_t>((warps + per_block - 1) / per_block, 1, 1 << 20));
}

bool same_structure(const cuda::structure_view& a, const cuda::structure_view& b) {
  return a.row_offsets == b.row_offsets && a.col_indices == b.col_indices && a.rows == b.rows && a.cols == b.cols;
}

// The block pattern of a b-blocked matrix, or the matrix itself for b = 1.
struct block_pattern {
  device_buffer<offset_t> offsets;
  device_buffer<index_t> columns;
  cuda::structure_view view;
};

std::size_t pattern_bytes(const cuda::structure_view& m, int b) {
  if (b == 1) return 0;
  return cuda::csr_bytes(m.rows / b, m.nnz / (std::int64_t{b} * b), 0);
}

block_pattern pattern_of(const cuda::structure_view& m, int b, memory_resource& memory, cudaStream_t stream) {
  block_pattern p;
  if (b == 1) {
    p.view = m;
    return p;
  }
  const std::int64_t area = std::int64_t{b} * b;
  p.view.rows = m.rows / b;
  p.view.cols = m.cols / b;
  p.view.nnz = m.nnz / area;
  p.offsets = device_buffer<offset_t>(memory, static_cast<std::size_t>(p.view.rows) + 1, stream);
  p.columns = device_buffer<index_t>(memory, static_cast<std::size_t>(p.view.nnz), stream);
  kernels::block_pattern_kernel<<<warp_blocks(p.view.rows + 1), kernels::helper_threads, 0, stream>>>(
      b, p.view.rows, m.row_offsets, m.col_indices, p.offsets.data(), p.columns.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  p.view.row_offsets = p.offsets.data();
  p.view.col_indices = p.columns.data();
  return p;
}

// The block patterns of A and B (one for both where A and B are one
// matrix, as in A * A).
struct operand_patterns {
  block_pattern a;
  block_pattern b;  // empty where shared
  bool shared = false;
  const cuda::structure_view& ab() const { return a.view; }
  const cuda::structure_view& bb() const { return shared ? a.view : b.view; }
};

operand_patterns patterns_of(const cuda::structure_view& a, const cuda::structure_view& b, int block_size,
                             memory_resource& memory, cudaStream_t stream) {
  operand_patterns p;
  p.shared = same_structure(a, b);
  p.a = pattern_of(a, block_size, memory, stream);
  if (!p.shared) p.b = pattern_of(b, block_size, memory, stream);
  return p;
}

// The row statistics of A's block pattern follow from A's: every row of
// block row I holds b len(I) entries.
rmerge::row_stats block_stats(const rmerge::row_stats& s, int b) {
  return {s.rows / b, s.nnz / (std::int64_t{b} * b), s.max_row_length / b};
}

// The method of the block product (planner::choose_method on the block
// pattern's row shape; never the block method itself).
planner::choice inner_choice(const cuda::structure_view& ab, const cuda::structure_view& bb,
                             const rmerge::row_stats& ab_stats) {
  return planner::choose_method({ab_stats.rows, ab_stats.nnz, ab_stats.max_row_length, ab.nnz == 0 || bb.nnz == 0});
}

// The block product's estimate (f32 values) and its bound of nnz(Cb).
struct inner_estimate {
  memory_estimate estimate;
  std::int64_t nnz_bound = 0;
};

inner_estimate estimate_inner(const cuda::structure_view& ab, const cuda::structure_view& bb,
                              const rmerge::row_stats& ab_stats, const tuning& t, memory_resource& memory,
                              cudaStream_t stream) {
  const planner::choice choice = inner_choice(ab, bb, ab_stats);
  inner_estimate out;
  if (choice.algo == algorithm::rmerge) {
    const rmerge::plan p = rmerge::make_plan(ab_stats, {});
    const rmerge::product_bounds bounds = rmerge::compute_bounds(ab, bb, p, memory, stream);
    out.estimate = rmerge::estimate_from(p, bounds, ab.rows, sizeof(float));
    out.nnz_bound = bounds.nnz_c_bound;
  } else {
    const planner::job_stats s = hash::compute_stats(ab, bb, sizeof(float), t, memory, stream);
    out.estimate = hash::estimate_from(s, sizeof(float));
    out.nnz_bound = s.nnz_c_bound;
  }
  return out;
}

std::size_t workspace_bytes(const cuda::structure_view& a, const cuda::structure_view& b, int block_size,
                            const memory_estimate& inner) {
  const std::int64_t area = std::int64_t{block_size} * block_size;
  const bool same = same_structure(a, b);
  const std::size_t patterns = pattern_bytes(a, block_size) + (same ? 0 : pattern_bytes(b, block_size));
  const std::size_t values = static_cast<std::size_t>(std::max(a.nnz, b.nnz) / area) * sizeof(float);
  return patterns + values + inner.total() + sizeof(unsigned long long);
}

// Phases (1)-(2): the structure of Cb = Ab * Bb.
device_csr<float> block_product(const cuda::structure_view& a, const cuda::structure_view& b, int block_size,
                                const rmerge::row_stats& a_stats, const tuning& t, memory_resource& memory,
                                cudaStream_t stream, const cancel_token& cancel) {
  const operand_patterns patterns = patterns_of(a, b, block_size, memory, stream);
  const cuda::structure_view& ab = patterns.ab();
  const cuda::structure_view& bb = patterns.bb();
  device_buffer<float> zeros(memory, static_cast<std::size_t>(std::max(ab.nnz, bb.nnz)), stream);
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(zeros.data(), 0, zeros.bytes(), stream));
  const cuda::csr_view<float> av{ab.rows, ab.cols, ab.nnz, ab.row_offsets, ab.col_indices, zeros.data()};
  const cuda::csr_view<float> bv{bb.rows, bb.cols, bb.nnz, bb.row_offsets, bb.col_indices, zeros.data()};
  const rmerge::row_stats ab_stats = block_stats(a_stats, block_size);
  const planner::choice choice = inner_choice(ab, bb, ab_stats);
  cancel.throw_if_cancelled();
  device_csr<float> cb =
      choice.algo == algorithm::rmerge
          ? rmerge::multiply_planned<float>(av, bv, rmerge::make_plan(ab_stats, {}), memory, stream, cancel)
          : hash::multiply<float>(av, bv, memory, stream, cancel, t);
  return cb;
}

template <typename T, int B>
void launch_numeric(const cuda::csr_view<T>& a, const cuda::csr_view<T>& b, const device_csr<float>& cb,
                    std::int64_t longest_c, std::int64_t longest_b, device_csr<T>& c, cudaStream_t stream) {
  const int group = group_lanes(longest_b / B);
  const std::int64_t blocks = shared_blocks(longest_c, B, sizeof(T), group, cuda::current_device_facts().max_shared);
  const std::size_t shared = numeric_shared_bytes(blocks, B, sizeof(T), group);
  const auto kernel = kernels::numeric_kernel<T, B>;
  cuda::allow_max_dynamic_shared(kernel);
  const std::int64_t groups = numeric_threads / group;
  const auto grid = static_cast<unsigned>((cb.rows + groups - 1) / groups);
  kernel<<<grid, numeric_threads, shared, stream>>>(cb.rows, group, blocks, a.row_offsets, a.col_indices, a.values,
                                                    b.row_offsets, b.col_indices, b.values, cb.row_offsets.data(),
                                                    cb.col_indices.data(), c.row_offsets.data(), c.col_indices.data(),
                                                    c.values.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
}

}  // namespace

size_mask detect_sizes(const cuda::structure_view& m, memory_resource& memory, cudaStream_t stream) {
  const size_mask candidates = shape_candidates(m.rows, m.cols, m.nnz);
  if (candidates == 0 || m.nnz == 0) return candidates;
  device_buffer<unsigned> broken(memory, 1, stream);
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(broken.data(), 0, broken.bytes(), stream));
  kernels::detect_kernel<<<warp_blocks(m.rows), kernels::helper_threads, 0, stream>>>(
      m.rows, m.row_offsets, m.col_indices, candidates, broken.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  return candidates & ~cuda::read_back(broken.data(), stream);
}

memory_estimate estimate_multiply(const cuda::structure_view& a, const cuda::structure_view& b, int block_size,
                                  std::size_t value_bytes, const rmerge::row_stats& a_stats, const tuning& t,
                                  memory_resource& memory, cudaStream_t stream) {
  const operand_patterns patterns = patterns_of(a, b, block_size, memory, stream);
  const inner_estimate inner =
      estimate_inner(patterns.ab(), patterns.bb(), block_stats(a_stats, block_size), t, memory, stream);
  const std::int64_t area = std::int64_t{block_size} * block_size;
  memory_estimate e;
  e.exact = false;
  e.products = inner.estimate.products * area * block_size;
  e.output_bytes = cuda::csr_bytes(a.rows, area * inner.nnz_bound, value_bytes);
  e.workspace_bytes = workspace_bytes(a, b, block_size, inner.estimate);
  e.method = "block b" + std::to_string(block_size) + ", blocks by " + inner.estimate.method;
  return e;
}

template <typename T>
device_csr<T> multiply(const cuda::csr_view<T>& a, const cuda::csr_view<T>& b, int block_size,
                       const rmerge::row_stats& a_stats, const rmerge::row_stats& b_stats, const tuning& t,
                       memory_resource& memory, cudaStream_t stream, const cancel_token& cancel) {
  device_csr<float> cb = block_product(a.structure(), b.structure(), block_size, a_stats, t, memory, stream,
                                       cancel);
  cancel.throw_if_cancelled();
  const std::int64_t longest_c =
      cb.nnz > 0 ? rmerge::compute_row_stats(cb.view().structure(), memory, stream).max_row_length : 0;
  device_csr<T> c = cuda::with_zero_offsets<T>(a.rows, b.cols, memory, stream);
  cuda::allocate_entries(c, std::int64_t{block_size} * block_size * cb.nnz, memory, stream);
  if (c.nnz == 0) return c;
  switch (block_size) {
    case 1: launch_numeric<T, 1>(a, b, cb, longest_c, b_stats.max_row_length, c, stream); break;
    case 2: launch_numeric<T, 2>(a, b, cb, longest_c, b_stats.max_row_length, c, stream); break;
    case 3: launch_numeric<T, 3>(a, b, cb, longest_c, b_stats.max_row_length, c, stream); break;
    case 4: launch_numeric<T, 4>(a, b, cb, longest_c, b_stats.max_row_length, c, stream); break;
    case 6: launch_numeric<T, 6>(a, b, cb, longest_c, b_stats.max_row_length, c, stream); break;
    default: throw_bad_input("block: no kernel for block size " + std::to_string(block_size));
  }
  return c;
}

template device_csr<float> multiply(const cuda::csr_view<float>&, const cuda::csr_view<float>&, int,
                                    const rmerge::row_stats&, const rmerge::row_stats&, const tuning&,
                                    memory_resource&, cudaStream_t, const cancel_token&);
template device_csr<double> multiply(const cuda::csr_view<double>&, const cuda::csr_view<double>&, int,
                                     const rmerge::row_stats&, const rmerge::row_stats&, const tuning&,
                                     memory_resource&, cudaStream_t, const cancel_token&);

}  // namespace spgemm::block
