// Hash SpGEMM host dispatch (see hash.hpp for the contract, hash_kernels.cuh
// for the tables and segment_kernels.cuh for the segment rows).
//
// Phases: (1) statistics and symbolic bins per row (one kernel; counters read
// back), rows grouped by bin; (2) symbolic kernels write the nnz of each row
// into C's offsets: a launch per table bin (small products: one fused launch
// for the bins up to planner::fused_max_table), the segment rows, the global
// dense rows; (3) numeric bins from the exact nnz (segment rows keep their
// bin) and the exclusive scan in one kernel, the bins' histogram
// and nnz read back in one synchronization, C allocated exactly; (4) rows
// regrouped; column ranges of B for the dense rows, and for the block table
// bins where planner::use_column_ranges; (5) numeric kernels (copy, warp
// tables, block tables -- fused for small products as in (2) --, segment
// items, dense rows).
// The launches of (2) and of (5) run side by side (cuda::launch_side_by_side:
// they write disjoint rows of C), the longest-running first, so that bins of
// few long-running blocks overlap the bins of many short ones. A launch costs
// the host more than many small bins' kernels take: hence the fused launches,
// the one scan kernel and the one memset of all counters.
// Workspace: rows bytes (bins) + 4 rows bytes (rows grouped by bin) + the
// counters (counter_words: 768 bytes + 8 bytes per 2048 rows) + the column
// ranges (32 KB + 132 bytes per row of B) + the segment rows' tables
// (segment_bytes) + the larger of: the symbolic dense bitmaps, the numeric
// dense accumulators (bounded by planner::dense_blocks).
#include <algorithm>
#include <array>
#include <climits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/device_facts.hpp"
#include "cuda/read_back.hpp"
#include "cuda/stream_fan.hpp"
#include "hash/hash.hpp"
#include "hash/hash_kernels.cuh"
#include "hash/segment_kernels.cuh"
#include "planner/row_bins.hpp"
#include "planner/statistics.hpp"

