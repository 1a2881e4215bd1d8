// Hash SpGEMM host dispatch (see hash.hpp for the contract, hash_kernels.cuh
// for the tables and segment_kernels.cuh for the segment rows).
//
// Phases: (1) statistics and symbolic bins per row (one kernel; counters read
// back), rows grouped by bin; (2) symbolic kernels write the nnz of each row
// into C's offsets: a launch per table bin, the segment rows per (row,
// segment) item, the global dense rows; (3) numeric bins from the exact nnz
// (segment and merge rows keep their bin), exclusive scan, the bins'
// histogram and nnz read back in one synchronization, C allocated exactly;
// (4) rows regrouped; column ranges of B for the dense rows, and for the
// block table bins where planner::use_column_ranges; (5) numeric kernels
// (copy, warp tables, block tables, segment items, dense rows).
// The launches of (2) and of (5) run side by side (cuda::launch_side_by_side:
// they write disjoint rows of C), the longest-running first; on the H100
// this took 18-29% off the graphs (wiki-Vote 0.69 -> 0.50 ms, web-NotreDame
// 5.4 -> 4.0, with the batched counters of stats_kernel and scatter_kernel).
// Workspace: rows bytes (bins) + 4 rows bytes (rows grouped by bin) + 256
// bytes of counters + the column ranges (32 KB + 132 bytes per row of B) +
// the segment rows' tables (segment_bytes) + the largest of: CUB scan
// storage, the symbolic dense bitmaps, the numeric dense accumulators
// (bounded by planner::dense_blocks).
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <array>
#include <cassert>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/read_back.hpp"
#include "cuda/stream_fan.hpp"
#include "hash/hash.hpp"
#include "hash/hash_kernels.cuh"
#include "hash/segment_kernels.cuh"
#include "rmerge/mul_limited.hpp"

