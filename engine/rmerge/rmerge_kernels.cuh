// RMerge kernels: MulLimited, the product C = G * B of a left factor G with at
// most W * R entries per row (Gremse et al. 2015, section 2.2, Listing 1;
// Becker et al. 2016, section 2.3 for R > 1 rows per thread).
//
// Method: one sub-warp of W threads computes one row of C. Entry e of the
// left row goes to lane e % W, cursor e / W; each cursor walks one row of B
// with a weight (the entry's value when G is explicit; 1 when G is implicit,
// i.e. row r of G merges the contiguous rows [off[r], off[r+1]) of B). Each
// step: sub-warp min of the cursors' front columns (__shfl_xor_sync, INT_MAX
// once exhausted), every thread sums weight * value over its cursors at that
// column and advances them, sub-warp sum by shuffle, lane 0 writes the entry.
// Output columns come out sorted and unique; the reduction order is fixed, so
// the results are bit-identical from run to run.
// Phases: the structure pass (Count = true) writes row lengths; the caller
// scans them into offsets and allocates C; the value pass fills C.
// Workspace: none in global memory; the value pass may stage each warp's
// first output entries in shared memory (see stage_capacity below), and
// either pass may stage the warp's rows of B (b_stage_capacity below).
// Complexity: per output entry O(R + log W) per thread; the whole pass reads
// every contributing row of B once and writes C once.
// Kernels only: the host dispatch lives in rmerge.cu and mul_limited_*.cu.
#pragma once

#include <cub/block/block_reduce.cuh>

#include <climits>
#include <cstdint>
#include <type_traits>

#include "planner/row_repeats.hpp"
#include "rmerge/mul_limited.hpp"
#include "spgemm/csr.hpp"