namespace spgemm::hash {
namespace {

using cuda::memory_resource;
using cuda::device_buffer;
using cuda::device_csr;
using kernels::ull;

using cuda::device_facts;

device_facts facts() { return cuda::current_device_facts(); }

constexpr int helper_threads = 256;

unsigned helper_blocks(std::int64_t n) {
  const std::int64_t b = (n + helper_threads - 1) / helper_threads;
  return static_cast<unsigned>(std::min<std::int64_t>(std::max<std::int64_t>(b, 1), 1 << 16));
}

// The job's counters (kernels::counter_count), the cursors of the symbolic
// and of the numeric grouping, and the tile states of the numeric scan: all
// zeroed by one memset.
std::size_t counter_words(std::int64_t rows) {
  return static_cast<std::size_t>(kernels::counter_count + 2 * planner::max_bins + kernels::scan_tiles(rows + 1));
}

std::size_t words_of(std::int64_t cols) { return static_cast<std::size_t>((cols + 31) / 32); }

// Column ranges of the ranged numeric kernels (block tables, dense rows):
// bucket counts, split columns, and the range starts of every row of B.
std::size_t column_range_bytes(std::int64_t b_rows) {
  return sizeof(ull) * kernels::split_buckets + sizeof(index_t) * (kernels::column_ranges + 1) +
         sizeof(int) * static_cast<std::size_t>(b_rows) * (kernels::column_ranges + 1);
}

// Segment rows: the segment starts of every row of B; per row, its id and
// an offset per segment (allocate_segments; the item counter is a counter).
std::size_t segment_bytes(const planner::job_stats& s, const planner::limits& lim, int sm_count) {
  const std::int64_t rows = planner::segment_row_count(s.symbolic_bins);
  if (rows == 0) return 0;
  const int width = planner::segment_width_for(s, lim, sm_count);
  const auto segments = static_cast<std::size_t>(planner::segments_of(s.b_cols, width));
  return sizeof(int) * (static_cast<std::size_t>(s.b_rows) * (segments + 1) +
                        static_cast<std::size_t>(rows) * (segments + 1));
}

struct workspace_plan {
  std::size_t fixed = 0;
  std::int64_t symbolic_dense_blocks = 0;
  std::int64_t numeric_dense_blocks = 0;
  std::size_t symbolic_dense_bytes = 0;
  std::size_t numeric_dense_bytes = 0;
};

workspace_plan plan_workspace(const planner::job_stats& s, std::int64_t nnz_c, std::size_t value_bytes,
                              const planner::limits& lim, const device_facts& f) {
  workspace_plan w;
  w.fixed = sizeof(ull) * counter_words(s.rows) + static_cast<std::size_t>(s.rows) * (1 + sizeof(int)) +
            column_range_bytes(s.b_rows) + segment_bytes(s, lim, f.sm_count);
  const std::size_t budget = planner::dense_budget_per_nnz * static_cast<std::size_t>(std::max<std::int64_t>(nnz_c, 0));
  const std::int64_t sym_dense_rows = s.symbolic_bins[planner::dense_bin(lim.symbolic_max_table)];
  w.symbolic_dense_blocks = planner::dense_blocks(sym_dense_rows, s.b_cols, 0, budget, f.sm_count);
  w.symbolic_dense_bytes = static_cast<std::size_t>(w.symbolic_dense_blocks) * words_of(s.b_cols) * sizeof(unsigned);
  w.numeric_dense_blocks = planner::dense_blocks(s.numeric_dense_candidates, s.b_cols, value_bytes, budget, f.sm_count);
  w.numeric_dense_bytes = static_cast<std::size_t>(w.numeric_dense_blocks) *
                          (words_of(s.b_cols) * sizeof(unsigned) + static_cast<std::size_t>(s.b_cols) * value_bytes);
  return w;
}

// Groups the rows by bin (cursors: planner::max_bins zeroes); returns the
// first position of every bin in perm.
kernels::bin_starts group_rows(std::int64_t rows, const unsigned char* bins, const std::int64_t* hist,
                               ull* cursors, int* perm, cudaStream_t stream) {
  kernels::bin_starts starts{};
  long long at = 0;
  for (int i = 0; i < planner::max_bins; ++i) {
    starts.start[i] = at;
    if (i != planner::bin_none) at += hist[i];
  }
  if (rows > 0) {
    kernels::scatter_kernel<<<helper_blocks(rows), helper_threads, 0, stream>>>(rows, bins, starts, cursors, perm);
    SPGEMM_CUDA_CHECK_LAUNCH();
  }
  return starts;
}

// Where each column range starts in every row of B (pos: b.rows *
// (column_ranges + 1) ints), in an allocation of column_range_bytes that
// also holds the bucket counts and splits that found them.
struct range_starts {
  device_buffer<unsigned char> storage;
  int* pos = nullptr;
};

// Splits B's columns into kernels::column_ranges balanced ranges and finds
// where each range starts in every row of B.
range_starts compute_column_ranges(const cuda::structure_view& b, memory_resource& memory, cudaStream_t stream) {
  range_starts out;
  out.storage = device_buffer<unsigned char>(memory, column_range_bytes(b.rows), stream);
  cuda::array_carver carve(out.storage.data());
  auto hist = carve.next<ull>(kernels::split_buckets);
  auto splits = carve.next<index_t>(kernels::column_ranges + 1);
  int* pos = out.pos = carve.next<int>(static_cast<std::size_t>(b.rows) * (kernels::column_ranges + 1)).data();
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
  return out;
}

// The segment rows' work, from the symbolic pass to the numeric pass: where
// every segment starts in every row of B, the rows (in the order of their
// items), and per item (row, segment) its nnz, then its offset within the row.
struct segment_work {
  std::int64_t n = 0;
  int width = planner::segment_width;  // columns of B a segment (planner::segment_width_for)
  int segments = 0;
  device_buffer<int> storage;  // the three below
  cuda::device_span<int> pos;
  cuda::device_span<int> rows;
  cuda::device_span<int> starts;
};

// The segment rows' buffers (rows: the bin's rows, n of them), allocated on
// the job's stream in one allocation.
segment_work allocate_segments(const cuda::structure_view& b, std::int64_t n, int width, memory_resource& memory,
                               cudaStream_t stream) {
  segment_work work;
  work.n = n;
  if (n == 0) return work;
  work.width = width;
  work.segments = static_cast<int>(planner::segments_of(b.cols, width));
  const auto pos = static_cast<std::size_t>(b.rows) * (work.segments + 1);
  const auto rows = static_cast<std::size_t>(n);
  const auto starts = rows * work.segments;
  work.storage = device_buffer<int>(memory, pos + rows + starts, stream);
  cuda::array_carver carve(work.storage.data());
  work.pos = carve.next<int>(pos);
  work.rows = carve.next<int>(rows);
  work.starts = carve.next<int>(starts);
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
        b.rows, b.row_offsets, b.col_indices, stride, kernels::split_segments{work.width}, work.pos.data());
    SPGEMM_CUDA_CHECK_LAUNCH();
  }
  const int threads = planner::segment_block_threads;
  const std::size_t shared = planner::segment_symbolic_shared_bytes(b.cols);
  cuda::allow_max_dynamic_shared(kernels::symbolic_segment_kernel);
  kernels::symbolic_segment_kernel<<<static_cast<unsigned>(std::min<std::int64_t>(n, 1 << 20)), threads, shared,
                                     stream>>>(work.rows.data(), n, work.segments, work.width, a.row_offsets,
                                               a.col_indices, b.row_offsets, b.col_indices, work.starts.data(),
                                               row_nnz);
  SPGEMM_CUDA_CHECK_LAUNCH();
}

