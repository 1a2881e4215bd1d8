// Block SpGEMM host dispatch (see block.hpp for the contract,
// block_kernels.cuh for the kernels and planner/block_structure.hpp for the
// rule of block structure).
//
// Phases, for operands of block size b:
//  (1) the block patterns Ab and Bb (block row offsets: off[bI] / b^2; block
//      columns: every b-th column of row bI, divided by b; one kernel each;
//      b = 1: A and B themselves; A * A builds one), with one zeroed f32
//      array as their values;
//  (2) Cb = Ab * Bb by the method the planner picks for the block patterns'
//      shape (RMerge on the FEM matrices; the hash method where their block
//      rows are long or skewed), run from the table of methods, in f32; only
//      its structure is read;
//  (3) the longest block row of Cb (planner::compute_row_stats: one kernel,
//      one read back) sizes the numeric kernel's shared accumulators; C is
//      allocated exactly: b^2 nnz(Cb) entries, row bI + r starting at
//      b^2 off_Cb[I] + r b len(I);
//  (4) the numeric kernel writes C's offsets, columns and values.
// The numeric pass alone (run_numeric: a product whose structure is known,
// from any method, as the table's numeric pass): the known structure's
// block pattern (one kernel; the structure itself for b = 1), then (4).
// Workspace: the block patterns (8 (rows / b + 1) + 4 nnz / b^2 bytes each,
// A's only for A * A) and 4 max(nnz(Ab), nnz(Bb)) bytes of f32 values, plus
// what the block product takes (its estimate, Cb included), plus the row
// statistics' scratch (planner::statistics_scratch_bytes): phases (1)-(2)
// hold the patterns and the block product, phases (3)-(4) Cb's structure
// and C. The bound of nnz(C) is b^2 times the block product's bound (sum
// over block rows of min(block products, block columns of B)).
// Complexity: the block product is the scalar product's work / b^3 in
// products and nnz(C) / b^2 in output; the numeric pass b^3 multiply-adds per
// pair of blocks, C written once.
#include <algorithm>
#include <optional>
#include <string>

#include "block/block.hpp"
#include "block/block_kernels.cuh"
#include "block/block_tuning.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/device_facts.hpp"
#include "planner/job_rules.hpp"
#include "planner/statistics.hpp"
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

// The row shape of a block pattern follows from its matrix's: every row of
// block row I holds b len(I) entries.
planner::row_stats block_stats(const planner::row_stats& s, int b) {
  return {s.rows / b, s.nnz / (std::int64_t{b} * b), s.max_row_length / b};
}

// What the block product's method reads of the block patterns; they have no
// blocks of their own.
class pattern_facts final : public method::operand_facts {
 public:
  pattern_facts(const method::operand_facts& operands, int b)
      : operands_(operands), b_(b), a_rows_(block_stats(operands.a_rows(), b)) {}
  const planner::row_stats& a_rows() const override { return a_rows_; }
  const planner::row_stats& b_rows() const override {
    if (!b_rows_) b_rows_ = block_stats(operands_.b_rows(), b_);
    return *b_rows_;
  }
  int block_size() const override { return 1; }

 private:
  const method::operand_facts& operands_;
  int b_;
  planner::row_stats a_rows_;
  mutable std::optional<planner::row_stats> b_rows_;
};

// The block product Ab * Bb as a job of its own (f32; the plan of its method
// from the patterns' shape alone, so no explicit RMerge configuration).
struct block_product_job {
  block_product_job(const method::job& job, const operand_patterns& patterns, int b)
      : facts(job.facts, b),
        tuning(of_patterns(job.tuning)),
        inner{patterns.ab(), patterns.bb(), sizeof(float), tuning, facts, job.methods, job.memory, job.stream,
              job.cancel} {}
  block_product_job(const block_product_job&) = delete;
  block_product_job& operator=(const block_product_job&) = delete;

