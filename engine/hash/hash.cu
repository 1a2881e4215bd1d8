// Hash SpGEMM host dispatch (see hash.hpp for the contract and
// hash_kernels.cuh for the method).
//
// Phases: (1) statistics and symbolic bins per row (one kernel; counters read
// back), rows grouped by bin; (2) symbolic kernels per bin write the nnz of
// each row into C's offsets; (3) exclusive scan, nnz read back, C allocated
// exactly; (4) numeric bins from the exact nnz (histogram read back), rows
// regrouped; column ranges of B where planner::use_column_ranges and a block
// or dense bin is non-empty; (5) numeric kernels per bin (copy, shared
// tables, dense).
// Workspace: rows bytes (bins) + 4 rows bytes (rows grouped by bin) + 256
// bytes of counters + the column ranges (32 KB + 132 bytes per row of B) +
// the largest of: CUB scan storage, the symbolic dense bitmaps, the numeric
// dense accumulators (bounded by planner::dense_blocks).
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <array>
#include <cassert>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>

#include "cuda/cuda_check.hpp"
#include "cuda/read_back.hpp"
#include "hash/hash.hpp"
#include "hash/hash_kernels.cuh"
#include "rmerge/mul_limited.hpp"

namespace spgemm::hash {
namespace {

using cuda::device_allocator;
using cuda::device_buffer;
using cuda::device_csr;
using cuda::job_meter;
using kernels::ull;

struct device_facts {
  int sm_count = 132;
  std::size_t max_shared = 48 * 1024;
};

device_facts facts() {
  static std::mutex mutex;
  static std::array<device_facts, 64> cache;
  static std::array<bool, 64> known{};
  int device = 0;
  SPGEMM_CUDA_CHECK(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mutex);
  if (device >= 0 && device < 64 && known[device]) return cache[device];
  device_facts f;
  int v = 0;
  SPGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, device));
  f.sm_count = v;
  SPGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  f.max_shared = static_cast<std::size_t>(v) - 1024;  // room for the kernels' static shared memory
  if (device >= 0 && device < 64) {
    cache[device] = f;
    known[device] = true;
  }
  return f;
}

constexpr int helper_threads = 256;

// Output bound of the hybrid plan's merge bins: planner default, or
// SPGEMM_HYBRID_MERGE_MAX (benchmark sweeps; 0 turns the merge bins off).
std::int64_t merge_max_bound() {
  const char* v = std::getenv("SPGEMM_HYBRID_MERGE_MAX");  // read per job: tests and sweeps change it
  if (v == nullptr || *v == '\0') return planner::default_merge_max_bound;
  const long long x = std::atoll(v);
  return static_cast<std::int64_t>(x < 0 ? 0 : x);
}

rmerge::pass_config merge_pass(int bin) {
  rmerge::pass_config p;
  p.subwarp = planner::merge_subwarp(bin);
  p.rows_per_thread = planner::merge_rows_per_thread(bin);
  return p;
}

unsigned helper_blocks(std::int64_t n) {
  const std::int64_t b = (n + helper_threads - 1) / helper_threads;
  return static_cast<unsigned>(std::min<std::int64_t>(std::max<std::int64_t>(b, 1), 1 << 16));
}

std::size_t scan_temp_bytes(std::int64_t items) {
  std::size_t bytes = 0;
  SPGEMM_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<offset_t*>(nullptr), items));
  return bytes;
}

std::size_t words_of(std::int64_t cols) { return static_cast<std::size_t>((cols + 31) / 32); }

// Column ranges of the ranged numeric kernels (block tables, dense rows):
// bucket counts, split columns, and the range starts of every row of B.
std::size_t column_range_bytes(std::int64_t b_rows) {
  return sizeof(ull) * kernels::split_buckets + sizeof(index_t) * (kernels::column_ranges + 1) +
         sizeof(int) * static_cast<std::size_t>(b_rows) * (kernels::column_ranges + 1);
}