namespace spgemm::hash {
namespace {

using cuda::device_allocator;
using cuda::device_buffer;
using cuda::device_csr;
using cuda::job_meter;
using kernels::ull;

using cuda::device_facts;

device_facts facts() { return cuda::current_device_facts(); }

constexpr int helper_threads = 256;

// A tuning setting from the environment (benchmark sweeps), else `fallback`;
// read per job: tests and sweeps change it.
std::int64_t setting(const char* name, std::int64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  const long long x = std::atoll(v);
  return static_cast<std::int64_t>(x < 0 ? 0 : x);
}

// The job's limits: the device's tables, segment rows where their table of
// segment starts fits, and in the hybrid plan the merge bins' output bound
// (SPGEMM_HYBRID_MERGE_MAX; 0: off).
planner::limits job_limits(const device_facts& f, std::size_t value_bytes, const cuda::structure_view& a,
                           const cuda::structure_view& b, bool hybrid) {
  planner::limits lim = planner::limits_for(f.max_shared, value_bytes);
  lim.segment_rows = lim.segment_rows && planner::segment_table_fits(b.rows, b.cols, a.nnz, b.nnz) &&
                     planner::segment_symbolic_shared_bytes(b.cols) <= f.max_shared;
  if (hybrid) lim.merge_max_bound = setting("SPGEMM_HYBRID_MERGE_MAX", planner::default_merge_max_bound);
  return lim;
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

// Segment rows: the segment starts of every row of B; per row, its id and a
// count then offset per segment; the item counter.
std::size_t segment_bytes(const planner::job_stats& s) {
  const std::int64_t rows = s.symbolic_bins[planner::segment_bin];
  if (rows == 0) return 0;
  const auto segments = static_cast<std::size_t>(planner::segments_of(s.b_cols));
  return sizeof(int) * (static_cast<std::size_t>(s.b_rows) * (segments + 1) +
                        static_cast<std::size_t>(rows) * (segments + 1)) +
         sizeof(ull);
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
            static_cast<std::size_t>(s.rows) * (1 + sizeof(int)) + column_range_bytes(s.b_rows) +
            segment_bytes(s);
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
  cuda::allow_dynamic_shared(reinterpret_cast<const void*>(kernel), bytes);
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
  const int lanes = kernels::stats_lanes(a.rows, a.nnz);
  kernels::stats_kernel<<<helper_blocks(a.rows * lanes), helper_threads, 0, stream>>>(
      a.rows, lanes, a.row_offsets, a.col_indices, b.row_offsets, b.cols, lim, bins, row_nnz, counters);
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
        b.rows, b.row_offsets, b.col_indices, kernels::column_ranges + 1, kernels::split_table{splits.data()}, pos);
    SPGEMM_CUDA_CHECK_LAUNCH();
  }
}

// The segment rows' work, from the symbolic pass to the numeric pass: where
// every segment starts in every row of B, the rows (in the order of their
// items), and per item (row, segment) its nnz, then its offset within the row.
struct segment_work {
  std::int64_t n = 0;
  int segments = 0;
  device_buffer<int> pos;
  device_buffer<int> rows;
  device_buffer<int> starts;
};

// The segment rows' buffers (rows: the bin's rows, n of them), allocated on
// the job's stream.
segment_work allocate_segments(const cuda::structure_view& b, std::int64_t n, device_allocator& allocator,
                               cudaStream_t stream, job_meter* meter) {
  segment_work work;
  work.n = n;
  if (n == 0) return work;
  work.segments = static_cast<int>(planner::segments_of(b.cols));
  const int stride = work.segments + 1;
  work.pos = device_buffer<int>(allocator, static_cast<std::size_t>(b.rows) * stride, stream, meter);
  work.rows = device_buffer<int>(allocator, static_cast<std::size_t>(n), stream, meter);
  work.starts = device_buffer<int>(allocator, static_cast<std::size_t>(n) * work.segments, stream, meter);
  return work;
}

// Symbolic pass of the segment rows: the offset of every item within its row
// and the nnz of every row (into row_nnz); the segment starts of B's rows
// for the numeric pass.
void count_segments(segment_work& work, const cuda::structure_view& a, const cuda::structure_view& b,
                    const int* rows, offset_t* row_nnz, cudaStream_t stream) {
  const std::int64_t n = work.n;
  const int stride = work.segments + 1;
  SPGEMM_CUDA_CHECK(cudaMemcpyAsync(work.rows.data(), rows, work.rows.bytes(), cudaMemcpyDeviceToDevice, stream));
  if (b.rows > 0) {
    kernels::range_positions_kernel<<<helper_blocks(b.rows * stride), helper_threads, 0, stream>>>(
        b.rows, b.row_offsets, b.col_indices, stride, kernels::split_segments{}, work.pos.data());
    SPGEMM_CUDA_CHECK_LAUNCH();
  }
  const int threads = planner::segment_block_threads;
  const std::size_t shared = planner::segment_symbolic_shared_bytes(b.cols);
  set_shared(kernels::symbolic_segment_kernel, shared);
  kernels::symbolic_segment_kernel<<<static_cast<unsigned>(std::min<std::int64_t>(n, 1 << 20)), threads, shared,
                                     stream>>>(work.rows.data(), n, work.segments, a.row_offsets, a.col_indices,
                                               b.row_offsets, b.col_indices, work.starts.data(), row_nnz);
  SPGEMM_CUDA_CHECK_LAUNCH();
}

// Numeric pass of the segment rows: persistent blocks, as many as fit the
// GPU, taking items from a counter (next_item, zeroed here).
// SPGEMM_SEGMENT_ENTRY_PASSES overrides planner::segment_entry_passes
// (benchmark sweeps).
template <typename T>
void fill_segments(const segment_work& work, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b,
                   device_csr<T>& c, int sm_count, ull* next_item, cudaStream_t stream) {
  const auto kernel = kernels::numeric_segment_kernel<T>;
  const std::size_t shared = planner::segment_shared_bytes(sizeof(T));
  set_shared(kernel, shared);
  const int threads = planner::segment_block_threads;
  int per_sm = 0;
  SPGEMM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, shared));
  const std::int64_t items = work.n * work.segments;
  const auto blocks =
      static_cast<unsigned>(std::min<std::int64_t>(items, std::max(per_sm, 1) * std::int64_t{sm_count}));
  const auto entry_passes = static_cast<int>(setting("SPGEMM_SEGMENT_ENTRY_PASSES", planner::segment_entry_passes));
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(next_item, 0, sizeof(ull), stream));
  kernel<<<blocks, threads, shared, stream>>>(work.rows.data(), work.n, work.segments, work.pos.data(),
                                              work.starts.data(), next_item, entry_passes, a.row_offsets,
                                              a.col_indices, a.values, b.row_offsets, b.col_indices, b.values,
                                              c.row_offsets.data(), c.col_indices.data(), c.values.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
}