// Numeric pass of the segment rows that kept their bin (bins: the numeric
// bins): persistent blocks, as many as fit the GPU, taking items from a
// counter (next_item, zero); entry_passes: tuning::segment_entry_passes.
template <typename T, typename S>
void fill_segments(const segment_work& work, const unsigned char* bins, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b,
                   device_csr<T>& c, int sm_count, std::int64_t entry_passes, ull* next_item, S ring, cudaStream_t stream) {
  const auto kernel = kernels::numeric_segment_kernel<T, S>;
  const std::size_t shared = planner::segment_shared_bytes(sizeof(T), work.width);
  cuda::allow_max_dynamic_shared(kernel);
  const int threads = planner::segment_block_threads;
  int per_sm = 0;
  SPGEMM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, shared));
  const std::int64_t items = work.n * work.segments;
  const auto blocks =
      static_cast<unsigned>(std::min<std::int64_t>(items, std::max(per_sm, 1) * std::int64_t{sm_count}));
  kernel<<<blocks, threads, shared, stream>>>(work.rows.data(), bins, work.n, work.segments, work.width,
                                              work.pos.data(), work.starts.data(), next_item,
                                              static_cast<int>(std::min<std::int64_t>(entry_passes, INT_MAX)), a.row_offsets,
                                              a.col_indices, a.values, b.row_offsets, b.col_indices, b.values,
                                              c.row_offsets.data(), c.col_indices.data(), c.values.data(), ring);
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
  cuda::allow_max_dynamic_shared(kernel);
  kernel<<<row_blocks(n, cfg), cfg.block_threads, cfg.shared_bytes, stream>>>(
      rows, n, cfg.table, a.row_offsets, a.col_indices, b.row_offsets, b.col_indices, row_nnz);
  SPGEMM_CUDA_CHECK_LAUNCH();
}