struct workspace_plan {
  std::size_t fixed = 0;
  std::int64_t symbolic_dense_blocks = 0;
  std::int64_t numeric_dense_blocks = 0;
  std::size_t symbolic_dense_bytes = 0;
  std::size_t numeric_dense_bytes = 0;
  std::size_t scan_bytes = 0;
};

workspace_plan plan_workspace(const planner::job_stats& s, std::int64_t nnz_c, std::size_t value_bytes,
                              const planner::limits& lim, const device_facts& f) {
  workspace_plan w;
  w.fixed = sizeof(ull) * kernels::counter_count + sizeof(ull) * planner::max_bins +
            static_cast<std::size_t>(s.rows) * (1 + sizeof(int)) + column_range_bytes(s.b_rows);
  const std::size_t budget = planner::dense_budget_per_nnz * static_cast<std::size_t>(std::max<std::int64_t>(nnz_c, 0));
  const std::int64_t sym_dense_rows = s.symbolic_bins[planner::dense_bin(lim.symbolic_max_table)];
  w.symbolic_dense_blocks = planner::dense_blocks(sym_dense_rows, s.b_cols, 0, budget, f.sm_count);
  w.symbolic_dense_bytes = static_cast<std::size_t>(w.symbolic_dense_blocks) * words_of(s.b_cols) * sizeof(unsigned);
  w.numeric_dense_blocks = planner::dense_blocks(s.numeric_dense_candidates, s.b_cols, value_bytes, budget, f.sm_count);
  w.numeric_dense_bytes = static_cast<std::size_t>(w.numeric_dense_blocks) *
                          (words_of(s.b_cols) * sizeof(unsigned) + static_cast<std::size_t>(s.b_cols) * value_bytes);
  w.scan_bytes = scan_temp_bytes(s.rows + 1);
  return w;
}

template <typename K>
void set_shared(K kernel, std::size_t bytes) {
  // Always: static shared memory counts against the 48 KB default too.
  if (bytes > 0) {
    SPGEMM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(bytes)));
  }
}

planner::job_stats read_counters(const ull* device_counters, const cuda::structure_view& a,
                                 const cuda::structure_view& b, cudaStream_t stream, ull* host) {
  SPGEMM_CUDA_CHECK(cudaMemcpyAsync(host, device_counters, sizeof(ull) * kernels::counter_count,
                                    cudaMemcpyDeviceToHost, stream));
  SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  planner::job_stats s;
  s.rows = a.rows;
  s.nnz_a = a.nnz;
  s.b_rows = b.rows;
  s.b_cols = b.cols;
  s.products = static_cast<std::int64_t>(host[kernels::counter_products]);
  s.nnz_c_bound = static_cast<std::int64_t>(host[kernels::counter_bound]);
  s.max_row_products = static_cast<std::int64_t>(host[kernels::counter_max_products]);
  s.max_row_length = static_cast<std::int64_t>(host[kernels::counter_max_length]);
  s.numeric_dense_candidates = static_cast<std::int64_t>(host[kernels::counter_dense]);
  for (int i = 0; i < planner::max_bins; ++i)
    s.symbolic_bins[i] = static_cast<std::int64_t>(host[kernels::counter_symbolic_hist + i]);
  return s;
}

void launch_stats(const cuda::structure_view& a, const cuda::structure_view& b, const planner::limits& lim,
                  unsigned char* bins, offset_t* row_nnz, ull* counters, cudaStream_t stream) {
  if (a.rows == 0) return;
  kernels::stats_kernel<<<helper_blocks(a.rows), helper_threads, 0, stream>>>(
      a.rows, a.row_offsets, a.col_indices, b.row_offsets, b.cols, lim, bins, row_nnz, counters);
  SPGEMM_CUDA_CHECK_LAUNCH();
}

