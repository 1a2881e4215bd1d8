// Dense SpGEMM kernels (included by dense.cu only).
//
// Method: a dense accumulator per row of C over a tile of B's columns, in
// shared memory (Gilbert, Moler & Schreiber 1992's SPA, one per warp), for
// products whose rows of C are dense in a narrow B (A * A^T of a wide A,
// matrices of a few hundred dense-ish columns). One block -- or, where A has
// few rows, a thread-block cluster of `cluster` blocks -- computes a row:
//  * the row's entries of A are cut into cluster x warps contiguous runs;
//    each warp enumerates its run's products in order (A's entries in order,
//    each one's part of its row of B in order), 32 x batch at a time: 32
//    entries of A staged with the inclusive prefix of their parts' lengths,
//    each lane finding its products by binary search in the stage;
//  * symbolic: every product sets its column's bit in the warp's bitmap;
//    numeric: in each step of 32 products, __match_any_sync groups the lanes
//    of one column and the lowest adds them in lane order to the warp's value
//    of the column (or starts it, where its bit was not set): each warp's
//    value of a column is the sequential sum of its run's products;
//  * the warps' accumulators are added in warp order into warp 0's; with a
//    cluster, each block then takes a share of the tile's columns and adds
//    the blocks' accumulators in rank order through distributed shared
//    memory into a staging array (warp 1's); the blocks exchange their counts
//    of entries and write their columns' entries in column order.
// Every entry of C is thus a fixed sum tree of its products: bit-identical on
// every run (on one device: the plan reads its SMs and shared memory).
// Phases: the symbolic kernel writes each row's nnz into C's offsets; the
// host scans them, allocates C exactly; the numeric kernel writes C.
// Workspace: none in global memory (shared memory: dense_tuning.hpp).
// Complexity per (row, tile): the row's products (where B is wider than a
// tile: two binary searches per entry of A for its part of the row of B),
// plus tile / 32 bitmap words per warp and tile / 32 per block of the
// cluster for the reductions and the read-out.
#pragma once

#include <cooperative_groups.h>

#include <cstdint>

#include "cuda/warp_primitives.cuh"
#include "spgemm/csr.hpp"

namespace spgemm::dense::kernels {

namespace cg = cooperative_groups;
using cuda::block_inclusive_scan;
using cuda::full_mask;
using cuda::warp_inclusive_scan;

constexpr int max_block_threads = 256;  // 32 x dense::max_warps
constexpr int batch = 4;                // products per lane per round: loads in flight

template <typename T>
struct params {
  std::int64_t rows = 0;
  const offset_t* a_off = nullptr;
  const index_t* a_col = nullptr;
  const T* a_val = nullptr;
  const offset_t* b_off = nullptr;
  const index_t* b_col = nullptr;
  const T* b_val = nullptr;
  int tile = 0;
  int tiles = 0;
  int warps = 0;
  int cluster = 1;
  offset_t* c_off = nullptr;  // symbolic: receives each row's nnz; numeric: C's offsets
  index_t* c_col = nullptr;
  T* c_val = nullptr;
};

// The block's shared memory (dense::shared_bytes): per warp its values
// (numeric) and bits of the tile, its stage of 32 entries of A and its
// commit scratch; the counts the cluster exchanges.
template <typename T, bool Numeric>
struct block_space {
  T* vals;
  unsigned* bits;
  offset_t* stage_begin;
  long long* stage_incl;
  T* stage_val;
  T* scratch;
  long long* counts;  // [2]: by the parity of the tile
  int tile;
  int words;