// The numeric kernel of one block table bin: ITEMS = slots per thread, a
// template parameter because the sort keeps them in registers.
template <int ITEMS, typename T, typename S>
void launch_block_table(const planner::table_config& cfg, const int* rows, std::int64_t n, const int* pos,
                        const cuda::csr_view<T>& a, const cuda::csr_view<T>& b, device_csr<T>& c, S ring,
                        cudaStream_t stream) {
  const auto kernel = kernels::numeric_block_table_kernel<ITEMS, T, S>;
  cuda::allow_max_dynamic_shared(kernel);
  kernel<<<static_cast<unsigned>(n), cfg.block_threads, cfg.shared_bytes, stream>>>(
      rows, kernels::block_split{pos, b.cols}, a.row_offsets, a.col_indices, a.values, b.row_offsets, b.col_indices,
      b.values, c.row_offsets.data(), c.col_indices.data(), c.values.data(), ring);
  SPGEMM_CUDA_CHECK_LAUNCH();
}

// The numeric kernel of one warp table bin: ITEMS = slots per lane.
template <int ITEMS, typename T, typename S>
void launch_warp_tables(const planner::table_config& cfg, const int* rows, std::int64_t n, const cuda::csr_view<T>& a,
                        const cuda::csr_view<T>& b, device_csr<T>& c, S ring, cudaStream_t stream) {
  const auto kernel = kernels::numeric_warp_tables_kernel<ITEMS, T, S>;
  cuda::allow_max_dynamic_shared(kernel);
  kernel<<<row_blocks(n, cfg), cfg.block_threads, cfg.shared_bytes, stream>>>(
      rows, n, b.cols, a.row_offsets, a.col_indices, a.values, b.row_offsets, b.col_indices, b.values,
      c.row_offsets.data(), c.col_indices.data(), c.values.data(), ring);
  SPGEMM_CUDA_CHECK_LAUNCH();
}

// The numeric kernel of one table bin (rows: its n rows): a warp per row up
// to planner::warp_max_table slots, else a block, on B's column ranges
// where pos is given.
template <typename T, typename S>
void launch_numeric_table(int bin, const int* rows, std::int64_t n, const int* pos, const cuda::csr_view<T>& a,
                          const cuda::csr_view<T>& b, device_csr<T>& c, S ring, cudaStream_t stream) {
  const planner::table_config cfg = planner::config_for_table(planner::table_of_bin(bin), sizeof(T));
  if (cfg.warp_per_row) {
    switch (cfg.table / 32) {
      case 1: return launch_warp_tables<1, T>(cfg, rows, n, a, b, c, ring, stream);
      case 2: return launch_warp_tables<2, T>(cfg, rows, n, a, b, c, ring, stream);
      case 4: return launch_warp_tables<4, T>(cfg, rows, n, a, b, c, ring, stream);
      case 8: return launch_warp_tables<8, T>(cfg, rows, n, a, b, c, ring, stream);
      case 16: return launch_warp_tables<16, T>(cfg, rows, n, a, b, c, ring, stream);
      default: throw std::logic_error("hash: no warp table of " + std::to_string(cfg.table) + " slots");
    }
  }
  const int items = cfg.table / cfg.block_threads;
  switch (items) {
    case 8: return launch_block_table<8, T>(cfg, rows, n, pos, a, b, c, ring, stream);
    case 16: return launch_block_table<16, T>(cfg, rows, n, pos, a, b, c, ring, stream);
    default: throw std::logic_error("hash: no numeric kernel for " + std::to_string(items) + " slots per thread");
  }
}

// The fused launch of a pass (planner::fuse_table_bins): the table bins from
// `top` down to the smallest (hist: rows per bin; largest tables first, their
// blocks run longest), then, numeric, the copy rows. group_bytes(threads,
// table): the shared memory of one row's group.
struct fused_launch {
  kernels::fused_bins bins;
  unsigned blocks = 0;
  std::size_t shared_bytes = 0;
  int max_items = 1;  // the most slots per thread of its bins (kernels::numeric_fused_kernel)
};