namespace spgemm::rmerge {

// Sub-warp reductions over W lanes. The whole warp takes part (a constant
// full mask): with a mask of the calling sub-warp alone, each shuffle costs
// a convergence check (MATCH, REDUX, a branch) on top of the shuffle.
template <int W, typename V>
__device__ __forceinline__ V subwarp_min(V v) {
#pragma unroll
  for (int i = W / 2; i >= 1; i /= 2) {
    const V other = __shfl_xor_sync(0xffffffffu, v, i, W);
    v = other < v ? other : v;
  }
  return v;
}

template <int W, typename V>
__device__ __forceinline__ V subwarp_sum(V v) {
#pragma unroll
  for (int i = W / 2; i >= 1; i /= 2) v += __shfl_xor_sync(0xffffffffu, v, i, W);
  return v;
}

// Value pass (stage_capacity > 0): the rows of one warp fill one contiguous
// range of C, so the warp stages its first stage_capacity entries in shared
// memory (dynamic: stage_capacity values, then as many columns, per warp)
// and writes them with coalesced stores at the end; a lane-0 store per entry
// would touch one sector per sub-warp. Entries past the stage go straight to C.
inline constexpr int warps_per_block = 128 / 32;

// Either pass (b_stage_capacity > 0): the rows of B that the warp's rows
// merge, copied once into shared memory with coalesced loads (32 lanes on 32
// consecutive entries, rows of B one after another in the order of the
// warp's left entries), where they hold at most b_stage_capacity entries;
// the cursors then walk the copy. A cursor's loads from global memory take a
// 32-byte sector each for 4 or 8 bytes: on short rows of B (stencils, FEM)
// the sectors, not the merging, bound both passes. A warp whose rows of B
// do not fit merges from global memory as without the stage. Per warp, after
// the output stage: the first product of each left entry
// (b_stage_entries + 1 ints), where its row of B starts (b_stage_entries
// offsets), then b_stage_capacity columns and (value pass) values.
inline constexpr int b_stage_entries = 128;  // left entries of a warp at most: 32 / W rows of W * R
inline constexpr int b_stage_unroll = 4;     // entries a lane copies per round

template <typename T>
__host__ __device__ constexpr std::size_t b_stage_bytes(int capacity, bool values) {
  return (static_cast<std::size_t>(b_stage_entries + 4) * sizeof(int) +
          static_cast<std::size_t>(b_stage_entries) * sizeof(offset_t) +
          static_cast<std::size_t>(capacity) * (sizeof(index_t) + (values ? sizeof(T) : 0)) + 15) /
         16 * 16;
}

// The warp's stage of B (see above), or none where its rows of B hold more
// than `capacity` entries; the whole warp calls it. Entry i of the warp's
// left entries (left_off[first] + i) selects the row of B that its cursor
// then walks at stage positions [first_product[i], first_product[i + 1]).
template <bool Explicit, bool Count, typename T>
__device__ __forceinline__ bool stage_b(unsigned char* area, int capacity, offset_t e0, offset_t e1,
                                        const index_t* __restrict__ left_col, const offset_t* __restrict__ b_off,
                                        const index_t* __restrict__ b_col, const T* __restrict__ b_val) {
  const int lane = static_cast<int>(threadIdx.x & 31);
  int* first_product = reinterpret_cast<int*>(area);
  offset_t* b_begin = reinterpret_cast<offset_t*>(area + (b_stage_entries + 4) * sizeof(int));
  index_t* cols = reinterpret_cast<index_t*>(reinterpret_cast<unsigned char*>(b_begin + b_stage_entries));
  T* vals = reinterpret_cast<T*>(area + ((b_stage_entries + 4) * sizeof(int) + b_stage_entries * sizeof(offset_t) +
                                         static_cast<std::size_t>(capacity) * sizeof(index_t) + 7) /
                                            8 * 8);
  const int entries = static_cast<int>(e1 - e0);
  if (entries > b_stage_entries) return false;  // uniform across the warp
  // Rows of B in the order of the entries: lengths, then exclusive prefix.
  long long total = 0;
  for (int j = 0; j * 32 < entries; ++j) {
    const int i = j * 32 + lane;
    long long len = 0;
    offset_t begin = 0;
    if (i < entries) {
      const offset_t b_row = Explicit ? static_cast<offset_t>(left_col[e0 + i]) : e0 + i;
      begin = b_off[b_row];
      len = b_off[b_row + 1] - begin;
    }
    long long incl = len;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const long long u = __shfl_up_sync(0xffffffffu, incl, d);
      if (lane >= d) incl += u;
    }
    if (i < entries) {
      const long long at = total + incl - len;
      first_product[i] = static_cast<int>(at < capacity ? at : capacity);
      b_begin[i] = begin;
    }
    total += __shfl_sync(0xffffffffu, incl, 31);
  }
  if (total > capacity) return false;  // uniform: every lane summed the same lengths
  if (lane == 0) first_product[entries] = static_cast<int>(total);
  __syncwarp();
  // b_stage_unroll entries a lane per round: their loads in flight together.
  for (int q0 = 0; q0 < total; q0 += 32 * b_stage_unroll) {
    offset_t from[b_stage_unroll];
#pragma unroll
    for (int u = 0; u < b_stage_unroll; ++u) {
      const int q = q0 + u * 32 + lane;
      from[u] = -1;
      if (q < total) {
        int lo = 0;
        int hi = entries - 1;
        while (lo < hi) {  // the last entry whose first product is at most q
          const int mid = (lo + hi + 1) >> 1;
          if (first_product[mid] <= q) {
            lo = mid;
          } else {
            hi = mid - 1;
          }
        }
        from[u] = b_begin[lo] + (q - first_product[lo]);
      }
    }
    index_t c[b_stage_unroll];
    T v[b_stage_unroll];
#pragma unroll
    for (int u = 0; u < b_stage_unroll; ++u) {
      if (from[u] >= 0) {
        c[u] = b_col[from[u]];
        if constexpr (!Count) v[u] = b_val[from[u]];
      }
    }
#pragma unroll
    for (int u = 0; u < b_stage_unroll; ++u) {
      if (from[u] >= 0) {
        const int q = q0 + u * 32 + lane;
        cols[q] = c[u];
        if constexpr (!Count) vals[q] = v[u];
      }
    }
  }
  __syncwarp();
  return true;
}