  static spgemm::tuning of_patterns(const spgemm::tuning& t) {
    spgemm::tuning inner = t;
    inner.rmerge = {};
    return inner;
  }
  // The planner's choice for the patterns' row shape (never the block method).
  const method::method& inner_method() const {
    const planner::row_stats& s = facts.a_rows();
    const bool empty = inner.a.nnz == 0 || inner.b.nnz == 0;
    return inner.methods.find(planner::choose_method({s.rows, s.nnz, s.max_row_length, empty}).algo);
  }

  pattern_facts facts;
  spgemm::tuning tuning;
  method::job inner;
};

std::size_t workspace_bytes(const cuda::structure_view& a, const cuda::structure_view& b, int block_size,
                            const memory_estimate& inner) {
  const std::int64_t area = std::int64_t{block_size} * block_size;
  const bool same = same_structure(a, b);
  const std::size_t patterns = pattern_bytes(a, block_size) + (same ? 0 : pattern_bytes(b, block_size));
  const std::size_t values = static_cast<std::size_t>(std::max(a.nnz, b.nnz) / area) * sizeof(float);
  return patterns + values + inner.total() + planner::statistics_scratch_bytes;
}

// Phases (1)-(2): the structure of Cb = Ab * Bb.
device_csr<float> block_product(const method::job& job, int block_size) {
  const operand_patterns patterns = patterns_of(job.a, job.b, block_size, job.memory, job.stream);
  const cuda::structure_view& ab = patterns.ab();
  const cuda::structure_view& bb = patterns.bb();
  device_buffer<float> zeros(job.memory, static_cast<std::size_t>(std::max(ab.nnz, bb.nnz)), job.stream);
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(zeros.data(), 0, zeros.bytes(), job.stream));
  const cuda::csr_view<float> av{ab.rows, ab.cols, ab.nnz, ab.row_offsets, ab.col_indices, zeros.data()};
  const cuda::csr_view<float> bv{bb.rows, bb.cols, bb.nnz, bb.row_offsets, bb.col_indices, zeros.data()};
  const block_product_job product(job, patterns, block_size);
  const method::method& inner = product.inner_method();
  job.cancel.throw_if_cancelled();
  return inner.run<float>(product.inner, av, bv);
}

template <typename T, int B>
void launch_numeric(const cuda::csr_view<T>& a, const cuda::csr_view<T>& b, const cuda::structure_view& cb,
                    std::int64_t longest_c, const planner::row_stats& b_rows, device_csr<T>& c, cudaStream_t stream) {
  const cuda::device_facts facts = cuda::current_device_facts();
  const int group = B == 1 ? scalar_group_lanes(b_rows.mean_row_length()) : group_lanes(b_rows.max_row_length / B);
  const double mean_c = static_cast<double>(cb.nnz) / static_cast<double>(std::max<std::int64_t>(cb.rows, 1));
  const int splits =
      B == 1 ? scalar_splits(cb.rows, mean_c, group, std::int64_t{facts.sm_count} * facts.max_threads_per_sm) : 1;
  const int rows = rows_per_block(group, splits);
  const std::int64_t blocks = shared_blocks(longest_c, B, sizeof(T), rows, facts.max_shared);
  const std::size_t shared = numeric_shared_bytes(blocks, B, sizeof(T), rows);
  const int threads = block_threads(group, splits);
  auto kernel = kernels::numeric_kernel<T, B, numeric_threads>;
  if constexpr (B == 1) {
    if (threads > numeric_threads) kernel = kernels::numeric_kernel<T, 1, max_numeric_threads>;
  }
  cuda::allow_max_dynamic_shared(kernel);
  const auto grid = static_cast<unsigned>((cb.rows + rows - 1) / rows);
  kernel<<<grid, threads, shared, stream>>>(
      cb.rows, group, splits, blocks, a.row_offsets, a.col_indices, a.values, b.row_offsets, b.col_indices, b.values,
      cb.row_offsets, cb.col_indices, c.row_offsets.data(), c.col_indices.data(), c.values.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
}

// The numeric kernel for blocks of `block_size`.
template <typename T>
void launch_numeric(int block_size, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b,
                    const cuda::structure_view& cb, std::int64_t longest_c, const planner::row_stats& b_rows,
                    device_csr<T>& c, cudaStream_t stream) {
  switch (block_size) {
    case 1: return launch_numeric<T, 1>(a, b, cb, longest_c, b_rows, c, stream);
    case 2: return launch_numeric<T, 2>(a, b, cb, longest_c, b_rows, c, stream);
    case 3: return launch_numeric<T, 3>(a, b, cb, longest_c, b_rows, c, stream);
    case 4: return launch_numeric<T, 4>(a, b, cb, longest_c, b_rows, c, stream);
    case 6: return launch_numeric<T, 6>(a, b, cb, longest_c, b_rows, c, stream);
    default: throw_bad_input("block: no kernel for block size " + std::to_string(block_size));
  }
}

}  // namespace