template <typename GroupBytes>
fused_launch plan_fused(int top, std::int64_t block_rows_max, bool copy_rows, const std::int64_t* hist,
                        const kernels::bin_starts& starts, const int* perm, GroupBytes group_bytes) {
  static_assert(kernels::max_fused_bins >= 8, "the table bins up to 2048 slots and the copy rows");
  constexpr int threads = planner::fused_block_threads;
  constexpr int warps = threads / 32;
  fused_launch f;
  const auto add = [&](int bin, kernels::fused_mode mode, int table) {
    const std::int64_t n = hist[bin];
    if (n == 0) return;
    kernels::fused_bins& b = f.bins;
    const int j = b.count++;
    const bool block = mode == kernels::fused_mode::block_rows;
    b.rows[j] = perm + starts.start[bin];
    b.n[j] = n;
    b.table[j] = table;
    b.mode[j] = mode;
    b.first_block[j] = f.blocks;
    f.blocks += static_cast<unsigned>(block ? n : (n + warps - 1) / warps);
    b.first_block[j + 1] = f.blocks;
    if (mode != kernels::fused_mode::copy_rows) {
      f.shared_bytes = std::max(f.shared_bytes, block ? group_bytes(threads, table) : warps * group_bytes(32, table));
      f.max_items = std::max(f.max_items, table / (block ? threads : 32));
    }
  };
  for (int bin = top; bin >= planner::first_table_bin; --bin) {
    const int table = planner::table_of_bin(bin);
    add(bin,
        planner::fused_warp_rows(table, hist[bin], block_rows_max) ? kernels::fused_mode::warp_rows
                                                                   : kernels::fused_mode::block_rows,
        table);
  }
  if (copy_rows) add(planner::bin_copy, kernels::fused_mode::copy_rows, 0);
  return f;
}

template <int MaxItems, typename T, typename S>
void launch_numeric_fused(const fused_launch& fl, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b,
                          device_csr<T>& c, S ring, cudaStream_t stream) {
  const auto kernel = kernels::numeric_fused_kernel<MaxItems, T, S>;
  cuda::allow_max_dynamic_shared(kernel);
  kernel<<<fl.blocks, planner::fused_block_threads, fl.shared_bytes, stream>>>(
      fl.bins, b.cols, a.row_offsets, a.col_indices, a.values, b.row_offsets, b.col_indices, b.values,
      c.row_offsets.data(), c.col_indices.data(), c.values.data(), ring);
  SPGEMM_CUDA_CHECK_LAUNCH();
}

// The job's fused launches: the top table bin they take (below
// first_table_bin: none, every bin launches on its own), and the most rows
// a bin may have for block rows.
struct fusion {
  int top = planner::first_table_bin - 1;
  std::int64_t block_rows_max = 0;
  bool on() const { return top >= planner::first_table_bin; }
};

fusion fusion_for(const planner::job_stats& s, int max_table, int sm_count, const tuning& t) {
  fusion f;
  if (!planner::fuse_table_bins(s.products, t.fuse_max_products)) return f;
  f.top = std::min(planner::table_bin_of(planner::fused_max_table, max_table), planner::dense_bin(max_table) - 1);
  f.block_rows_max = t.fused_block_rows_per_sm * sm_count;
  return f;
}

// Upper bound of what run() allocates (exact = false).
memory_estimate estimate_from(const planner::job_stats& s, std::size_t value_bytes) {
  const device_facts f = facts();
  const planner::limits lim = planner::limits_for(f.max_shared, value_bytes);
  const workspace_plan w = plan_workspace(s, s.nnz_c_bound, value_bytes, lim, f);
  memory_estimate e;
  e.exact = false;
  e.products = s.products;
  e.output_bytes = cuda::csr_bytes(s.rows, s.nnz_c_bound, value_bytes);
  e.nnz_bound = s.nnz_c_bound;
  e.workspace_bytes = w.fixed + std::max(w.symbolic_dense_bytes, w.numeric_dense_bytes);
  e.method = "hash";
  if (w.numeric_dense_blocks > 0) e.method += " +dense x" + std::to_string(w.numeric_dense_blocks);
  return e;
}

}  // namespace

memory_estimate estimate(const method::job& job) {
  return estimate_from(planner::compute_stats(job.a, job.b, job.value_bytes, job.tuning, job.memory, job.stream),
                       job.value_bytes);
}

