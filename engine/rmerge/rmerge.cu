// RMerge host dispatch: C = A * B = A_k G_{k-1} ... G_1 B, right to left
// (Gremse et al. 2015, section 2.3, Listing 2).
//
// Method: while the longest row L of the remaining left factor exceeds the
// merge factor M = W * R, split it into G (each row cut into chunks of <= M
// consecutive entries; G_1 reuses A's columns and values through a chunked
// offsets array, later G_i are implicit unit-valued ranges) and the remaining
// left factor (implicit: row i covers its chunks), compute B <- G * B with
// MulLimited and set L <- ceil(L / M). The last product uses the smallest
// sufficient sub-warp. Each MulLimited pass: structure kernel (row lengths),
// cub::DeviceScan (int64) into offsets, nnz read back, C allocated, value
// kernel. The structure kernel of a one-pass plan, or of a split plan's
// first pass, may skip the rows that repeat the row before (rmerge_tuning.hpp,
// skips_repeats), their lengths filled in by a scan before the offsets'.
// Workspace: at most two intermediates at once, plus the offsets of the
// left factors (2 (m + 1) + chunks + 1 int64), and CUB scan storage (and
// the repeat flags, a byte a row of A, of B and of the first split's
// chunks, where rows are skipped);
// bounded before running by estimate_from() (intermediate l holds at most
// sum over level-l chunks of min(products, cols of B) entries).
// Complexity: O(products) merged entries in the first pass, then shrinking;
// ceil(log_M(L)) + 1 passes, each O(rows * W) threads.
// The numeric pass alone (run_numeric: a product whose structure is known):
// the value pass of the last pass on the structure's offsets, C's offsets
// and columns copied from it, where A's rows fit one merge pass or, split,
// where A has few rows (the split passes run whole first:
// rmerge_tuning.hpp, numeric_by_levels); else the table's numeric pass.
#include <cub/block/block_reduce.cuh>

#include <algorithm>
#include <limits>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/lane_groups.cuh"
#include "cuda/read_back.hpp"
#include "cuda/reduction_grid.hpp"
#include "cuda/scan.cuh"
#include "cuda/warp_primitives.cuh"
#include "planner/row_repeats.hpp"
#include "planner/statistics.hpp"
#include "rmerge/mul_limited.hpp"
#include "rmerge/rmerge.hpp"
#include "rmerge/rmerge_tuning.hpp"