// The warp table bins: first_table_bin up to the bin of planner::warp_max_table.
int last_warp_bin(int max_table) { return planner::table_bin_of(planner::warp_max_table, max_table); }

unsigned row_blocks(std::int64_t n, const planner::table_config& cfg) {
  return static_cast<unsigned>((n + cfg.rows_per_block - 1) / cfg.rows_per_block);
}

// The symbolic kernel of one table bin (rows: its n rows): a warp per row
// up to planner::warp_max_table slots, else a block.
void launch_symbolic_table(int bin, const int* rows, std::int64_t n, const cuda::structure_view& a,
                           const cuda::structure_view& b, offset_t* row_nnz, cudaStream_t stream) {
  const planner::table_config cfg = planner::config_for_table(planner::table_of_bin(bin), 0);
  const auto kernel = cfg.warp_per_row ? kernels::symbolic_shared_kernel<true> : kernels::symbolic_shared_kernel<false>;
  set_shared(kernel, cfg.shared_bytes);
  kernel<<<row_blocks(n, cfg), cfg.block_threads, cfg.shared_bytes, stream>>>(
      rows, n, cfg.table, a.row_offsets, a.col_indices, b.row_offsets, b.col_indices, row_nnz);
  SPGEMM_CUDA_CHECK_LAUNCH();
}

// The numeric kernel of one block table bin: ITEMS = slots per thread, a
// template parameter because the sort keeps them in registers.
template <int ITEMS, typename T>
void launch_block_table(const planner::table_config& cfg, const int* rows, std::int64_t n, const int* pos,
                        const cuda::csr_view<T>& a, const cuda::csr_view<T>& b, device_csr<T>& c, cudaStream_t stream) {
  const auto kernel = kernels::numeric_block_table_kernel<ITEMS, T>;
  set_shared(kernel, cfg.shared_bytes);
  kernel<<<static_cast<unsigned>(n), cfg.block_threads, cfg.shared_bytes, stream>>>(
      rows, pos, a.row_offsets, a.col_indices, a.values, b.row_offsets, b.col_indices, b.values, c.row_offsets.data(),
      c.col_indices.data(), c.values.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
}

// The numeric kernel of one table bin (rows: its n rows): a warp per row up
// to planner::warp_max_table slots, else a block, on B's column ranges
// where pos is given.
template <typename T>
void launch_numeric_table(int bin, const int* rows, std::int64_t n, const int* pos, const cuda::csr_view<T>& a,
                          const cuda::csr_view<T>& b, device_csr<T>& c, cudaStream_t stream) {
  const planner::table_config cfg = planner::config_for_table(planner::table_of_bin(bin), sizeof(T));
  if (cfg.warp_per_row) {
    set_shared(kernels::numeric_warp_tables_kernel<T>, cfg.shared_bytes);
    kernels::numeric_warp_tables_kernel<T><<<row_blocks(n, cfg), cfg.block_threads, cfg.shared_bytes, stream>>>(
        rows, n, cfg.table, a.row_offsets, a.col_indices, a.values, b.row_offsets, b.col_indices, b.values,
        c.row_offsets.data(), c.col_indices.data(), c.values.data());
    SPGEMM_CUDA_CHECK_LAUNCH();
    return;
  }
  const int items = cfg.table / cfg.block_threads;
  switch (items) {
    case 8: return launch_block_table<8, T>(cfg, rows, n, pos, a, b, c, stream);
    case 16: return launch_block_table<16, T>(cfg, rows, n, pos, a, b, c, stream);
    default: throw std::logic_error("hash: no numeric kernel for " + std::to_string(items) + " slots per thread");
  }
}

}  // namespace