namespace {

// The dense accumulators at the semiring's identity: zero bytes for
// plus-times, else a fill.
template <typename T, typename S>
void clear_to_identity(device_buffer<T>& values, S ring, cudaStream_t stream) {
  if constexpr (std::is_same_v<S, ops::plus_times_ops>) {
    SPGEMM_CUDA_CHECK(cudaMemsetAsync(values.data(), 0, values.bytes(), stream));
  } else {
    const auto n = static_cast<std::int64_t>(values.size());
    kernels::fill_kernel<T><<<helper_blocks(n), helper_threads, 0, stream>>>(values.data(), n,
                                                                          ring.template identity<T>());
    SPGEMM_CUDA_CHECK_LAUNCH();
  }
}

// The product over the semiring S (semiring/semiring_ops.hpp): its
// symbolic pass is every semiring's; the numeric kernels take S.
template <typename T, typename S>
device_csr<T> run_over(const method::job& job, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b, S ring) {
  memory_resource& memory = job.memory;
  const cudaStream_t stream = job.stream;
  const cancel_token& cancel = job.cancel;
  const tuning& t = job.tuning;
  const device_facts f = facts();
  const planner::limits lim = planner::job_limits(a.structure(), b.structure(), sizeof(T), t);
  const std::int64_t m = a.rows;
  device_csr<T> c = cuda::with_zero_offsets<T>(m, b.cols, memory, stream);

  // The counters, the rows grouped by bin and the bins in one allocation.
  const std::size_t words = counter_words(m);
  const auto rows = static_cast<std::size_t>(m);
  device_buffer<unsigned char> work(memory, words * sizeof(ull) + rows * (sizeof(int) + 1), stream);
  cuda::array_carver carve(work.data());
  auto counters = carve.next<ull>(words);
  auto perm = carve.next<int>(rows);
  auto bins = carve.next<unsigned char>(rows);
  ull* symbolic_cursors = counters.data() + kernels::counter_count;
  ull* numeric_cursors = symbolic_cursors + planner::max_bins;
  ull* scan_state = numeric_cursors + planner::max_bins;
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(counters.data(), 0, counters.bytes(), stream));
  planner::launch_stats(a.structure(), b.structure(), lim, bins.data(), c.row_offsets.data(), counters.data(), stream);
  std::array<ull, kernels::counter_count> host{};
  cuda::read_back(counters.data(), kernels::counter_count, host.data(), stream);
  const planner::job_stats s = planner::stats_of(host.data(), a.structure(), b.structure());
  cancel.throw_if_cancelled();