// A cursor walks one row of B: its position, the entries left (a row of B
// has fewer than 2^31: its columns are index_t), its weight and the front
// entry (column, and in the value pass the value, loaded together so that a
// step waits on one load).
template <bool Explicit, bool Count, typename T>
struct cursor {
  offset_t pos = 0;
  int left = 0;  // from pos on, the front entry included
  T weight = T(1);
  index_t front = INT_MAX;
  T front_value = T(0);

  __device__ __forceinline__ void start(offset_t begin, offset_t end) {
    pos = begin;
    left = static_cast<int>(end - begin);
  }
  __device__ __forceinline__ void load(const index_t* __restrict__ b_col, const T* __restrict__ b_val) {
    front = left > 0 ? b_col[pos] : INT_MAX;
    if constexpr (!Count) {
      if (left > 0) front_value = b_val[pos];
    }
  }
  // Where `hit`: adds the weighted front value to `sum` and advances to the
  // next entry. Predicated rather than branched: some lane of the warp
  // nearly always hits, so a branch would skip nothing and cost three
  // instructions a cursor a step.
  __device__ __forceinline__ void take_if(bool hit, T& sum, const index_t* __restrict__ b_col,
                                          const T* __restrict__ b_val) {
    if constexpr (!Count) {
      const T v = Explicit ? weight * front_value : front_value;
      sum = hit ? sum + v : sum;
    }
    const bool more = hit && left > 1;
    pos += hit ? 1 : 0;
    left -= hit ? 1 : 0;
    index_t next = hit ? INT_MAX : front;
    if (more) next = b_col[pos];
    front = next;
    if constexpr (!Count) {
      if (more) front_value = b_val[pos];
    }
  }
};