namespace spgemm::rmerge {
namespace {

using cuda::memory_resource;
using cuda::device_buffer;
using cuda::device_csr;
using cuda::read_back;

constexpr int helper_threads = 256;
using ull = unsigned long long;

unsigned helper_blocks(std::int64_t n) {
  const std::int64_t b = (n + helper_threads - 1) / helper_threads;
  return static_cast<unsigned>(std::min<std::int64_t>(std::max<std::int64_t>(b, 1), 1 << 16));
}

// Per row of A: cut it into chunks of `chunk` entries, count them, add
// min(products of the chunk, b_cols) and the products themselves.
// out[0] += chunks, out[1] += nnz bound, out[2] += products. `lanes`
// (planner::stats_lanes) threads take a row: they sum a short row that is
// one chunk, its first lane alone a short row of several; the warp takes
// longer rows chunk by chunk (a thread per row walked a coarse AMG level's
// rows of thousands of entries for a millisecond).
__global__ void __launch_bounds__(helper_threads)
    chunk_bounds_kernel(std::int64_t rows, int lanes, const offset_t* __restrict__ a_off,
                        const index_t* __restrict__ a_col, const offset_t* __restrict__ b_off, std::int64_t chunk,
                        std::int64_t b_cols, ull* __restrict__ out) {
  using reduce = cub::BlockReduce<ull, helper_threads>;
  __shared__ typename reduce::TempStorage temp;
  ull chunks = 0;
  ull bound = 0;
  ull products = 0;
  const auto book = [&](long long p) {
    ++chunks;
    bound += static_cast<ull>(p < b_cols ? p : b_cols);
    products += static_cast<ull>(p);
  };
  const auto row_length = [&](offset_t e) {
    const index_t j = a_col[e];
    return static_cast<long long>(b_off[j + 1] - b_off[j]);
  };
  const cuda::lane_groups g(rows, lanes);
  for (std::int64_t i = g.first; i < g.end; i += g.stride) {
    const offset_t a0 = i < rows ? a_off[i] : 0;
    const offset_t a1 = i < rows ? a_off[i + 1] : 0;
    const std::int64_t len = a1 - a0;
    const bool by_warp = len > planner::stats_long_row || lanes == 32;
    const bool one_chunk = !by_warp && len <= chunk;
    long long p = 0;
    if (one_chunk) {
      for (offset_t e = a0 + g.sub; e < a1; e += lanes) p += row_length(e);
    }
    for (int d = lanes / 2; d > 0; d >>= 1) p += __shfl_xor_sync(cuda::full_mask, p, d);
    if (one_chunk && g.sub == 0 && len > 0) book(p);
    if (!by_warp && !one_chunk && g.sub == 0) {
      for (offset_t c0 = a0, c1 = a0; c0 < a1; c0 = c1) {
        c1 = a1 - c0 <= chunk ? a1 : c0 + chunk;  // chunk may be the largest int64: no c0 + chunk past it
        long long q = 0;
        for (offset_t e = c0; e < c1; ++e) q += row_length(e);
        book(q);
      }
    }
    cuda::warp_takes_long_rows(g, by_warp && len > 0, a0, a1, [&](int owner, offset_t b0, offset_t b1) {
      for (offset_t c0 = b0, c1 = b0; c0 < b1; c0 = c1) {
        c1 = b1 - c0 <= chunk ? b1 : c0 + chunk;
        long long q = 0;
        for (offset_t e = c0 + g.lane; e < c1; e += 32) q += row_length(e);
        q = cuda::warp_sum(q);
        if (g.lane == owner) book(q);
      }
    });
  }
  chunks = reduce(temp).Sum(chunks);
  __syncthreads();
  bound = reduce(temp).Sum(bound);
  __syncthreads();
  products = reduce(temp).Sum(products);
  if (threadIdx.x == 0) {
    atomicAdd(out + 0, chunks);
    atomicAdd(out + 1, bound);
    atomicAdd(out + 2, products);
  }
}

// A split plan's first left factor (chunks of A's rows): the chunk of row i
// repeats the chunk before it where both rows are of one chunk and row i has
// the columns of row i - 1 (a_flags: planner/row_repeats.hpp); chunk_start:
// the first chunk of every row (rows + 1).
__global__ void chunk_repeats_kernel(std::int64_t rows, const offset_t* __restrict__ chunk_start,
                                     const unsigned char* __restrict__ a_flags, unsigned char* __restrict__ g_flags) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < rows;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const offset_t first = chunk_start[i];
    const offset_t end = chunk_start[i + 1];
    const bool single = end - first == 1 && i > 0 && first - chunk_start[i - 1] == 1;
    const bool same = single && (a_flags[i] & planner::repeat_same) != 0;
    for (offset_t c = first; c < end; ++c) g_flags[c] = same ? planner::repeat_same : 0;
  }
}

// Splitting: counts[i] = ceil(len_i / m).
__global__ void chunk_count_kernel(std::int64_t rows, const offset_t* __restrict__ off, std::int64_t m,
                                   offset_t* __restrict__ counts) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < rows;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    counts[i] = (off[i + 1] - off[i] + m - 1) / m;
  }
}

// Row offsets of G: chunk c of row i starts at off[i] + c * m. (g_off[total]
// is set by the caller.)
__global__ void chunk_offsets_kernel(std::int64_t rows, const offset_t* __restrict__ off,
                                     const offset_t* __restrict__ chunk_start, std::int64_t m,
                                     offset_t* __restrict__ g_off) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < rows;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const offset_t begin = off[i];
    const offset_t end = off[i + 1];
    offset_t out = chunk_start[i];
    for (offset_t p = begin; p < end; p += m) g_off[out++] = p;
  }
}