  __device__ block_space(unsigned char* smem, int tile_, int warps) : tile(tile_), words(tile_ / 32) {
    unsigned char* at = smem;
    vals = reinterpret_cast<T*>(at);
    if (Numeric) at += static_cast<std::size_t>(warps) * tile * sizeof(T);
    bits = reinterpret_cast<unsigned*>(at);
    at += static_cast<std::size_t>(warps) * words * sizeof(unsigned);
    stage_begin = reinterpret_cast<offset_t*>(at);
    at += static_cast<std::size_t>(warps) * 32 * sizeof(offset_t);
    stage_incl = reinterpret_cast<long long*>(at);
    at += static_cast<std::size_t>(warps) * 32 * sizeof(long long);
    stage_val = reinterpret_cast<T*>(at);
    if (Numeric) at += static_cast<std::size_t>(warps) * 32 * sizeof(T);
    scratch = reinterpret_cast<T*>(at);
    if (Numeric) at += static_cast<std::size_t>(warps) * 32 * sizeof(T);
    counts = reinterpret_cast<long long*>(at);
  }
  __device__ T* vals_of(int w) const { return vals + static_cast<std::size_t>(w) * tile; }
  __device__ unsigned* bits_of(int w) const { return bits + static_cast<std::size_t>(w) * words; }
};

// The first position in [lo, hi) whose column is at least c (hi if none).
__device__ __forceinline__ offset_t first_at_least(const index_t* __restrict__ col, offset_t lo, offset_t hi,
                                                   long long c) {
  while (lo < hi) {
    const offset_t mid = lo + ((hi - lo) >> 1);
    if (col[mid] < c) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// One step of 32 products of a warp into its accumulator (columns relative
// to the tile): symbolic, the bits; numeric, the lanes of one column added
// by the lowest of them in lane order after the value the column holds.
template <typename T, bool Numeric>
__device__ __forceinline__ void commit_step(bool valid, int c, T v, unsigned* bits, T* vals, T* scratch) {
  const int lane = static_cast<int>(threadIdx.x & 31);
  if constexpr (!Numeric) {
    if (valid) atomicOr(&bits[c >> 5], 1u << (c & 31));
  } else {
    scratch[lane] = v;
    __syncwarp();
    const unsigned peers = __match_any_sync(full_mask, valid ? c : -1);
    if (valid && lane == __ffs(peers) - 1) {
      const unsigned m = 1u << (c & 31);
      const unsigned old = atomicOr(&bits[c >> 5], m);
      T acc = (old & m) != 0 ? vals[c] + v : v;
      unsigned rest = peers & (peers - 1);  // the other lanes, lowest first
      while (rest != 0) {
        acc += scratch[__ffs(rest) - 1];
        rest &= rest - 1;
      }
      vals[c] = acc;
    }
  }
  __syncwarp();
}

// The products of entries [e_begin, e_end) of A (their parts of B within
// the tile [c0, c0 + tile)) into the calling warp's accumulator, in order.
template <typename T, bool Numeric>
__device__ void accumulate_run(const params<T>& p, const block_space<T, Numeric>& s, int warp, offset_t e_begin,
                               offset_t e_end, long long c0) {
  const int lane = static_cast<int>(threadIdx.x & 31);
  offset_t* st_begin = s.stage_begin + 32 * warp;
  long long* st_incl = s.stage_incl + 32 * warp;
  T* st_val = s.stage_val + 32 * warp;
  T* scratch = s.scratch + 32 * warp;
  unsigned* bits = s.bits_of(warp);
  T* vals = s.vals_of(warp);
  for (offset_t e0 = e_begin; e0 < e_end; e0 += 32) {
    const int n = static_cast<int>(e_end - e0 < 32 ? e_end - e0 : 32);
    offset_t begin = 0;
    long long len = 0;
    T av = T(0);
    if (lane < n) {
      const index_t k = p.a_col[e0 + lane];
      begin = p.b_off[k];
      offset_t end = p.b_off[k + 1];
      if (p.tiles > 1) {
        begin = first_at_least(p.b_col, begin, end, c0);
        end = first_at_least(p.b_col, begin, end, c0 + p.tile);
      }
      len = end - begin;
      if constexpr (Numeric) av = p.a_val[e0 + lane];
    }
    const long long incl = warp_inclusive_scan(len);
    const long long total = __shfl_sync(full_mask, incl, 31);
    __syncwarp();  // the stage before is consumed
    st_begin[lane] = begin;
    st_incl[lane] = incl;
    if constexpr (Numeric) st_val[lane] = av;
    __syncwarp();
    for (long long q0 = 0; q0 < total; q0 += 32 * batch) {
      int col[batch];
      T v[batch];
      bool valid[batch];
#pragma unroll
      for (int b = 0; b < batch; ++b) {
        const long long q = q0 + b * 32 + lane;
        valid[b] = q < total;
        col[b] = 0;
        v[b] = T(0);
        if (valid[b]) {
          int lo = 0;
          int hi = n - 1;
          while (lo < hi) {  // the first entry whose inclusive prefix passes q
            const int mid = (lo + hi) >> 1;
            if (st_incl[mid] > q) {
              hi = mid;
            } else {
              lo = mid + 1;
            }
          }
          const offset_t j = st_begin[lo] + (q - (lo > 0 ? st_incl[lo - 1] : 0));
          col[b] = static_cast<int>(p.b_col[j] - c0);
          if constexpr (Numeric) v[b] = st_val[lo] * p.b_val[j];
        }
      }
#pragma unroll
      for (int b = 0; b < batch; ++b) commit_step<T, Numeric>(valid[b], col[b], v[b], bits, vals, scratch);
    }
  }
}

// Adds the words [w0, w1) of every source accumulator, sources in order:
// the bits of a column are or-ed, its values summed where set. `bits_at(q)`
// and `vals_at(q)` give source q's arrays (a warp's, or a block's of the
// cluster); the result goes to out_bits / out_vals (which may be source 0's).
template <typename T, bool Numeric, typename BitsAt, typename ValsAt>
__device__ __forceinline__ void reduce_words(int w0, int w1, int sources, BitsAt bits_at, ValsAt vals_at,
                                             unsigned* out_bits, T* out_vals) {
  for (int w = w0 + static_cast<int>(threadIdx.x); w < w1; w += static_cast<int>(blockDim.x)) {
    unsigned any = 0;
    for (int q = 0; q < sources; ++q) any |= bits_at(q)[w];
    if constexpr (Numeric) {
      for (unsigned m = any; m != 0; m &= m - 1) {
        const int c = w * 32 + __ffs(m) - 1;
        const unsigned bit = 1u << (c & 31);
        bool first = true;
        T sum = T(0);
        for (int q = 0; q < sources; ++q) {
          if ((bits_at(q)[w] & bit) != 0) {
            const T x = vals_at(q)[c];
            sum = first ? x : sum + x;
            first = false;
          }
        }
        out_vals[c] = sum;
      }
    }
    out_bits[w] = any;
  }
}

// Symbolic (Numeric = false): each row's nnz into p.c_off[row]. Numeric:
// row `row` of C at p.c_off[row]. Grid: rows x cluster blocks, launched as
// clusters of `cluster` blocks (a 1-D cluster: block rank = blockIdx.x %
// cluster), 32 x warps threads each.
template <typename T, bool Numeric>
__global__ void __launch_bounds__(max_block_threads) dense_kernel(params<T> p) {
  extern __shared__ __align__(16) unsigned char smem[];
  const block_space<T, Numeric> s(smem, p.tile, p.warps);
  const int k = p.cluster;
  const std::int64_t row = blockIdx.x / k;
  const int rank = static_cast<int>(blockIdx.x % k);
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const int lane = static_cast<int>(threadIdx.x & 31);

  // This warp's run of the row's entries: the rank's share, then the warp's.
  const offset_t a0 = p.a_off[row];
  const offset_t len = p.a_off[row + 1] - a0;
  const offset_t r0 = a0 + len * rank / k;
  const offset_t rlen = a0 + len * (rank + 1) / k - r0;
  const offset_t e_begin = r0 + rlen * warp / p.warps;
  const offset_t e_end = r0 + rlen * (warp + 1) / p.warps;

  // The rank's share of a tile's words, and where it stages their sums.
  const int w0 = s.words * rank / k;
  const int w1 = s.words * (rank + 1) / k;
  unsigned* out_bits = k > 1 ? s.bits_of(1) : s.bits_of(0);
  T* out_vals = k > 1 ? s.vals_of(1) : s.vals_of(0);
  const offset_t row_start = Numeric ? p.c_off[row] : 0;
  long long written = 0;  // entries of the row in the tiles before

  for (int t = 0; t < p.tiles; ++t) {
    const long long c0 = static_cast<long long>(t) * p.tile;
    unsigned* my_bits = s.bits_of(warp);
    for (int w = lane; w < s.words; w += 32) my_bits[w] = 0;
    __syncwarp();
    accumulate_run<T, Numeric>(p, s, warp, e_begin, e_end, c0);
    __syncthreads();
    // The warps' accumulators into warp 0's, in warp order.
    reduce_words<T, Numeric>(
        0, s.words, p.warps, [&](int q) { return s.bits_of(q); }, [&](int q) { return s.vals_of(q); }, s.bits_of(0),
        s.vals_of(0));
    long long before = 0;  // entries of the tile in the ranks before this one
    long long count = 0;   // entries of the tile
    if (k > 1) {
      cg::cluster_group cluster = cg::this_cluster();
      cluster.sync();  // every block's warp 0 holds its sums
      // The rank's words, blocks in rank order, into warp 1's arrays.
      unsigned* bits0 = s.bits_of(0);
      T* vals0 = s.vals_of(0);
      reduce_words<T, Numeric>(
          w0, w1, k, [&](int q) { return cluster.map_shared_rank(bits0, q); },
          [&](int q) { return cluster.map_shared_rank(vals0, q); }, out_bits, out_vals);
      __syncthreads();
      long long mine = 0;
      for (int w = w0 + static_cast<int>(threadIdx.x); w < w1; w += static_cast<int>(blockDim.x)) mine += __popc(out_bits[w]);
      long long rank_total = 0;
      (void)block_inclusive_scan(mine, rank_total);
      if (threadIdx.x == 0) s.counts[t & 1] = rank_total;
      cluster.sync();  // the counts are out; no block reads another's accumulators any more
      for (int q = 0; q < k; ++q) {
        const long long c = *cluster.map_shared_rank(s.counts + (t & 1), q);
        if (q < rank) before += c;
        count += c;
      }
    } else {
      __syncthreads();
      long long mine = 0;
      for (int w = static_cast<int>(threadIdx.x); w < s.words; w += static_cast<int>(blockDim.x)) mine += __popc(out_bits[w]);
      (void)block_inclusive_scan(mine, count);
    }
    if constexpr (Numeric) {
      // The rank's words in chunks of one per thread, in order: positions by
      // a block scan of their bit counts.
      long long chunk_start = row_start + written + before;
      for (int c = w0; c < w1; c += static_cast<int>(blockDim.x)) {
        const int w = c + static_cast<int>(threadIdx.x);
        const unsigned word = w < w1 ? out_bits[w] : 0u;
        const long long bits_here = __popc(word);
        long long chunk_total = 0;
        long long at = chunk_start + block_inclusive_scan(bits_here, chunk_total) - bits_here;
        for (unsigned m = word; m != 0; m &= m - 1) {
          const int col = w * 32 + __ffs(m) - 1;
          p.c_col[at] = static_cast<index_t>(c0 + col);
          p.c_val[at] = out_vals[col];
          ++at;
        }
        chunk_start += chunk_total;
      }
    }
    written += count;
    __syncthreads();  // the staged sums are read out before the next tile
  }
  if (k > 1) cg::this_cluster().sync();  // no block leaves while another may read its counts
  if (!Numeric && rank == 0 && threadIdx.x == 0) p.c_off[row] = written;
}

}  // namespace spgemm::dense::kernels