planner::job_stats compute_stats(const cuda::structure_view& a, const cuda::structure_view& b,
                                 std::size_t value_bytes, device_allocator& allocator, cudaStream_t stream) {
  const planner::limits lim = job_limits(facts(), value_bytes, a, b, false);
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
  const planner::limits lim = job_limits(f, sizeof(T), a.structure(), b.structure(), hybrid);
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

  // Symbolic pass: one launch per kind of row, side by side (they write
  // disjoint rows of C): dense rows and the largest tables first, their few
  // blocks run longest.
  segment_work seg;
  {
    const kernels::bin_starts starts =
        group_rows(m, bins.data(), s.symbolic_bins, cursors.data(), perm.data(), stream);
    const int dense = planner::dense_bin(lim.symbolic_max_table);
    seg = allocate_segments(b.structure(), s.symbolic_bins[planner::segment_bin], allocator, stream, meter);
    device_buffer<unsigned> bitmaps;
    std::int64_t dense_blocks = 0;
    if (s.symbolic_bins[dense] > 0) {
      const workspace_plan w = plan_workspace(s, s.nnz_c_bound, sizeof(T), lim, f);
      dense_blocks = w.symbolic_dense_blocks;
      bitmaps = device_buffer<unsigned>(allocator, w.symbolic_dense_bytes / sizeof(unsigned), stream, meter);
    }
    std::vector<cuda::launch_fn> launches;
    if (dense_blocks > 0) {
      launches.emplace_back([&](cudaStream_t st) {
        SPGEMM_CUDA_CHECK(cudaMemsetAsync(bitmaps.data(), 0, bitmaps.bytes(), st));
        const int threads = planner::dense_block_threads;
        const std::size_t shared = static_cast<std::size_t>(threads) * 16;
        kernels::symbolic_dense_kernel<<<static_cast<unsigned>(dense_blocks), threads, shared, st>>>(
            perm.data() + starts.start[dense], s.symbolic_bins[dense], static_cast<std::int64_t>(words_of(b.cols)),
            bitmaps.data(), a.row_offsets, a.col_indices, b.row_offsets, b.col_indices, c.row_offsets.data());
        SPGEMM_CUDA_CHECK_LAUNCH();
      });
    }
    // A launch per table bin (from -> to, largest first), shared memory for
    // its own table size.
    const auto add_table_bins = [&](int from, int to) {
      for (int bin = from; bin >= to; --bin) {
        const std::int64_t n = s.symbolic_bins[bin];
        if (n == 0) continue;
        launches.emplace_back([&, bin, n](cudaStream_t st) {
          launch_symbolic_table(bin, perm.data() + starts.start[bin], n, a.structure(), b.structure(),
                                c.row_offsets.data(), st);
        });
      }
    };
    add_table_bins(dense - 1, last_warp_bin(lim.symbolic_max_table) + 1);
    if (seg.n > 0) {
      launches.emplace_back([&](cudaStream_t st) {
        count_segments(seg, a.structure(), b.structure(), perm.data() + starts.start[planner::segment_bin],
                       c.row_offsets.data(), st);
      });
    }
    for (int bin = planner::first_merge_bin; bin < planner::first_merge_bin + planner::merge_bin_count; ++bin) {
      const std::int64_t n = s.symbolic_bins[bin];
      if (n == 0) continue;
      launches.emplace_back([&, bin, n](cudaStream_t st) {
        rmerge::launch_mul_limited_count(merge_pass(bin), n, a.row_offsets, a.col_indices, b.row_offsets,
                                         b.col_indices, c.row_offsets.data(), st, perm.data() + starts.start[bin]);
      });
    }
    // The warp table bins last (one launch for all with room for the
    // largest table held hep-th's short rows to 3 blocks per SM).
    add_table_bins(last_warp_bin(lim.symbolic_max_table), planner::first_table_bin);
    cuda::launch_side_by_side(stream, launches);
  }
  cancel.throw_if_cancelled();

  // Numeric bins from the exact nnz of each row (in C's offsets until the
  // scan), then C's offsets: the bins' histogram and nnz(C) come back in one
  // read, and C is allocated exactly.
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(counters.data(), 0, counters.bytes(), stream));
  kernels::numeric_bins_kernel<<<helper_blocks(m), helper_threads, 0, stream>>>(
      m, a.row_offsets, c.row_offsets.data(), lim, bins.data(), counters.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  {
    std::size_t bytes = scan_temp_bytes(m + 1);
    device_buffer<unsigned char> temp(allocator, bytes, stream, meter);
    SPGEMM_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.data(), bytes, c.row_offsets.data(), m + 1, stream));
  }
  SPGEMM_CUDA_CHECK(cudaMemcpyAsync(host.data(), counters.data(), counters.bytes(), cudaMemcpyDeviceToHost, stream));
  offset_t nnz = 0;
  SPGEMM_CUDA_CHECK(cudaMemcpyAsync(&nnz, c.row_offsets.data() + m, sizeof(nnz), cudaMemcpyDeviceToHost, stream));
  SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  c.nnz = nnz;
  cancel.throw_if_cancelled();
  c.col_indices = device_buffer<index_t>(allocator, static_cast<std::size_t>(c.nnz), stream, meter);
  c.values = device_buffer<T>(allocator, static_cast<std::size_t>(c.nnz), stream, meter);
  if (c.nnz == 0) return c;

  // Numeric pass.
  std::int64_t hist[planner::max_bins];
  for (int i = 0; i < planner::max_bins; ++i) hist[i] = static_cast<std::int64_t>(host[kernels::counter_numeric_hist + i]);
  const kernels::bin_starts starts = group_rows(m, bins.data(), hist, cursors.data(), perm.data(), stream);

  // Workspace first (on the job's stream), then the launches side by side:
  // dense rows and the largest tables first, the segment rows' persistent
  // blocks last (they take what the others leave).
  const int dense = planner::dense_bin(lim.numeric_max_table);
  const int first_block_bin = planner::table_bin_of(2 * planner::warp_max_table, lim.numeric_max_table);
  bool ranged_bins = false;
  for (int bin = first_block_bin; bin < dense; ++bin) ranged_bins = ranged_bins || hist[bin] > 0;
  ranged_bins = ranged_bins && planner::use_column_ranges(s);
  // Dense rows always take column ranges: without them the warps of a block
  // commit one after another to global memory.
  device_buffer<int> pos;
  if (ranged_bins || hist[dense] > 0) {
    pos = device_buffer<int>(allocator, static_cast<std::size_t>(b.rows) * (kernels::column_ranges + 1), stream, meter);
    compute_column_ranges(b.structure(), allocator, stream, meter, pos.data());
  }
  device_buffer<unsigned> dense_bitmaps;
  device_buffer<T> dense_values;
  std::int64_t dense_blocks = 0;
  if (hist[dense] > 0) {
    planner::job_stats exact = s;
    exact.numeric_dense_candidates = hist[dense];
    dense_blocks = plan_workspace(exact, c.nnz, sizeof(T), lim, f).numeric_dense_blocks;
    dense_bitmaps = device_buffer<unsigned>(allocator, static_cast<std::size_t>(dense_blocks) * words_of(b.cols),
                                            stream, meter);
    dense_values = device_buffer<T>(allocator, static_cast<std::size_t>(dense_blocks) * static_cast<std::size_t>(b.cols),
                                    stream, meter);
  }
  device_buffer<ull> next_item;
  if (seg.n > 0) next_item = device_buffer<ull>(allocator, 1, stream, meter);

  std::vector<cuda::launch_fn> launches;
  if (dense_blocks > 0) {
    launches.emplace_back([&](cudaStream_t st) {
      SPGEMM_CUDA_CHECK(cudaMemsetAsync(dense_bitmaps.data(), 0, dense_bitmaps.bytes(), st));
      SPGEMM_CUDA_CHECK(cudaMemsetAsync(dense_values.data(), 0, dense_values.bytes(), st));
      const int threads = planner::dense_block_threads;
      const std::size_t shared = static_cast<std::size_t>(threads) * (16 + 2 * sizeof(T));
      kernels::numeric_dense_kernel<T><<<static_cast<unsigned>(dense_blocks), threads, shared, st>>>(
          perm.data() + starts.start[dense], hist[dense], b.cols, pos.data(), dense_bitmaps.data(),
          dense_values.data(), a.row_offsets, a.col_indices, a.values, b.row_offsets, b.col_indices, b.values,
          c.row_offsets.data(), c.col_indices.data(), c.values.data());
      SPGEMM_CUDA_CHECK_LAUNCH();
    });
  }
  for (int bin = dense - 1; bin >= planner::first_table_bin; --bin) {
    const std::int64_t n = hist[bin];
    if (n == 0) continue;
    launches.emplace_back([&, bin, n](cudaStream_t st) {
      launch_numeric_table<T>(bin, perm.data() + starts.start[bin], n, ranged_bins ? pos.data() : nullptr, a, b, c, st);
    });
  }
  if (hist[planner::bin_copy] > 0) {
    launches.emplace_back([&](cudaStream_t st) {
      const std::int64_t n = hist[planner::bin_copy];
      const unsigned grid = static_cast<unsigned>((n * 32 + helper_threads - 1) / helper_threads);
      kernels::copy_rows_kernel<T><<<grid, helper_threads, 0, st>>>(
          perm.data() + starts.start[planner::bin_copy], n, a.row_offsets, a.col_indices, a.values, b.row_offsets,
          b.col_indices, b.values, c.row_offsets.data(), c.col_indices.data(), c.values.data());
      SPGEMM_CUDA_CHECK_LAUNCH();
    });
  }
  for (int bin = planner::first_merge_bin; bin < planner::first_merge_bin + planner::merge_bin_count; ++bin) {
    const std::int64_t n = hist[bin];
    if (n == 0) continue;
    launches.emplace_back([&, bin, n](cudaStream_t st) {
      rmerge::left_factor<T> left;
      left.rows = n;
      left.offsets = a.row_offsets;
      left.columns = a.col_indices;
      left.values = a.values;
      rmerge::launch_mul_limited_values<T>(merge_pass(bin), left, b.row_offsets, b.col_indices, b.values,
                                           c.row_offsets.data(), c.col_indices.data(), c.values.data(), st,
                                           perm.data() + starts.start[bin]);
    });
  }
  if (seg.n > 0) {
    launches.emplace_back([&](cudaStream_t st) { fill_segments<T>(seg, a, b, c, f.sm_count, next_item.data(), st); });
  }
  cuda::launch_side_by_side(stream, launches);
  return c;
}

template device_csr<float> multiply(const cuda::csr_view<float>&, const cuda::csr_view<float>&, device_allocator&,
                                    cudaStream_t, const cancel_token&, job_meter*, bool);
template device_csr<double> multiply(const cuda::csr_view<double>&, const cuda::csr_view<double>&,
                                     device_allocator&, cudaStream_t, const cancel_token&, job_meter*, bool);

}  // namespace spgemm::hash