// One MulLimited product C = G * B (both passes); b_stage: entries of B a
// warp stages (0: none); repeats: the rows of G and B the structure pass
// may skip (G explicit).
template <typename T>
device_csr<T> mul_limited(pass_config pass, const left_factor<T>& g, const cuda::csr_view<T>& b, int b_stage,
                          known_repeats repeats, memory_resource& memory, cudaStream_t stream,
                          const cancel_token& cancel) {
  device_csr<T> c = cuda::with_offsets<T>(g.rows, b.cols, memory, stream);
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(c.row_offsets.data() + g.rows, 0, sizeof(offset_t), stream));
  launch_mul_limited_count(pass, g.rows, g.offsets, g.columns, b.row_offsets, b.col_indices,
                           c.row_offsets.data(), stream, b_stage, repeats);
  if (repeats.left != nullptr) {
    cuda::fill_marked_in_place(c.row_offsets.data(), g.rows, planner::repeated_length, memory, stream);
  }
  cuda::exclusive_scan_in_place(c.row_offsets.data(), g.rows + 1, memory, stream);
  c.nnz = read_back(c.row_offsets.data() + g.rows, stream);
  cancel.throw_if_cancelled();
  cuda::allocate_entries(c, c.nnz, memory, stream);
  if (c.nnz > 0) {
    launch_mul_limited_values<T>(pass, g, b.row_offsets, b.col_indices, b.values, c.row_offsets.data(),
                                 c.col_indices.data(), c.values.data(), stream, stage_capacity(pass, g.rows, c.nnz),
                                 b_stage);
  }
  return c;
}

// Size bounds of one intermediate C_l = G_l ... G_1 B.
struct level_bound {
  std::int64_t rows = 0;       // exact: sum over rows of A of ceil(len / M^l)
  std::int64_t nnz_bound = 0;  // sum over those rows of min(products, cols of B)
};

struct product_bounds {
  std::int64_t products = 0;     // scalar multiplications of A * B
  std::int64_t nnz_c_bound = 0;  // sum over rows of A of min(row products, cols of B)
  std::vector<level_bound> intermediates;  // C_1 .. C_{k-1} (plan.split_levels of them)
};

// Bounds of the product and of every intermediate that `p` will create.
product_bounds compute_bounds(const cuda::structure_view& a, const cuda::structure_view& b, const plan& p,
                              memory_resource& memory, cudaStream_t stream) {
  product_bounds bounds;
  bounds.intermediates.resize(static_cast<std::size_t>(p.split_levels));
  if (a.rows == 0 || a.nnz == 0) return bounds;
  // Level l of the split cuts rows into chunks of M^l entries; the last
  // level takes whole rows.
  const int passes = p.split_levels + 1;
  const int lanes = planner::stats_lanes(a.rows, a.nnz);
  const unsigned blocks = cuda::reduction_blocks(chunk_bounds_kernel, a.rows * lanes, helper_threads);
  device_buffer<ull> out(memory, 3 * static_cast<std::size_t>(passes), stream);
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(out.data(), 0, out.bytes(), stream));
  std::int64_t chunk = 1;
  for (int level = 0; level < passes; ++level) {
    if (level < p.split_levels) {
      chunk *= p.split.merge_factor();
    } else {
      chunk = std::numeric_limits<std::int64_t>::max();
    }
    chunk_bounds_kernel<<<blocks, helper_threads, 0, stream>>>(
        a.rows, lanes, a.row_offsets, a.col_indices, b.row_offsets, chunk, b.cols, out.data() + 3 * level);
    SPGEMM_CUDA_CHECK_LAUNCH();
  }
  std::vector<ull> host(3 * static_cast<std::size_t>(passes));
  SPGEMM_CUDA_CHECK(cudaMemcpyAsync(host.data(), out.data(), out.bytes(), cudaMemcpyDeviceToHost, stream));
  SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  for (int level = 0; level < p.split_levels; ++level) {
    bounds.intermediates[level] = {static_cast<std::int64_t>(host[3 * level]),
                                   static_cast<std::int64_t>(host[3 * level + 1])};
  }
  bounds.nnz_c_bound = static_cast<std::int64_t>(host[3 * p.split_levels + 1]);
  bounds.products = static_cast<std::int64_t>(host[3 * p.split_levels + 2]);
  return bounds;
}

// The rows of A and B whose repeats the structure pass of plan `p` skips
// (rmerge_tuning.hpp, skips_repeats): A's where it pays (a split plan: in its
// first pass), B's where A's shifted rows count (B = A: A's flags serve).
// B's row shape is asked for only where A looks shifted (a fresh B would be
// measured for nothing).
struct repeat_plan {
  bool a = false;
  bool b = false;
  bool b_is_a = false;
};

