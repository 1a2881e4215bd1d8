// Block SpGEMM kernels: the block pattern of an operand, and the numeric
// product of blocked operands.
//
// Method (numeric_kernel): C's block structure Cb = pattern(Ab * Bb) is known
// (block.cu computes it with RMerge or the hash method on the block
// patterns). A group of G lanes (8, 16 or 32: the power of two at or above
// B's longest block row; for scalar rows 1 to 32, from B's mean row) owns
// block row I of C. It walks A's blocks K of
// block row I in order; for each, its lanes take the blocks J of B's block
// row K (distinct, so no two lanes touch one block of C in a step), find J's
// position p in Cb's row I by binary search and add A_IK * B_KJ (b^3
// multiplications) into the accumulator of block p; the group synchronizes
// between the blocks K. The accumulator lives in shared memory where the
// row's b * b * len(I) values fit the group's share, else in C's values in
// global memory (zeroed first; the group owns the range). Scalar rows (b = 1)
// stage A's entries in the lanes' registers and search in 32 bits
// (add_scalar_row); where they are few and long, `splits` groups take one
// row, each a contiguous range of its positions and, of every row of B, the
// entries in that range (block_tuning.hpp, scalar_splits). Shared rows are then
// written with coalesced stores: rows bI .. bI+b-1 of C are one contiguous
// range, row-major (row r, block p, column c at (r len(I) + p) b + c), the
// accumulator's own layout.
// Order of the additions: every entry of C is the sum over K in A's order,
// and within a block over A's columns in order, of products rounded on their
// own (no fused multiply-add): the CPU reference's order and rounding, so the
// values equal it (bit for bit up to the sign of a zero), with no atomics.
// A's block (I, K) at position k of its block row is read in place: row
// bI + r, entries a_off[bI] + r * b * len_A(I) + k * b + c (every row of a
// block row has the same length); B's likewise.
// Workspace: none in global memory beyond C; shared memory per block: its
// rows * shared_blocks * (b * b values + a column).
// Complexity: b^3 multiply-adds per pair of blocks (A_IK, B_KJ) plus a binary
// search over Cb's row; A and B read once per use (L1/L2), C written once; a
// split row's groups also search each row of B for their range.
// Kernels only: the host dispatch lives in block.cu, the rule of block
// structure in planner/block_structure.hpp.
#pragma once

#include <cstdint>

#include "block/block_tuning.hpp"
#include "spgemm/csr.hpp"

namespace spgemm::block::kernels {

inline constexpr int helper_threads = 256;

// Block pattern of a b-blocked matrix: block_off[I] for I <= block_rows, and
// the block columns of every block row (warp per block row).
__global__ void __launch_bounds__(helper_threads)
    block_pattern_kernel(int b, std::int64_t block_rows, const offset_t* __restrict__ off,
                         const index_t* __restrict__ col, offset_t* __restrict__ block_off,
                         index_t* __restrict__ block_col) {
  const unsigned lane = threadIdx.x & 31u;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / 32);
  const std::int64_t area = static_cast<std::int64_t>(b) * b;
  for (std::int64_t i = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / 32; i <= block_rows;
       i += warps) {
    const offset_t begin = off[b * i];
    if (lane == 0) block_off[i] = begin / area;
    if (i == block_rows) continue;
    const std::int64_t blocks = (off[b * i + 1] - begin) / b;
    for (std::int64_t k = lane; k < blocks; k += 32) block_col[begin / area + k] = col[begin + k * b] / b;
  }
}

// Products rounded on their own, then added (as the CPU reference; nvcc
// would otherwise fuse them).
__device__ __forceinline__ float mul_rn(float x, float y) { return __fmul_rn(x, y); }
__device__ __forceinline__ double mul_rn(double x, double y) { return __dmul_rn(x, y); }
__device__ __forceinline__ float add_rn(float x, float y) { return __fadd_rn(x, y); }
__device__ __forceinline__ double add_rn(double x, double y) { return __dadd_rn(x, y); }

// The first position of the sorted cols[0 .. n) at or above `key` (n if
// none; key's position where it is there), in the width of N.
template <typename N>
__device__ __forceinline__ N lower_bound(const index_t* cols, N n, index_t key) {
  N lo = 0;
  while (n > 0) {
    const N half = n / 2;
    if (cols[lo + half] < key) {
      lo += half + 1;
      n -= half + 1;
    } else {
      n = half;
    }
  }
  return lo;
}