// Count: write the length of row r of C to c_off[r] (c_col, c_val, left_val
// and b_val unused); with SkipRepeats (explicit G), planner::repeated_length where
// `repeats` shows it to be the row before's, merging nothing (an
// instantiation of its own: the check cost the others' merge loop 10% on
// Andrews). Otherwise: write row r at c_off[r]. Known: the offsets
// are a known structure's (a numeric-only pass) and the values alone are
// written (c_col unused), within c_off[r + 1]: the structure of another
// product writes no entry past its row, and the rest of a row it does not
// fill holds zeros.
// Launch bounds (128, 8): 64 registers, no spills; with (128) alone ptxas
// spills in the merge loop of some instantiations (docs/planner.md, RMerge).
template <int W, int R, bool Explicit, bool Count, typename T, bool Known = false, bool SkipRepeats = false>
__global__ void __launch_bounds__(128, 8) mul_limited_kernel(
    std::int64_t rows, const offset_t* __restrict__ left_off, const index_t* __restrict__ left_col,
    const T* __restrict__ left_val, const offset_t* __restrict__ b_off, const index_t* __restrict__ b_col,
    const T* __restrict__ b_val, offset_t* __restrict__ c_off, index_t* __restrict__ c_col,
    T* __restrict__ c_val, int stage_capacity, int b_stage_capacity, known_repeats repeats) {
  static_assert(W == 2 || W == 4 || W == 8 || W == 16 || W == 32, "sub-warp size");
  static_assert(R == 1 || R == 2 || R == 4, "rows per thread");
  const std::int64_t thread = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t item = thread / W;
  const bool staged = !Count && stage_capacity > 0;
  // The whole warp runs the merge loop (its shuffles take every lane) until
  // its last row ends; the lanes of rows past the last merge nothing.
  const bool active = item < rows;
  const std::int64_t row = active ? item : 0;
  const int lane = static_cast<int>(threadIdx.x % W);

  // The staged window: the entries of this warp's rows.
  extern __shared__ __align__(16) unsigned char stage[];
  const int warp = static_cast<int>(threadIdx.x / 32);
  T* const stage_val = reinterpret_cast<T*>(stage) + static_cast<std::size_t>(warp) * stage_capacity;
  index_t* const stage_col = reinterpret_cast<index_t*>(reinterpret_cast<T*>(stage) + warps_per_block * stage_capacity) +
                             static_cast<std::size_t>(warp) * stage_capacity;
  offset_t window_begin = 0;
  offset_t window_end = 0;
  const std::int64_t first = (thread & ~std::int64_t{31}) / W;  // the warp's rows [first, last)
  if (first >= rows) return;  // the whole warp is past the last row
  const std::int64_t last = first + 32 / W < rows ? first + 32 / W : rows;
  if (staged) {
    window_begin = c_off[first];
    window_end = c_off[last];
  }

  // Where the cursors read: B, or the warp's stage of it.
  const index_t* cursor_col = b_col;
  const T* cursor_val = b_val;
  const int* b_first_product = nullptr;
  offset_t e_first = 0;
  if (b_stage_capacity > 0) {
    const std::size_t out_stage =
        (static_cast<std::size_t>(warps_per_block) * stage_capacity * (sizeof(T) + sizeof(index_t)) + 15) / 16 * 16;
    unsigned char* area = stage + out_stage + static_cast<std::size_t>(warp) * b_stage_bytes<T>(b_stage_capacity, !Count);
    e_first = left_off[first];
    if (stage_b<Explicit, Count, T>(area, b_stage_capacity, e_first, left_off[last], left_col, b_off, b_col, b_val)) {
      b_first_product = reinterpret_cast<const int*>(area);
      cursor_col = reinterpret_cast<const index_t*>(area + (b_stage_entries + 4) * sizeof(int) +
                                                    b_stage_entries * sizeof(offset_t));
      cursor_val = reinterpret_cast<const T*>(area + ((b_stage_entries + 4) * sizeof(int) +
                                                      b_stage_entries * sizeof(offset_t) +
                                                      static_cast<std::size_t>(b_stage_capacity) * sizeof(index_t) + 7) /
                                                         8 * 8);
    }
  }

  // Row r of C repeats row r - 1 where row r of G does the same, or where it
  // repeats it shifted and so does every row of B it takes.
  bool repeat = false;
  if constexpr (SkipRepeats) {
    static_assert(Count && Explicit, "the structure pass of an explicit left factor skips repeats");
    const unsigned char f = active ? repeats.left[row] : 0;
    int shifted = (f & planner::repeat_shifted) != 0 && repeats.b != nullptr ? 1 : 0;
    if (shifted != 0) {
      const offset_t left_begin = left_off[row];
      const offset_t left_end = left_off[row + 1];
      for (offset_t e = left_begin + lane; e < left_end; e += W) {
        shifted &= (repeats.b[left_col[e]] & planner::repeat_shifted) != 0 ? 1 : 0;
      }
    }
    shifted = subwarp_min<W>(shifted);
    repeat = (f & planner::repeat_same) != 0 || shifted != 0;
  }

  // A row of an implicit G with one entry (a split plan's row of one chunk)
  // is that row of B: its length, or its entries copied W at a time, no
  // merge (femblocks:30:6's last pass, rows of one chunk of 389 entries on
  // 2-lane sub-warps: 2.3 ms merging).
  const bool single = !Explicit && !Known && active && left_off[row + 1] - left_off[row] == 1;

  cursor<Explicit, Count, T> cur[R];
  if (active && !repeat && !single) {
    const offset_t left_begin = left_off[row];
    const offset_t left_end = left_off[row + 1];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const offset_t e = left_begin + lane + static_cast<offset_t>(r) * W;
      if (e < left_end) {
        if constexpr (Explicit && !Count) cur[r].weight = left_val[e];
        if (b_first_product != nullptr) {
          cur[r].start(b_first_product[e - e_first], b_first_product[e - e_first + 1]);
        } else {
          const offset_t b_row = Explicit ? static_cast<offset_t>(left_col[e]) : e;
          cur[r].start(b_off[b_row], b_off[b_row + 1]);
        }
      }
    }
  }