repeat_plan plan_repeats(const method::job& job, const plan& p) {
  repeat_plan r;
  const row_stats& a = job.facts.a_rows();
  const double b_mean_row = job.b.rows > 0 ? static_cast<double>(job.b.nnz) / static_cast<double>(job.b.rows) : 0.0;
  if (!skips_repeats(p, a, true, b_mean_row)) return r;
  if (p.split_levels > 0) {
    r.a = true;
    return r;
  }
  r.b_is_a = job.a.row_offsets == job.b.row_offsets && job.a.col_indices == job.b.col_indices;
  const bool b_shifted = looks_shifted(a) && (r.b_is_a || looks_shifted(job.facts.b_rows()));
  r.a = skips_repeats(p, a, b_shifted, b_mean_row);
  r.b = r.a && b_shifted && !r.b_is_a;
  return r;
}

// chunks: the rows of a split plan's first left factor (0: a one-pass plan),
// whose flags and fill it holds besides A's.
std::size_t repeat_bytes(const repeat_plan& r, std::int64_t a_rows, std::int64_t b_rows, std::int64_t chunks) {
  if (!r.a) return 0;
  return static_cast<std::size_t>(a_rows) + static_cast<std::size_t>(chunks) +
         (r.b ? static_cast<std::size_t>(b_rows) : 0) + cuda::fill_marked_bytes<offset_t>(chunks > 0 ? chunks : a_rows);
}

// The flags of repeat_plan, found on the job's stream.
struct repeat_flags {
  device_buffer<unsigned char> a;
  device_buffer<unsigned char> b;
  known_repeats known;
};

repeat_flags find_repeats(const repeat_plan& r, const cuda::structure_view& a, const cuda::structure_view& b,
                          memory_resource& memory, cudaStream_t stream) {
  repeat_flags f;
  if (!r.a || a.rows == 0) return f;
  f.a = device_buffer<unsigned char>(memory, static_cast<std::size_t>(a.rows), stream);
  planner::find_row_repeats(a, f.a.data(), stream);
  f.known.left = f.a.data();
  if (r.b_is_a) {
    f.known.b = f.a.data();
  } else if (r.b && b.rows > 0) {
    f.b = device_buffer<unsigned char>(memory, static_cast<std::size_t>(b.rows), stream);
    planner::find_row_repeats(b, f.b.data(), stream);
    f.known.b = f.b.data();
  }
  return f;
}

// Bytes multiply_planned() with plan `p` allocates at most (exact = false).
memory_estimate estimate_from(const plan& p, const product_bounds& bounds, std::int64_t a_rows,
                              std::size_t value_bytes) {
  const std::size_t offsets_bytes = static_cast<std::size_t>(a_rows + 1) * sizeof(offset_t);
  memory_estimate e;
  e.exact = false;
  e.output_bytes = cuda::csr_bytes(a_rows, bounds.nnz_c_bound, value_bytes);
  e.nnz_bound = bounds.nnz_c_bound;
  e.products = bounds.products;
  e.method = describe(p);

  std::size_t scan = cuda::exclusive_scan_bytes<offset_t>(a_rows + 1);
  for (const level_bound& l : bounds.intermediates) {
    scan = std::max(scan, cuda::exclusive_scan_bytes<offset_t>(l.rows + 1));
  }

  std::size_t workspace = sizeof(ull) * 3 * static_cast<std::size_t>(p.split_levels + 1);  // row stats
  std::size_t previous = 0;  // bytes of the intermediate the level reads
  for (const level_bound& l : bounds.intermediates) {
    const std::size_t current = cuda::csr_bytes(l.rows, l.nnz_bound, value_bytes);
    const std::size_t live = 2 * offsets_bytes + static_cast<std::size_t>(l.rows + 1) * sizeof(offset_t) +
                             previous + current + scan;
    workspace = std::max(workspace, live);
    previous = current;
  }
  const std::size_t last = (p.split_levels > 0 ? offsets_bytes : 0) + previous + scan;
  e.workspace_bytes = std::max(workspace, last);
  return e;
}

// What the last pass of plan `p` merges once the split passes ran: its left
// factor (A itself where the plan does not split), and the intermediate it
// reads instead of B (where it does).
template <typename T>
struct last_pass_input {
  device_buffer<offset_t> left_offsets;  // held for `left` where split
  left_factor<T> left;
  device_csr<T> intermediate;
  bool split = false;
};