// Groups the rows by bin; returns the first position of every bin in perm.
kernels::bin_starts group_rows(std::int64_t rows, const unsigned char* bins, const std::int64_t* hist,
                               ull* cursors, int* perm, cudaStream_t stream) {
  kernels::bin_starts starts{};
  long long at = 0;
  for (int i = 0; i < planner::max_bins; ++i) {
    starts.start[i] = at;
    if (i != planner::bin_none) at += hist[i];
  }
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(cursors, 0, sizeof(ull) * planner::max_bins, stream));
  if (rows > 0) {
    kernels::scatter_kernel<<<helper_blocks(rows), helper_threads, 0, stream>>>(rows, bins, starts, cursors, perm);
    SPGEMM_CUDA_CHECK_LAUNCH();
  }
  return starts;
}

// Splits B's columns into kernels::column_ranges balanced ranges and finds
// where each range starts in every row of B (pos must hold
// b.rows * (column_ranges + 1) ints).
void compute_column_ranges(const cuda::structure_view& b, device_allocator& allocator, cudaStream_t stream,
                           job_meter* meter, int* pos) {
  device_buffer<ull> hist(allocator, kernels::split_buckets, stream, meter);
  device_buffer<index_t> splits(allocator, kernels::column_ranges + 1, stream, meter);
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(hist.data(), 0, hist.bytes(), stream));
  if (b.nnz > 0) {
    kernels::column_histogram_kernel<<<helper_blocks(b.nnz), helper_threads, 0, stream>>>(b.nnz, b.col_indices,
                                                                                          b.cols, hist.data());
    SPGEMM_CUDA_CHECK_LAUNCH();
  }
  kernels::choose_splits_kernel<<<1, kernels::split_buckets / 4, 0, stream>>>(hist.data(), b.cols, splits.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  const std::int64_t items = b.rows * (kernels::column_ranges + 1);
  if (items > 0) {
    kernels::range_positions_kernel<<<helper_blocks(items), helper_threads, 0, stream>>>(
        b.rows, b.row_offsets, b.col_indices, splits.data(), pos);
    SPGEMM_CUDA_CHECK_LAUNCH();
  }
}

// The numeric kernel of one table bin: ITEMS = slots per thread of the group
// (table / 32 for a warp, table / block threads for a block), a template
// parameter because the sort keeps them in registers.
template <bool Warp, int ITEMS, typename T>
void launch_numeric_items(const planner::table_config& cfg, unsigned grid, cudaStream_t stream, const int* rows,
                          std::int64_t n, const int* pos, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b,
                          device_csr<T>& c) {
  const auto kernel = kernels::numeric_shared_kernel<Warp, ITEMS, T>;
  set_shared(kernel, cfg.shared_bytes);
  kernel<<<grid, cfg.block_threads, cfg.shared_bytes, stream>>>(rows, n, pos, a.row_offsets, a.col_indices, a.values,
                                                                b.row_offsets, b.col_indices, b.values,
                                                                c.row_offsets.data(), c.col_indices.data(),
                                                                c.values.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
}

template <typename T>
void launch_numeric_shared(const planner::table_config& cfg, unsigned grid, cudaStream_t stream, const int* rows,
                           std::int64_t n, const int* pos, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b,
                           device_csr<T>& c) {
  const int items = cfg.table / (cfg.warp_per_row ? 32 : cfg.block_threads);
  if (cfg.warp_per_row) {
    switch (items) {
      case 1: return launch_numeric_items<true, 1, T>(cfg, grid, stream, rows, n, pos, a, b, c);
      case 2: return launch_numeric_items<true, 2, T>(cfg, grid, stream, rows, n, pos, a, b, c);
      case 4: return launch_numeric_items<true, 4, T>(cfg, grid, stream, rows, n, pos, a, b, c);
      case 8: return launch_numeric_items<true, 8, T>(cfg, grid, stream, rows, n, pos, a, b, c);
      case 16: return launch_numeric_items<true, 16, T>(cfg, grid, stream, rows, n, pos, a, b, c);
      default: break;
    }
  } else {
    switch (items) {
      case 8: return launch_numeric_items<false, 8, T>(cfg, grid, stream, rows, n, pos, a, b, c);
      case 16: return launch_numeric_items<false, 16, T>(cfg, grid, stream, rows, n, pos, a, b, c);
      default: break;
    }
  }
  throw std::logic_error("hash: no numeric kernel for " + std::to_string(items) + " slots per thread");
}

}  // namespace