memory_estimate estimate(const method::job& job) {
  const int block_size = job.facts.block_size();
  const operand_patterns patterns = patterns_of(job.a, job.b, block_size, job.memory, job.stream);
  const block_product_job product(job, patterns, block_size);
  const memory_estimate inner = product.inner_method().estimate(product.inner);
  const std::int64_t area = std::int64_t{block_size} * block_size;
  memory_estimate e;
  e.exact = false;
  e.products = inner.products * area * block_size;
  e.nnz_bound = area * inner.nnz_bound;
  e.output_bytes = cuda::csr_bytes(job.a.rows, e.nnz_bound, job.value_bytes);
  e.workspace_bytes = workspace_bytes(job.a, job.b, block_size, inner);
  e.method = "block b" + std::to_string(block_size) + ", blocks by " + inner.method;
  return e;
}

template <typename T>
device_csr<T> run(const method::job& job, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b) {
  const int block_size = job.facts.block_size();
  device_csr<float> cb = block_product(job, block_size);
  job.cancel.throw_if_cancelled();
  const std::int64_t longest_c =
      cb.nnz > 0 ? planner::compute_row_stats(cb.view().structure(), job.memory, job.stream).max_row_length : 0;
  device_csr<T> c = cuda::with_zero_offsets<T>(a.rows, b.cols, job.memory, job.stream);
  cuda::allocate_entries(c, std::int64_t{block_size} * block_size * cb.nnz, job.memory, job.stream);
  if (c.nnz == 0) return c;
  launch_numeric<T>(block_size, a, b, cb.view().structure(), longest_c, job.facts.b_rows(), c,
                    job.stream);
  return c;
}

memory_estimate estimate_numeric(const method::job& job, const cuda::structure_view& s) {
  memory_estimate e;
  e.exact = true;
  e.nnz_bound = s.nnz;
  e.workspace_bytes = pattern_bytes(s, job.facts.block_size());
  e.method = "block b" + std::to_string(job.facts.block_size()) + " numeric";
  return e;
}

template <typename T>
void run_numeric(const method::job& job, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b,
                 const cuda::structure_view& s, std::int64_t longest_row, device_csr<T>& c) {
  const int block_size = job.facts.block_size();
  if (s.nnz == 0) {
    SPGEMM_CUDA_CHECK(cudaMemsetAsync(c.row_offsets.data(), 0, c.row_offsets.bytes(), job.stream));
    return;
  }
  const block_pattern cs = pattern_of(s, block_size, job.memory, job.stream);
  launch_numeric<T>(block_size, a, b, cs.view, longest_row / block_size, job.facts.b_rows(), c,
                    job.stream);
}

template device_csr<float> run(const method::job&, const cuda::csr_view<float>&, const cuda::csr_view<float>&);
template device_csr<double> run(const method::job&, const cuda::csr_view<double>&, const cuda::csr_view<double>&);
template void run_numeric(const method::job&, const cuda::csr_view<float>&, const cuda::csr_view<float>&,
                          const cuda::structure_view&, std::int64_t, device_csr<float>&);
template void run_numeric(const method::job&, const cuda::csr_view<double>&, const cuda::csr_view<double>&,
                          const cuda::structure_view&, std::int64_t, device_csr<double>&);

}  // namespace spgemm::block