// The split passes of plan `p` (p.split_levels and p.last must suit A's
// longest row); repeats: whether the first skips the chunks that repeat.
template <typename T>
last_pass_input<T> split_passes(const cuda::csr_view<T>& a, const cuda::csr_view<T>& b, const plan& p,
                                const repeat_plan& repeats, memory_resource& memory, cudaStream_t stream,
                                const cancel_token& cancel) {
  const std::int64_t m = a.rows;
  last_pass_input<T> in;
  // The remaining left factor: A itself (explicit) until the first split.
  const offset_t* left_off = a.row_offsets;
  const std::int64_t merge = p.split.merge_factor();
  for (int level = 0; level < p.split_levels; ++level) {
    // Chunks of every row: the offsets of the next left factor.
    device_buffer<offset_t> next_off(memory, static_cast<std::size_t>(m) + 1, stream);
    SPGEMM_CUDA_CHECK(cudaMemsetAsync(next_off.data() + m, 0, sizeof(offset_t), stream));
    if (m > 0) {
      chunk_count_kernel<<<helper_blocks(m), helper_threads, 0, stream>>>(m, left_off, merge, next_off.data());
      SPGEMM_CUDA_CHECK_LAUNCH();
    }
    cuda::exclusive_scan_in_place(next_off.data(), m + 1, memory, stream);
    const std::int64_t chunks = read_back(next_off.data() + m, stream);

    device_buffer<offset_t> g_off(memory, static_cast<std::size_t>(chunks) + 1, stream);
    if (m > 0) {
      chunk_offsets_kernel<<<helper_blocks(m), helper_threads, 0, stream>>>(m, left_off, next_off.data(), merge,
                                                                            g_off.data());
      SPGEMM_CUDA_CHECK_LAUNCH();
    }
    SPGEMM_CUDA_CHECK(cudaMemcpyAsync(g_off.data() + chunks, left_off + m, sizeof(offset_t),
                                      cudaMemcpyDeviceToDevice, stream));
    in.left_offsets.reset();  // stream-ordered: the kernels above have read it
    cancel.throw_if_cancelled();

    left_factor<T> g;
    g.rows = chunks;
    g.offsets = g_off.data();
    if (!in.split) {
      g.columns = a.col_indices;
      g.values = a.values;
    }
    repeat_flags flags;
    device_buffer<unsigned char> chunk_flags;
    if (!in.split && repeats.a && m > 0) {
      flags = find_repeats(repeats, a.structure(), b.structure(), memory, stream);
      chunk_flags = device_buffer<unsigned char>(memory, static_cast<std::size_t>(chunks), stream);
      chunk_repeats_kernel<<<helper_blocks(m), helper_threads, 0, stream>>>(m, next_off.data(), flags.a.data(),
                                                                            chunk_flags.data());
      SPGEMM_CUDA_CHECK_LAUNCH();
      flags.known.left = chunk_flags.data();
    }
    device_csr<T> next =
        mul_limited(p.split, g, in.split ? in.intermediate.view() : b, 0, flags.known, memory, stream, cancel);
    g_off.reset();
    in.intermediate = std::move(next);  // frees the intermediate before it
    in.split = true;
    in.left_offsets = std::move(next_off);
    left_off = in.left_offsets.data();
    cancel.throw_if_cancelled();
  }
  in.left.rows = m;
  in.left.offsets = left_off;
  if (!in.split) {
    in.left.columns = a.col_indices;
    in.left.values = a.values;
  }
  return in;
}

// C = A * B with plan `p`; b_stage: entries of B a warp of the last pass
// stages (0: none; unused where the plan splits); repeats: the rows the
// structure pass skips (one-pass plans).
template <typename T>
device_csr<T> multiply_planned(const cuda::csr_view<T>& a, const cuda::csr_view<T>& b, const plan& p, int b_stage,
                               const repeat_plan& repeats, memory_resource& memory, cudaStream_t stream,
                               const cancel_token& cancel) {
  last_pass_input<T> in = split_passes(a, b, p, repeats, memory, stream, cancel);
  const repeat_flags flags =
      p.split_levels == 0 ? find_repeats(repeats, a.structure(), b.structure(), memory, stream) : repeat_flags{};
  device_csr<T> c = mul_limited(p.last, in.left, in.split ? in.intermediate.view() : b, in.split ? 0 : b_stage,
                                flags.known, memory, stream, cancel);
  c.cols = b.cols;
  return c;
}

// Entries of B a warp of the last pass stages (rmerge_tuning.hpp; 0: none).
int b_stage_of(const method::job& job, const plan& p) {
  // Off (the default), B's row shape is not asked for: a fresh B (a Galerkin
  // product's intermediate) would be measured for nothing.
  if (p.split_levels > 0 || job.tuning.rmerge_stage_b <= 0) return 0;
  return b_stage_capacity(p.last, job.facts.a_rows(), job.facts.b_rows(), job.tuning.rmerge_stage_b);
}

}  // namespace

