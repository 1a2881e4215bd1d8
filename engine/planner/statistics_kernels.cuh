// The planner's passes over matrices and products (statistics.cu launches
// them): the longest row of a matrix, how far its entries lie off the
// diagonal, the dense block sizes it is made of, and the statistics of a
// product with every row's symbolic bin.
// Complexity: one read of a matrix's offsets (longest row), of its entries
// (diagonal distance and block sizes, a warp per row), or of A's entries and
// their rows' lengths in B (statistics); one atomic per block and counter.
#pragma once

#include <cub/block/block_reduce.cuh>

#include <cstdint>

#include "cuda/lane_groups.cuh"
#include "cuda/warp_primitives.cuh"
#include "planner/block_structure.hpp"
#include "planner/row_bins.hpp"
#include "planner/statistics.hpp"
#include "spgemm/csr.hpp"

namespace spgemm::planner::kernels {

using cuda::count_in_bin;
using cuda::full_mask;
using cuda::warp_max;
using cuda::warp_sum;
using ull = unsigned long long;

inline constexpr int helper_threads = 256;

struct max_op {
  __device__ ull operator()(ull a, ull b) const { return a > b ? a : b; }
};

// out[0]: the longest row; out[1] (out[2]) nonzero where an entry lies above
// (below) the diagonal: a row's last (first) column past (before) its row;
// out[3] (out[4]) += the rows that look like the row before, the same
// (shifted) (row_stats::same_candidates, shifted_candidates).
inline constexpr int row_length_words = 5;

__global__ void __launch_bounds__(helper_threads)
    max_row_length_kernel(std::int64_t rows, const offset_t* __restrict__ off, const index_t* __restrict__ col,
                          ull* __restrict__ out) {
  using reduce = cub::BlockReduce<ull, helper_threads>;
  __shared__ typename reduce::TempStorage temp;
  ull m = 0;
  ull same = 0;
  ull shifted = 0;
  bool above = false, below = false;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < rows;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const offset_t begin = off[i];
    const offset_t end = off[i + 1];
    const ull len = static_cast<ull>(end - begin);
    m = len > m ? len : m;
    if (len > 0) {
      above |= col[end - 1] > i;
      below |= col[begin] < i;
    }
    if (i > 0 && begin - off[i - 1] == end - begin) {
      const index_t step = len == 0 ? 0 : col[begin] - col[off[i - 1]];
      const bool looks = len == 0 || ((step == 0 || step == 1) && col[end - 1] - col[begin - 1] == step);
      same += looks && step == 0 ? 1 : 0;
      shifted += looks && step == 1 ? 1 : 0;
    }
  }
  m = reduce(temp).Reduce(m, max_op{});
  if (threadIdx.x == 0) atomicMax(out, m);
  __syncthreads();
  same = reduce(temp).Sum(same);
  if (threadIdx.x == 0 && same != 0) atomicAdd(out + 3, same);
  __syncthreads();
  shifted = reduce(temp).Sum(shifted);
  if (threadIdx.x == 0 && shifted != 0) atomicAdd(out + 4, shifted);
  if (__syncthreads_or(above) && threadIdx.x == 0) atomicOr(out + 1, 1ull);
  if (__syncthreads_or(below) && threadIdx.x == 0) atomicOr(out + 2, 1ull);
}

// `lanes` (stats_lanes) threads per row over its entries: the sum of the
// entries' diagonal_offset (job_rules.hpp) in units of
// 2^-diagonal_units_log2 (each entry rounded: at most 2^24 units, a sum of
// 2^40 entries fits), into *out. (A warp per row left most of its lanes idle
// on short rows: 0.37 ms for poisson3d7:100 on the H100.)
inline constexpr int diagonal_units_log2 = 24;

__global__ void __launch_bounds__(helper_threads)
    diagonal_distance_kernel(std::int64_t rows, std::int64_t cols, int lanes, const offset_t* __restrict__ off,
                             const index_t* __restrict__ col, ull* __restrict__ out) {
  using reduce = cub::BlockReduce<ull, helper_threads>;
  __shared__ typename reduce::TempStorage temp;
  const int sub = static_cast<int>(threadIdx.x) & (lanes - 1);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x / lanes;
  const double unit = static_cast<double>(1u << diagonal_units_log2);
  ull sum = 0;
  for (std::int64_t r = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / lanes; r < rows;
       r += stride) {
    for (offset_t e = off[r] + sub; e < off[r + 1]; e += lanes) {
      sum += static_cast<ull>(diagonal_offset(r, col[e], rows, cols) * unit + 0.5);
    }
  }
  sum = reduce(temp).Sum(sum);
  if (threadIdx.x == 0 && sum != 0) atomicAdd(out, sum);
}

// `lanes` (stats_lanes) threads per row: every candidate size of `candidates`
// that some row breaks gets its bit set in *broken (block_structure.hpp:
// row_fits, entry_fits). The rows of a warp step together (a uniform trip
// count), so that the warp can stop once every candidate is broken.
__global__ void __launch_bounds__(helper_threads)
    detect_kernel(std::int64_t rows, int lanes, const offset_t* __restrict__ off, const index_t* __restrict__ col,
                  size_mask candidates, unsigned* __restrict__ broken) {
  const cuda::lane_groups g(rows, lanes);
  size_mask bad = 0;  // the same in every lane of the warp
  for (std::int64_t r = g.first; r < g.end; r += g.stride) {
    if ((bad & candidates) == candidates) break;
    size_mask row_bad = 0;
    if (r < rows) {
      const offset_t begin = off[r];
      const std::int64_t length = off[r + 1] - begin;
      offset_t lead_begin[candidate_count];
#pragma unroll
      for (int i = 0; i < candidate_count; ++i) {
        const int b = candidate_size(i);
        const std::int64_t lead = r - r % b;
        lead_begin[i] = off[lead];
        if ((candidates & ~bad & (1u << b)) && !row_fits(b, length, off[lead + 1] - lead_begin[i])) {
          row_bad |= 1u << b;
        }
      }
      const size_mask check = candidates & ~bad & ~row_bad;
      for (std::int64_t k = g.sub; check != 0 && k < length; k += lanes) {
        const index_t c = col[begin + k];
        const index_t previous = k > 0 ? col[begin + k - 1] : 0;
#pragma unroll
        for (int i = 0; i < candidate_count; ++i) {
          const int b = candidate_size(i);
          if (!(check & (1u << b))) continue;
          if (!entry_fits(b, k, c, previous, col[lead_begin[i] + k])) row_bad |= 1u << b;
        }
      }
    }
    bad |= __reduce_or_sync(0xffffffffu, row_bad);
  }
  if (g.lane == 0 && bad != 0) atomicOr(broken, bad);
}