// Position of `key` in the sorted cols[0 .. n) (it is there), without
// branches: the scalar rows' search, where the block rows' 64-bit search
// cost more instructions than the products (the pass was bound by issue).
__device__ __forceinline__ int find_column32(const index_t* cols, int n, index_t key) {
  int lo = 0;
  while (n > 1) {
    const int half = n / 2;
    lo = cols[lo + half] <= key ? lo + half : lo;
    n -= half;
  }
  return lo;
}

// The scalar rows (B = 1): A's row staged `group` entries at a time, one per
// lane (its value and its row of B's range), each handed to the group by
// shuffles in A's order: no dependent loads between one entry and the next.
// `cols`, `c_len` and `acc`: the positions the group owns; with `narrow` (a
// split row), each lane's range of B is cut to the columns of those.
template <typename T>
__device__ __forceinline__ void add_scalar_row(std::int64_t row, int group, int lane, unsigned mask, bool narrow,
                                               const offset_t* __restrict__ a_off, const index_t* __restrict__ a_col,
                                               const T* __restrict__ a_val, const offset_t* __restrict__ b_off,
                                               const index_t* __restrict__ b_col, const T* __restrict__ b_val,
                                               const index_t* cols, int c_len, index_t col_end, T* acc) {
  const offset_t a_begin = a_off[row];
  const int a_len = static_cast<int>(a_off[row + 1] - a_begin);
  for (int base = 0; base < a_len; base += group) {
    offset_t mine_begin = 0;
    int mine_len = 0;
    T mine_a = T(0);
    if (base + lane < a_len) {
      const index_t k = a_col[a_begin + base + lane];
      mine_a = a_val[a_begin + base + lane];
      mine_begin = b_off[k];
      mine_len = static_cast<int>(b_off[k + 1] - mine_begin);
      if (narrow) {
        const int first = lower_bound(b_col + mine_begin, mine_len, cols[0]);
        mine_len = lower_bound(b_col + mine_begin + first, mine_len - first, col_end);
        mine_begin += first;
      }
    }
    const int steps = a_len - base < group ? a_len - base : group;
    for (int step = 0; step < steps; ++step) {
      const offset_t b_begin = __shfl_sync(mask, mine_begin, step, group);
      const int b_len = __shfl_sync(mask, mine_len, step, group);
      const T a = __shfl_sync(mask, mine_a, step, group);
      for (int q = lane; q < b_len; q += group) {
        T* const out = acc + find_column32(cols, c_len, b_col[b_begin + q]);
        *out = add_rn(*out, mul_rn(a, b_val[b_begin + q]));
      }
      __syncwarp(mask);  // the next entry may add to the same columns from other lanes
    }
  }
}