memory_estimate estimate(const method::job& job) {
  const plan p = make_plan(job.facts.a_rows(), job.tuning.rmerge);
  const product_bounds bounds = compute_bounds(job.a, job.b, p, job.memory, job.stream);
  memory_estimate e = estimate_from(p, bounds, job.a.rows, job.value_bytes);
  const repeat_plan repeats = plan_repeats(job, p);
  if (repeats.a) {
    // Held through the structure pass that skips them, beside what it holds.
    const std::int64_t chunks = p.split_levels > 0 ? bounds.intermediates[0].rows : 0;
    e.workspace_bytes += repeat_bytes(repeats, job.a.rows, job.b.rows, chunks);
    e.method += ", repeated rows skipped";
  }
  const int b_stage = b_stage_of(job, p);
  if (b_stage > 0) e.method += ", B staged (" + std::to_string(b_stage) + " per warp)";
  return e;
}

template <typename T>
device_csr<T> run(const method::job& job, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b) {
  const plan p = make_plan(job.facts.a_rows(), job.tuning.rmerge);
  const int b_stage = b_stage_of(job, p);
  const repeat_plan repeats = plan_repeats(job, p);
  job.cancel.throw_if_cancelled();
  return multiply_planned(a, b, p, b_stage, repeats, job.memory, job.stream, job.cancel);
}

template device_csr<float> run(const method::job&, const cuda::csr_view<float>&, const cuda::csr_view<float>&);
template device_csr<double> run(const method::job&, const cuda::csr_view<double>&, const cuda::csr_view<double>&);

memory_estimate estimate_numeric(const method::job& job, const cuda::structure_view& s) {
  const plan p = make_plan(job.facts.a_rows(), job.tuning.rmerge);
  const bool levels = numeric_by_levels(p, job.a.rows, cuda::current_device_facts().sm_count);
  if (p.split_levels > 0 && !levels) return job.methods.numeric.estimate(job, s);
  memory_estimate e;
  if (levels) {
    // The split passes' intermediates and scans, as the whole product holds them.
    e = estimate_from(p, compute_bounds(job.a, job.b, p, job.memory, job.stream), job.a.rows, job.value_bytes);
    e.output_bytes = 0;
  }
  e.exact = !levels;
  e.nnz_bound = s.nnz;
  e.method = describe(p) + " numeric";
  return e;
}

template <typename T>
void run_numeric(const method::job& job, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b,
                 const cuda::structure_view& s, std::int64_t longest_row, device_csr<T>& c) {
  const plan p = make_plan(job.facts.a_rows(), job.tuning.rmerge);
  const bool levels = numeric_by_levels(p, a.rows, cuda::current_device_facts().sm_count);
  if (p.split_levels > 0 && !levels) return job.methods.numeric.run<T>(job, a, b, s, longest_row, c);
  SPGEMM_CUDA_CHECK(cudaMemcpyAsync(c.row_offsets.data(), s.row_offsets, c.row_offsets.bytes(),
                                    cudaMemcpyDeviceToDevice, job.stream));
  if (s.nnz == 0) return;
  SPGEMM_CUDA_CHECK(cudaMemcpyAsync(c.col_indices.data(), s.col_indices, c.col_indices.bytes(),
                                    cudaMemcpyDeviceToDevice, job.stream));
  const last_pass_input<T> in = split_passes(a, b, p, repeat_plan{}, job.memory, job.stream, job.cancel);
  const cuda::csr_view<T> right = in.split ? in.intermediate.view() : b;
  launch_mul_limited_values<T>(p.last, in.left, right.row_offsets, right.col_indices, right.values, s.row_offsets,
                               nullptr, c.values.data(), job.stream, stage_capacity(p.last, a.rows, s.nnz),
                               in.split ? 0 : b_stage_of(job, p));
}

template void run_numeric(const method::job&, const cuda::csr_view<float>&, const cuda::csr_view<float>&,
                          const cuda::structure_view&, std::int64_t, device_csr<float>&);
template void run_numeric(const method::job&, const cuda::csr_view<double>&, const cuda::csr_view<double>&,
                          const cuda::structure_view&, std::int64_t, device_csr<double>&);

}  // namespace spgemm::rmerge