// Per row: products, symbolic bin (into bins when given), and the nnz of rows
// that need no symbolic kernel (into row_nnz when given); totals into counters.
// `lanes` (stats_lanes) threads take a row together.
__global__ void stats_kernel(std::int64_t rows, int lanes, const offset_t* __restrict__ a_off,
                             const index_t* __restrict__ a_col, const offset_t* __restrict__ b_off,
                             std::int64_t b_cols, limits lim, unsigned char* __restrict__ bins,
                             offset_t* __restrict__ row_nnz, ull* __restrict__ counters) {
  __shared__ unsigned hist[max_bins];
  for (int i = threadIdx.x; i < max_bins; i += blockDim.x) hist[i] = 0;
  __syncthreads();
  const int numeric_dense = dense_bin(lim.numeric_max_table);
  ull products = 0, bound = 0, max_products = 0, max_length = 0, dense = 0;
  const cuda::lane_groups g(rows, lanes);
  for (std::int64_t i = g.first; i < g.end; i += g.stride) {
    const offset_t a0 = i < rows ? a_off[i] : 0;
    const offset_t a1 = i < rows ? a_off[i + 1] : 0;
    const std::int64_t len = a1 - a0;
    // Products of the row: its lanes sum a short row, the warp a long one
    // (hub rows of thousands of entries would hold a few lanes for long).
    std::int64_t p = 0;
    const bool long_row = len > stats_long_row && lanes < 32;
    if (!long_row) {
      for (offset_t e = a0 + g.sub; e < a1; e += lanes) {
        const index_t k = a_col[e];
        p += b_off[k + 1] - b_off[k];
      }
    }
    cuda::warp_takes_long_rows(g, long_row, a0, a1, [&](int owner, offset_t b0, offset_t b1) {
      long long part = 0;
      for (offset_t e = b0 + g.lane; e < b1; e += 32) {
        const index_t k = a_col[e];
        part += b_off[k + 1] - b_off[k];
      }
      part = warp_sum(part);
      if (g.lane == owner) p = part;
    });
    for (int d = lanes / 2; d > 0; d >>= 1) p += __shfl_xor_sync(full_mask, p, d);
    const bool counts_row = i < rows && g.sub == 0;
    const int bin = counts_row ? symbolic_bin(len, p, b_cols, lim) : bin_none;
    (void)count_in_bin(hist, bin, counts_row);
    if (counts_row) {
      if (bins != nullptr) bins[i] = static_cast<unsigned char>(bin);
      if (row_nnz != nullptr && bin <= bin_copy) row_nnz[i] = p;
      const std::int64_t capped = p < b_cols ? p : b_cols;
      products += static_cast<ull>(p);
      bound += static_cast<ull>(capped);
      max_products = static_cast<ull>(p) > max_products ? static_cast<ull>(p) : max_products;
      max_length = static_cast<ull>(len) > max_length ? static_cast<ull>(len) : max_length;
      dense += !is_segment_bin(bin) && numeric_bin(len, capped, lim) == numeric_dense ? 1 : 0;
    }
  }
  // Totals: warps, then the block, then one atomic per counter per block (an
  // atomic per warp on five addresses serialized in L2 where there are many
  // warps).
  __shared__ ull totals[32][5];
  const int warp = static_cast<int>(threadIdx.x >> 5);
  ull t[5] = {warp_sum(products), warp_sum(bound), warp_sum(dense), warp_max(max_products), warp_max(max_length)};
  if (g.lane == 0) {
    for (int j = 0; j < 5; ++j) totals[warp][j] = t[j];
  }
  __syncthreads();
  if (warp == 0) {
    const int warps = static_cast<int>(blockDim.x >> 5);
    for (int j = 0; j < 5; ++j) t[j] = g.lane < warps ? totals[g.lane][j] : 0;
    t[0] = warp_sum(t[0]);
    t[1] = warp_sum(t[1]);
    t[2] = warp_sum(t[2]);
    t[3] = warp_max(t[3]);
    t[4] = warp_max(t[4]);
    if (g.lane == 0) {
      if (t[0] != 0) atomicAdd(counters + stats_counter::products, t[0]);
      if (t[1] != 0) atomicAdd(counters + stats_counter::bound, t[1]);
      if (t[2] != 0) atomicAdd(counters + stats_counter::dense, t[2]);
      atomicMax(counters + stats_counter::max_products, t[3]);
      atomicMax(counters + stats_counter::max_length, t[4]);
    }
  }
  for (int i = threadIdx.x; i < max_bins; i += blockDim.x) {
    if (hist[i] != 0) atomicAdd(counters + stats_counter::symbolic_hist + i, static_cast<ull>(hist[i]));
  }
}

}  // namespace spgemm::planner::kernels