  // Symbolic pass: one launch per kind of row, side by side (they write
  // disjoint rows of C): dense rows and the largest tables first, their few
  // blocks run longest.
  segment_work seg;
  {
    const kernels::bin_starts starts =
        group_rows(m, bins.data(), s.symbolic_bins, symbolic_cursors, perm.data(), stream);
    const int dense = planner::dense_bin(lim.symbolic_max_table);
    seg = allocate_segments(b.structure(), planner::segment_row_count(s.symbolic_bins),
                            planner::segment_width_for(s, lim, f.sm_count), memory, stream);
    device_buffer<unsigned> bitmaps;
    std::int64_t dense_blocks = 0;
    if (s.symbolic_bins[dense] > 0) {
      const workspace_plan w = plan_workspace(s, s.nnz_c_bound, sizeof(T), lim, f);
      dense_blocks = w.symbolic_dense_blocks;
      bitmaps = device_buffer<unsigned>(memory, w.symbolic_dense_bytes / sizeof(unsigned), stream);
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
    const fusion fuse = fusion_for(s, lim.symbolic_max_table, f.sm_count, t);
    add_table_bins(dense - 1, std::max(last_warp_bin(lim.symbolic_max_table), fuse.top) + 1);
    if (fuse.on()) {
      const fused_launch fl = plan_fused(fuse.top, fuse.block_rows_max, false, s.symbolic_bins, starts, perm.data(),
                                         kernels::symbolic_group_bytes);
      if (fl.blocks > 0) {
        launches.emplace_back([&, fl](cudaStream_t st) {
          cuda::allow_max_dynamic_shared(kernels::symbolic_fused_kernel);
          kernels::symbolic_fused_kernel<<<fl.blocks, planner::fused_block_threads, fl.shared_bytes, st>>>(
              fl.bins, a.row_offsets, a.col_indices, b.row_offsets, b.col_indices, c.row_offsets.data());
          SPGEMM_CUDA_CHECK_LAUNCH();
        });
      }
    }
    if (seg.n > 0) {
      launches.emplace_back([&](cudaStream_t st) {
        count_segments(seg, a.structure(), b.structure(), perm.data() + starts.start[planner::first_segment_bin],
                       c.row_offsets.data(), st);
      });
    }
    // The warp table bins last, a launch each where not fused (one launch
    // for all, with room for the largest table, would hold short rows to a
    // few blocks per SM).
    if (!fuse.on()) add_table_bins(last_warp_bin(lim.symbolic_max_table), planner::first_table_bin);
    cuda::launch_side_by_side(stream, launches);
  }
  cancel.throw_if_cancelled();

  // Numeric bins from the exact nnz of each row (in C's offsets until the
  // scan) and C's offsets in one pass: the bins' histogram and nnz(C) come
  // back in one read, and C is allocated exactly.
  kernels::numeric_scan_kernel<<<static_cast<unsigned>(kernels::scan_tiles(m + 1)), kernels::scan_threads, 0,
                                 stream>>>(m, b.cols, a.row_offsets, c.row_offsets.data(), lim, bins.data(),
                                           counters.data(), scan_state);
  SPGEMM_CUDA_CHECK_LAUNCH();
  cuda::read_back(counters.data(), kernels::counter_count, host.data(), stream);
  c.nnz = static_cast<offset_t>(host[kernels::counter_nnz]);
  cancel.throw_if_cancelled();
  cuda::allocate_entries(c, c.nnz, memory, stream);
  if (c.nnz == 0) return c;

  // Numeric pass.
  std::int64_t hist[planner::max_bins];
  for (int i = 0; i < planner::max_bins; ++i) hist[i] = static_cast<std::int64_t>(host[kernels::counter_numeric_hist + i]);
  const kernels::bin_starts starts = group_rows(m, bins.data(), hist, numeric_cursors, perm.data(), stream);
  const fusion fuse = fusion_for(s, lim.numeric_max_table, f.sm_count, t);

  // Workspace first (on the job's stream), then the launches side by side:
  // dense rows and the largest tables first, the segment rows' persistent
  // blocks last (they take what the others leave).
  const int dense = planner::dense_bin(lim.numeric_max_table);
  const int first_block_bin = planner::table_bin_of(2 * planner::warp_max_table, lim.numeric_max_table);
  bool ranged_bins = false;
  for (int bin = std::max(first_block_bin, fuse.top + 1); bin < dense; ++bin) ranged_bins = ranged_bins || hist[bin] > 0;
  ranged_bins = ranged_bins && planner::use_column_ranges(s);
  // Dense rows always take column ranges: without them the warps of a block
  // commit one after another to global memory.
  range_starts ranges;
  if (ranged_bins || hist[dense] > 0) ranges = compute_column_ranges(b.structure(), memory, stream);
  const int* pos = ranges.pos;
  device_buffer<unsigned> dense_bitmaps;
  device_buffer<T> dense_values;
  std::int64_t dense_blocks = 0;
  if (hist[dense] > 0) {
    planner::job_stats exact = s;
    exact.numeric_dense_candidates = hist[dense];
    dense_blocks = plan_workspace(exact, c.nnz, sizeof(T), lim, f).numeric_dense_blocks;
    dense_bitmaps = device_buffer<unsigned>(memory, static_cast<std::size_t>(dense_blocks) * words_of(b.cols),
                                            stream);
    dense_values = device_buffer<T>(memory, static_cast<std::size_t>(dense_blocks) * static_cast<std::size_t>(b.cols),
                                    stream);
  }

  std::vector<cuda::launch_fn> launches;
  if (dense_blocks > 0) {
    launches.emplace_back([&](cudaStream_t st) {
      SPGEMM_CUDA_CHECK(cudaMemsetAsync(dense_bitmaps.data(), 0, dense_bitmaps.bytes(), st));
      clear_to_identity(dense_values, ring, st);
      const int threads = planner::dense_block_threads;
      const std::size_t shared = static_cast<std::size_t>(threads) * (16 + 2 * sizeof(T));
      kernels::numeric_dense_kernel<T, S><<<static_cast<unsigned>(dense_blocks), threads, shared, st>>>(
          perm.data() + starts.start[dense], hist[dense], b.cols, pos, dense_bitmaps.data(),
          dense_values.data(), a.row_offsets, a.col_indices, a.values, b.row_offsets, b.col_indices, b.values,
          c.row_offsets.data(), c.col_indices.data(), c.values.data(), ring);
      SPGEMM_CUDA_CHECK_LAUNCH();
    });
  }
  for (int bin = dense - 1; bin > std::max(fuse.top, planner::first_table_bin - 1); --bin) {
    const std::int64_t n = hist[bin];
    if (n == 0) continue;
    launches.emplace_back([&, bin, n](cudaStream_t st) {
      launch_numeric_table<T>(bin, perm.data() + starts.start[bin], n, ranged_bins ? pos : nullptr, a, b, c, ring, st);
    });
  }
  if (fuse.on()) {
    const fused_launch fl =
        plan_fused(fuse.top, fuse.block_rows_max, true, hist, starts, perm.data(), kernels::numeric_group_bytes<T>);
    if (fl.blocks > 0) {
      launches.emplace_back([&, fl](cudaStream_t st) {
        switch (fl.max_items) {
          case 1: return launch_numeric_fused<1, T>(fl, a, b, c, ring, st);
          case 2: return launch_numeric_fused<2, T>(fl, a, b, c, ring, st);
          case 4: return launch_numeric_fused<4, T>(fl, a, b, c, ring, st);
          case 8: return launch_numeric_fused<8, T>(fl, a, b, c, ring, st);
          default: return launch_numeric_fused<16, T>(fl, a, b, c, ring, st);
        }
      });
    }
  } else if (hist[planner::bin_copy] > 0) {
    launches.emplace_back([&](cudaStream_t st) {
      const std::int64_t n = hist[planner::bin_copy];
      const unsigned grid = static_cast<unsigned>((n * 32 + helper_threads - 1) / helper_threads);
      kernels::copy_rows_kernel<T, S><<<grid, helper_threads, 0, st>>>(
          perm.data() + starts.start[planner::bin_copy], n, a.row_offsets, a.col_indices, a.values, b.row_offsets,
          b.col_indices, b.values, c.row_offsets.data(), c.col_indices.data(), c.values.data(), ring);
      SPGEMM_CUDA_CHECK_LAUNCH();
    });
  }
  if (planner::segment_row_count(hist) > 0) {
    launches.emplace_back([&](cudaStream_t st) {
      fill_segments<T>(seg, bins.data(), a, b, c, f.sm_count, t.segment_entry_passes,
                       counters.data() + kernels::counter_segment_item, ring, st);
    });
  }
  cuda::launch_side_by_side(stream, launches);
  return c;
}

}  // namespace

template <typename T>
device_csr<T> run(const method::job& job, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b) {
  return ops::with_semiring(job.semiring, [&](auto ring) { return run_over<T>(job, a, b, ring); });
}

template device_csr<float> run(const method::job&, const cuda::csr_view<float>&, const cuda::csr_view<float>&);
template device_csr<double> run(const method::job&, const cuda::csr_view<double>&, const cuda::csr_view<double>&);

}  // namespace spgemm::hash