#pragma unroll
  for (int r = 0; r < R; ++r) cur[r].load(cursor_col, cursor_val);

  // The loop over the first U cursors: where no row of the warp is long
  // enough for cursor r, its steps skip it outright (finan512's rows of 7
  // entries on 16 lanes use one cursor of four).
  offset_t out = Count || !active ? 0 : c_off[row];
  const offset_t row_end = Known && active ? c_off[row + 1] : 0;
  const auto put_at = [&](offset_t at, index_t column, T value) {
    const offset_t slot = at - window_begin;
    if (staged && slot < stage_capacity) {
      stage_col[slot] = column;
      stage_val[slot] = value;
    } else {
      if constexpr (!Known) c_col[at] = column;
      c_val[at] = value;
    }
  };
  const auto put = [&](index_t column, T value) { put_at(out, column, value); };
  const auto merge = [&](auto used) {
    constexpr int U = decltype(used)::value;
    for (;;) {
      index_t m = cur[0].front;
#pragma unroll
      for (int r = 1; r < U; ++r) m = cur[r].front < m ? cur[r].front : m;
      m = subwarp_min<W>(m);
      // A sub-warp whose row has ended (m == INT_MAX) idles until the warp's last does.
      bool live = true;
      if constexpr (W == 32) {
        if (m == INT_MAX) break;
      } else {
        if (__all_sync(0xffffffffu, m == INT_MAX)) break;
        live = m != INT_MAX;
      }
      T sum = T(0);
#pragma unroll
      for (int r = 0; r < U; ++r) {
        cur[r].take_if(live && cur[r].front == m, sum, cursor_col, cursor_val);
      }
      if constexpr (!Count) {
        sum = subwarp_sum<W>(sum);
        if (live && lane == 0 && (!Known || out < row_end)) put(m, sum);
      }
      out += live ? 1 : 0;
    }
  };
  int cursors = 0;  // of this lane: its entries of the row, W apart
  if (active && !repeat && !single) {
    const offset_t len = left_off[row + 1] - left_off[row];
    const offset_t mine = len > lane ? (len - lane + W - 1) / W : 0;
    cursors = static_cast<int>(mine < R ? mine : R);
  }
  cursors = __reduce_max_sync(0xffffffffu, cursors);
  if constexpr (R == 4) {
    if (cursors > 2) {
      merge(std::integral_constant<int, 4>{});
    } else if (cursors == 2) {
      merge(std::integral_constant<int, 2>{});
    } else {
      merge(std::integral_constant<int, 1>{});
    }
  } else if constexpr (R == 2) {
    if (cursors == 2) {
      merge(std::integral_constant<int, 2>{});
    } else {
      merge(std::integral_constant<int, 1>{});
    }
  } else {
    merge(std::integral_constant<int, 1>{});
  }
  if (single) {
    const offset_t b_row = left_off[row];
    const offset_t b_begin = b_off[b_row];
    const offset_t length = b_off[b_row + 1] - b_begin;
    if constexpr (!Count) {
      for (offset_t k = lane; k < length; k += W) put_at(out + k, b_col[b_begin + k], b_val[b_begin + k]);
    }
    out += length;
  }
  if constexpr (Count) {
    if (active && lane == 0) c_off[row] = repeat ? planner::repeated_length : out;
  } else {
    if constexpr (Known) {
      if (lane == 0) {
        for (; out < row_end; ++out) put(0, T(0));
      }
    }
    if (staged) {
      __syncwarp();
      const offset_t count = window_end - window_begin < stage_capacity ? window_end - window_begin : stage_capacity;
      for (offset_t i = threadIdx.x % 32; i < count; i += 32) {
        if constexpr (!Known) c_col[window_begin + i] = stage_col[i];
        c_val[window_begin + i] = stage_val[i];
      }
    }
  }
}

}  // namespace spgemm::rmerge