// C = A * B for B-blocked A and B, C's block pattern (cb_off, cb_col) given.
// Groups of `group` lanes, `splits` of them per block row (1 unless B = 1),
// blockDim.x / (group * splits) block rows per block; shared_blocks: blocks
// of a row its share of the dynamic shared memory holds (values of all rows
// first, then their columns). THREADS: blockDim.x at most (a bound above
// numeric_threads caps the registers of every thread: split rows only).
template <typename T, int B, int THREADS>
__global__ void __launch_bounds__(THREADS)
    numeric_kernel(std::int64_t block_rows, int group, int splits, std::int64_t shared_blocks,
                   const offset_t* __restrict__ a_off, const index_t* __restrict__ a_col,
                   const T* __restrict__ a_val, const offset_t* __restrict__ b_off, const index_t* __restrict__ b_col,
                   const T* __restrict__ b_val, const offset_t* __restrict__ cb_off,
                   const index_t* __restrict__ cb_col, offset_t* __restrict__ c_off, index_t* __restrict__ c_col,
                   T* __restrict__ c_val) {
  extern __shared__ __align__(16) unsigned char shared_raw[];
  constexpr int area = B * B;
  const int rows = static_cast<int>(blockDim.x) / (group * splits);
  const int g = static_cast<int>(threadIdx.x) / group;
  const int r_in_block = g / splits;
  const int split = g % splits;
  const int lane = static_cast<int>(threadIdx.x) % group;
  const unsigned mask =
      group == 32 ? 0xffffffffu : ((1u << group) - 1u) << ((threadIdx.x & 31u) & ~static_cast<unsigned>(group - 1));
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * rows + r_in_block;
  if (row >= block_rows) return;  // the whole group

  T* const shared_acc = reinterpret_cast<T*>(shared_raw) + static_cast<std::int64_t>(r_in_block) * shared_blocks * area;
  index_t* const shared_col =
      reinterpret_cast<index_t*>(reinterpret_cast<T*>(shared_raw) + static_cast<std::int64_t>(rows) * shared_blocks * area) +
      static_cast<std::int64_t>(r_in_block) * shared_blocks;

  const offset_t c_begin = cb_off[row];
  const std::int64_t c_len = cb_off[row + 1] - c_begin;
  const std::int64_t c_values = area * c_len;
  const offset_t c_first = area * c_begin;
  const bool in_shared = c_len <= shared_blocks;
  T* const acc = in_shared ? shared_acc : c_val + c_first;
  const index_t* const cols = in_shared ? shared_col : cb_col + c_begin;
  // The group's positions [p0, p1) of the row (all of it unless split, and
  // only scalar rows split) and their values [v0, v1).
  const std::int64_t p0 = c_len * split / splits, p1 = c_len * (split + 1) / splits;
  const std::int64_t v0 = area * p0, v1 = area * p1;
  for (std::int64_t t = v0 + lane; t < v1; t += group) acc[t] = T(0);
  if (in_shared)
    for (std::int64_t t = p0 + lane; t < p1; t += group) shared_col[t] = cb_col[c_begin + t];
  __syncwarp(mask);

  if constexpr (B == 1) {
    if (p1 > p0) {
      const index_t col_end = p1 < c_len ? cb_col[c_begin + p1] : static_cast<index_t>(0x7fffffff);
      add_scalar_row(row, group, lane, mask, splits > 1, a_off, a_col, a_val, b_off, b_col, b_val, cols + p0,
                     static_cast<int>(p1 - p0), col_end, acc + p0);
    }
  } else {
    const offset_t a_begin = a_off[B * row];
    const std::int64_t a_row = a_off[B * row + 1] - a_begin;  // entries of each scalar row: B * blocks
    for (std::int64_t k = 0; k < a_row / B; ++k) {
      T a[B][B];
#pragma unroll
      for (int r = 0; r < B; ++r)
#pragma unroll
        for (int m = 0; m < B; ++m) a[r][m] = a_val[a_begin + r * a_row + k * B + m];
      const std::int64_t kb = a_col[a_begin + k * B] / B;
      const offset_t b_begin = b_off[B * kb];
      const std::int64_t b_row = b_off[B * kb + 1] - b_begin;
      for (std::int64_t q = lane; q < b_row / B; q += group) {
        const std::int64_t p = lower_bound(cols, c_len, b_col[b_begin + q * B] / B);
        T bv[B][B];
#pragma unroll
        for (int m = 0; m < B; ++m)
#pragma unroll
          for (int c = 0; c < B; ++c) bv[m][c] = b_val[b_begin + m * b_row + q * B + c];
#pragma unroll
        for (int r = 0; r < B; ++r) {
          T* const out = acc + (r * c_len + p) * B;
#pragma unroll
          for (int c = 0; c < B; ++c) {
            T s = out[c];
#pragma unroll
            for (int m = 0; m < B; ++m) s = add_rn(s, mul_rn(a[r][m], bv[m][c]));
            out[c] = s;
          }
        }
      }
      __syncwarp(mask);  // the next K may add to the same blocks from other lanes
    }
  }

  if (in_shared)
    for (std::int64_t t = v0 + lane; t < v1; t += group) c_val[c_first + t] = acc[t];
  for (std::int64_t t = v0 + lane; t < v1; t += group) {
    const std::int64_t u = t % (B * c_len);
    c_col[c_first + t] = static_cast<index_t>(B * cols[u / B] + u % B);
  }
  if (split == 0) {
    for (int r = lane; r < B; r += group) c_off[B * row + r] = c_first + r * B * c_len;
    if (row == block_rows - 1 && lane == 0) c_off[B * block_rows] = c_first + c_values;
  }
}

}  // namespace spgemm::block::kernels