planner::job_stats compute_stats(const cuda::structure_view& a, const cuda::structure_view& b,
                                 std::size_t value_bytes, device_allocator& allocator, cudaStream_t stream) {
  const planner::limits lim = planner::limits_for(facts().max_shared, value_bytes);
  device_buffer<ull> counters(allocator, kernels::counter_count, stream);
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(counters.data(), 0, counters.bytes(), stream));
  launch_stats(a, b, lim, nullptr, nullptr, counters.data(), stream);
  std::array<ull, kernels::counter_count> host{};
  return read_counters(counters.data(), a, b, stream, host.data());
}

memory_estimate estimate_from(const planner::job_stats& s, std::size_t value_bytes) {
  const device_facts f = facts();
  const planner::limits lim = planner::limits_for(f.max_shared, value_bytes);
  const workspace_plan w = plan_workspace(s, s.nnz_c_bound, value_bytes, lim, f);
  memory_estimate e;
  e.exact = false;
  e.products = s.products;
  e.output_bytes = cuda::csr_bytes(s.rows, s.nnz_c_bound, value_bytes);
  e.workspace_bytes = w.fixed + std::max({w.scan_bytes, w.symbolic_dense_bytes, w.numeric_dense_bytes});
  e.method = "hash";
  if (w.numeric_dense_blocks > 0) e.method += " +dense x" + std::to_string(w.numeric_dense_blocks);
  return e;
}

memory_estimate estimate_multiply(const cuda::structure_view& a, const cuda::structure_view& b,
                                  std::size_t value_bytes, device_allocator& allocator, cudaStream_t stream) {
  return estimate_from(compute_stats(a, b, value_bytes, allocator, stream), value_bytes);
}

template <typename T>
device_csr<T> multiply(const cuda::csr_view<T>& a, const cuda::csr_view<T>& b, device_allocator& allocator,
                       cudaStream_t stream, const cancel_token& cancel, job_meter* meter, bool hybrid) {
  const device_facts f = facts();
  planner::limits lim = planner::limits_for(f.max_shared, sizeof(T));
  if (hybrid) lim.merge_max_bound = merge_max_bound();
  const std::int64_t m = a.rows;
  device_csr<T> c = cuda::with_zero_offsets<T>(m, b.cols, allocator, stream, meter);

  device_buffer<ull> counters(allocator, kernels::counter_count, stream, meter);
  device_buffer<ull> cursors(allocator, planner::max_bins, stream, meter);
  device_buffer<unsigned char> bins(allocator, static_cast<std::size_t>(m), stream, meter);
  device_buffer<int> perm(allocator, static_cast<std::size_t>(m), stream, meter);
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(counters.data(), 0, counters.bytes(), stream));
  launch_stats(a.structure(), b.structure(), lim, bins.data(), c.row_offsets.data(), counters.data(), stream);
  std::array<ull, kernels::counter_count> host{};
  const planner::job_stats s = read_counters(counters.data(), a.structure(), b.structure(), stream, host.data());
  cancel.throw_if_cancelled();

  // Symbolic pass.
  {
    const kernels::bin_starts starts =
        group_rows(m, bins.data(), s.symbolic_bins, cursors.data(), perm.data(), stream);
    const int dense = planner::dense_bin(lim.symbolic_max_table);
    for (int bin = planner::first_table_bin; bin < dense; ++bin) {
      const std::int64_t n = s.symbolic_bins[bin];
      if (n == 0) continue;
      const planner::table_config cfg = planner::config_for_table(planner::table_of_bin(bin), 0);
      const int* rows = perm.data() + starts.start[bin];
      const unsigned grid = static_cast<unsigned>((n + cfg.rows_per_block - 1) / cfg.rows_per_block);
      if (cfg.warp_per_row) {
        set_shared(kernels::symbolic_shared_kernel<true>, cfg.shared_bytes);
        kernels::symbolic_shared_kernel<true><<<grid, cfg.block_threads, cfg.shared_bytes, stream>>>(
            rows, n, cfg.table, a.row_offsets, a.col_indices, b.row_offsets, b.col_indices, c.row_offsets.data());
      } else {
        set_shared(kernels::symbolic_shared_kernel<false>, cfg.shared_bytes);
        kernels::symbolic_shared_kernel<false><<<grid, cfg.block_threads, cfg.shared_bytes, stream>>>(
            rows, n, cfg.table, a.row_offsets, a.col_indices, b.row_offsets, b.col_indices, c.row_offsets.data());
      }
      SPGEMM_CUDA_CHECK_LAUNCH();
    }
    for (int bin = planner::first_merge_bin; bin < planner::first_merge_bin + planner::merge_bin_count; ++bin) {
      const std::int64_t n = s.symbolic_bins[bin];
      if (n == 0) continue;
      rmerge::launch_mul_limited_count(merge_pass(bin), n, a.row_offsets, a.col_indices, b.row_offsets,
                                       b.col_indices, c.row_offsets.data(), stream, perm.data() + starts.start[bin]);
    }
    if (s.symbolic_bins[dense] > 0) {
      const workspace_plan w = plan_workspace(s, s.nnz_c_bound, sizeof(T), lim, f);
      device_buffer<unsigned> bitmaps(allocator, w.symbolic_dense_bytes / sizeof(unsigned), stream, meter);
      SPGEMM_CUDA_CHECK(cudaMemsetAsync(bitmaps.data(), 0, bitmaps.bytes(), stream));
      const int threads = planner::dense_block_threads;
      const std::size_t shared = static_cast<std::size_t>(threads) * 16;
      kernels::symbolic_dense_kernel<<<static_cast<unsigned>(w.symbolic_dense_blocks), threads, shared, stream>>>(
          perm.data() + starts.start[dense], s.symbolic_bins[dense], static_cast<std::int64_t>(words_of(b.cols)),
          bitmaps.data(), a.row_offsets, a.col_indices, b.row_offsets, b.col_indices, c.row_offsets.data());
      SPGEMM_CUDA_CHECK_LAUNCH();
    }
  }
  cancel.throw_if_cancelled();

  // Offsets of C, exact allocation.
  {
    std::size_t bytes = scan_temp_bytes(m + 1);
    device_buffer<unsigned char> temp(allocator, bytes, stream, meter);
    SPGEMM_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.data(), bytes, c.row_offsets.data(), m + 1, stream));
  }
  c.nnz = cuda::read_back(c.row_offsets.data() + m, stream);
  cancel.throw_if_cancelled();
  c.col_indices = device_buffer<index_t>(allocator, static_cast<std::size_t>(c.nnz), stream, meter);
  c.values = device_buffer<T>(allocator, static_cast<std::size_t>(c.nnz), stream, meter);
  if (c.nnz == 0) return c;

  // Numeric pass.
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(counters.data(), 0, counters.bytes(), stream));
  kernels::numeric_bins_kernel<<<helper_blocks(m), helper_threads, 0, stream>>>(
      m, a.row_offsets, c.row_offsets.data(), lim, bins.data(), counters.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  SPGEMM_CUDA_CHECK(cudaMemcpyAsync(host.data(), counters.data(), counters.bytes(), cudaMemcpyDeviceToHost, stream));
  SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::int64_t hist[planner::max_bins];
  for (int i = 0; i < planner::max_bins; ++i) hist[i] = static_cast<std::int64_t>(host[kernels::counter_numeric_hist + i]);
  const kernels::bin_starts starts = group_rows(m, bins.data(), hist, cursors.data(), perm.data(), stream);

  if (hist[planner::bin_copy] > 0) {
    const std::int64_t n = hist[planner::bin_copy];
    const unsigned grid = static_cast<unsigned>((n * 32 + helper_threads - 1) / helper_threads);
    kernels::copy_rows_kernel<T><<<grid, helper_threads, 0, stream>>>(
        perm.data() + starts.start[planner::bin_copy], n, a.row_offsets, a.col_indices, a.values, b.row_offsets,
        b.col_indices, b.values, c.row_offsets.data(), c.col_indices.data(), c.values.data());
    SPGEMM_CUDA_CHECK_LAUNCH();
  }
  for (int bin = planner::first_merge_bin; bin < planner::first_merge_bin + planner::merge_bin_count; ++bin) {
    const std::int64_t n = hist[bin];
    if (n == 0) continue;
    rmerge::left_factor<T> left;
    left.rows = n;
    left.offsets = a.row_offsets;
    left.columns = a.col_indices;
    left.values = a.values;
    rmerge::launch_mul_limited_values<T>(merge_pass(bin), left, b.row_offsets, b.col_indices, b.values,
                                         c.row_offsets.data(), c.col_indices.data(), c.values.data(), stream,
                                         perm.data() + starts.start[bin]);
  }
  const int dense = planner::dense_bin(lim.numeric_max_table);
  const int first_block_bin = planner::table_bin_of(2 * planner::warp_max_table, lim.numeric_max_table);
  device_buffer<int> pos;  // column ranges: block tables and dense rows only
  for (int bin = first_block_bin; bin <= dense && planner::use_column_ranges(s); ++bin) {
    if (hist[bin] == 0) continue;
    pos = device_buffer<int>(allocator, static_cast<std::size_t>(b.rows) * (kernels::column_ranges + 1), stream, meter);
    compute_column_ranges(b.structure(), allocator, stream, meter, pos.data());
    break;
  }
  for (int bin = planner::first_table_bin; bin < dense; ++bin) {
    const std::int64_t n = hist[bin];
    if (n == 0) continue;
    const planner::table_config cfg = planner::config_for_table(planner::table_of_bin(bin), sizeof(T));
    const int* rows = perm.data() + starts.start[bin];
    const unsigned grid = static_cast<unsigned>((n + cfg.rows_per_block - 1) / cfg.rows_per_block);
    launch_numeric_shared<T>(cfg, grid, stream, rows, n, pos.data(), a, b, c);
  }
  if (hist[dense] > 0) {
    planner::job_stats exact = s;
    exact.numeric_dense_candidates = hist[dense];
    const workspace_plan w = plan_workspace(exact, c.nnz, sizeof(T), lim, f);
    const std::int64_t blocks = w.numeric_dense_blocks;
    const std::size_t words = words_of(b.cols);
    device_buffer<unsigned> bitmaps(allocator, static_cast<std::size_t>(blocks) * words, stream, meter);
    device_buffer<T> values(allocator, static_cast<std::size_t>(blocks) * static_cast<std::size_t>(b.cols), stream,
                            meter);
    SPGEMM_CUDA_CHECK(cudaMemsetAsync(bitmaps.data(), 0, bitmaps.bytes(), stream));
    SPGEMM_CUDA_CHECK(cudaMemsetAsync(values.data(), 0, values.bytes(), stream));
    const int threads = planner::dense_block_threads;
    const std::size_t shared = static_cast<std::size_t>(threads) * (16 + 2 * sizeof(T));
    kernels::numeric_dense_kernel<T><<<static_cast<unsigned>(blocks), threads, shared, stream>>>(
        perm.data() + starts.start[dense], hist[dense], b.cols, pos.data(), bitmaps.data(), values.data(), a.row_offsets,
        a.col_indices, a.values, b.row_offsets, b.col_indices, b.values, c.row_offsets.data(), c.col_indices.data(),
        c.values.data());
    SPGEMM_CUDA_CHECK_LAUNCH();
  }
  return c;
}

template device_csr<float> multiply(const cuda::csr_view<float>&, const cuda::csr_view<float>&, device_allocator&,
                                    cudaStream_t, const cancel_token&, job_meter*, bool);
template device_csr<double> multiply(const cuda::csr_view<double>&, const cuda::csr_view<double>&,
                                     device_allocator&, cudaStream_t, const cancel_token&, job_meter*, bool);

}  // namespace spgemm::hash
