// Segment rows of the hash method (included by hash.cu after hash_kernels.cuh).
//
// A row of C that is dense in the columns of B (planner::is_segment_row) is
// computed per item (row, segment s): the columns [s W, (s + 1) W) of B,
// W the job's width (planner::segment_width_for: a power of two up to
// planner::segment_width), by one block. Its products are the parts of the
// rows of B inside the segment (column_range over the segment starts of every
// row of B), enumerated in row order by for_each_product_chunk. The
// accumulator is dense in shared memory, W columns (the launch's shared memory
// follows W, planner::segment_shared_bytes): one bit per column (which columns
// occur), one value per column, and one claim tag per column.
//  * symbolic: per row, not per item: the bits of all columns of B at once
//    (whole rows of B), counted per segment -> the offset of every item
//    within its row, and the row's nnz.
//  * numeric: set the bits; add every product to its column in product order
//    (ordered_add: claims of the columns by position, then passes by entry of
//    A or turns by warp), so each entry of C is the sequential sum in A's order, bit for bit
//    on every run; then the set bits, scanned in order, give the item's
//    entries sorted by column: no hash probe, no sort. Values are reset as
//    they are read out and claim tags never need a reset, so a block clears
//    its accumulator once and then takes items from a shared counter
//    (persistent blocks: the items differ much in work).
// Complexity: symbolic, per row, its products plus b.cols / 32 bitmap words;
// numeric, per item, its products, plus W / 32 bitmap words and the staging
// of every entry of A's row (two loads of the segment starts each).
#pragma once

#include <climits>

namespace spgemm::hash::kernels {

constexpr int segment_words = planner::segment_width / 32;  // of the widest segment
// Products per thread per round of the numeric pass: rounds of 256 products
// span few entries of A, so few passes order them (docs/planner.md, "Segment
// rows").
constexpr int segment_batch = 1;
static_assert(segment_words <= planner::segment_block_threads, "one bitmap word per thread at most");

// The part of row k of B in segment s (pos: segments + 1 starts per row of B).
__device__ __forceinline__ column_range segment_part(const int* pos, int segments, int s) {
  return column_range{pos, segments + 1, s, s + 1};
}

template <int K>
__device__ __forceinline__ void set_bits(unsigned* bits, const bool (&valid)[K], const int (&slot)[K]) {
#pragma unroll
  for (int k = 0; k < K; ++k) {
    if (valid[k]) atomicOr(&bits[slot[k] >> 5], 1u << (slot[k] & 31));
  }
}

template <int K>
__device__ __forceinline__ void slots_of(const index_t (&col)[K], index_t lo, int (&slot)[K]) {
#pragma unroll
  for (int k = 0; k < K; ++k) slot[k] = static_cast<int>(col[k] - lo);
}

// Symbolic: one block per segment row at a time, with a bitmap of every
// column of B in shared memory (planner::segment_symbolic_shared_bytes): the
// row's products set their bits (B's rows whole, A's row staged once), then
// the bits of each segment are counted. seg_start[i * segments + s] receives
// the offset of segment s within row rows[i], row_nnz the row's nnz; A's row
// is staged once, not once per (row, segment) item.
__global__ void __launch_bounds__(planner::segment_block_threads)
    symbolic_segment_kernel(const int* __restrict__ rows, std::int64_t n, int segments, int width,
                            const offset_t* __restrict__ a_off, const index_t* __restrict__ a_col,
                            const offset_t* __restrict__ b_off, const index_t* __restrict__ b_col,
                            int* __restrict__ seg_start, offset_t* __restrict__ row_nnz) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ int counts[planner::max_segments];
  const int g = static_cast<int>(blockDim.x);
  stage<float> st{reinterpret_cast<offset_t*>(smem), reinterpret_cast<long long*>(smem + 8 * g), nullptr, nullptr};
  unsigned* bits = reinterpret_cast<unsigned*>(smem + 16 * g);
  const int words_per_segment = width / 32;
  const int words = segments * words_per_segment;
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const int lane = static_cast<int>(threadIdx.x & 31);
  for (std::int64_t i = blockIdx.x; i < n; i += gridDim.x) {
    for (int w = threadIdx.x; w < words; w += g) bits[w] = 0;
    __syncthreads();
    for_each_product_chunk<false, false, symbolic_batch, float>(
        rows[i], a_off, a_col, static_cast<const float*>(nullptr), b_off, b_col, static_cast<const float*>(nullptr),
        st, whole_rows{}, [&](const auto& valid, const auto& col, const auto&, const auto&) {
          int slot[symbolic_batch];
          slots_of(col, 0, slot);
          set_bits(bits, valid, slot);
        });
    __syncthreads();
    for (int sg = warp; sg < segments; sg += g / 32) {
      long long c = 0;
      for (int w = lane; w < words_per_segment; w += 32) c += __popc(bits[sg * words_per_segment + w]);
      c = warp_sum(c);
      if (lane == 0) counts[sg] = static_cast<int>(c);
    }
    __syncthreads();
    if (warp == 0) {
      long long running = 0;
      for (int s0 = 0; s0 < segments; s0 += 32) {
        const int sg = s0 + lane;
        const long long c = sg < segments ? counts[sg] : 0;
        const long long incl = warp_inclusive_scan(c);
        if (sg < segments) seg_start[i * segments + sg] = static_cast<int>(running + incl - c);
        running += __shfl_sync(full_mask, incl, 31);
      }
      if (lane == 0) row_nnz[rows[i]] = running;
    }
    __syncthreads();  // the counts and bits are read before the next row clears them
  }
}

// Adds the products of a round to their columns in product order; the whole
// block calls it. A product's position in the round is first + 32 k
// (for_each_product_chunk's layout for a block: warp-major, then k, then
// lane). Products of one entry of A have distinct columns; so do the first
// products of each column:
//  1. every product claims its column: atomicMax of (epoch, 4095 - position)
//     on the column's owner tag, so the lowest position of the pass wins (no
//     tag is ever reset: a later pass has a larger epoch); the winners add.
//     Up to claim_passes such passes while products are pending.
//  2. the rest, where the round spans at most entry_passes entries of A: one
//     pass per entry, in order (one barrier each, no atomics); otherwise the
//     warps take turns in position order (one barrier each), and within a
//     warp the lowest lane of each column's pending products adds them all in
//     lane order, taking their values by shuffle.
// Each column thus receives its products in A's order. Further claim passes
// instead of the warp turns would take as many passes as a round hits its
// most frequent (hub) column.
constexpr int claim_passes = 2;

struct claim_state {
  unsigned* owner;  // per column of the segment: the tag of its last claim
  int width = 0;    // columns of a segment
  int* ranges;      // two (first, last) entry ranges, for rounds of either parity
  unsigned epoch = 0;
  unsigned round = 0;
  int entry_passes = 0;
};

constexpr unsigned claim_epochs = 1u << 20;  // tags: epoch << 12 | (4095 - position)
static_assert(planner::segment_block_threads * segment_batch <= 4096, "positions of a round fit 12 bits");

__device__ __forceinline__ unsigned claim_tag(unsigned epoch, int position) {
  return epoch << 12 | static_cast<unsigned>(4095 - position);
}

// Step 2 by warp turns: the pending products of warp w add after those of
// warps < w; within the warp, k-major then by lane (their position order).
template <int K, typename T, typename S>
__device__ __forceinline__ void add_by_warp_turns(bool (&pending)[K], const int (&slot)[K], const T (&p)[K],
                                                  T* vals, S ring) {
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const int lane = static_cast<int>(threadIdx.x & 31);
  const int warps = static_cast<int>(blockDim.x >> 5);
  for (int turn = 0; turn < warps; ++turn) {
    if (warp == turn) {
#pragma unroll
      for (int k = 0; k < K; ++k) {
        const unsigned todo = __ballot_sync(full_mask, pending[k]);
        if (todo == 0) continue;
        const unsigned column = __match_any_sync(full_mask, pending[k] ? slot[k] : -1);
        const bool adds = pending[k] && lane == __ffs(column) - 1;
        T sum = adds ? vals[slot[k]] : T(0);
        for (unsigned rest = todo; rest != 0; rest &= rest - 1) {
          const int from = __ffs(rest) - 1;
          const T v = __shfl_sync(full_mask, p[k], from);
          if (adds && (column >> from & 1u)) sum = ring.add(sum, v);
        }
        if (adds) vals[slot[k]] = sum;
        pending[k] = false;
        __syncwarp();
      }
    }
    __syncthreads();
  }
}

template <int K, typename T, typename S>
__device__ __forceinline__ void ordered_add(const bool (&valid)[K], const int (&slot)[K], const T (&p)[K],
                                            const int (&entry)[K], T* vals, claim_state& cs, S ring) {
  const int first = static_cast<int>(threadIdx.x >> 5) * 32 * K + static_cast<int>(threadIdx.x & 31);
  int* range = cs.ranges + 2 * (cs.round & 1);
  ++cs.round;
  // The round's entries of A: warp minimum and maximum into range (the other
  // parity's range is reset for the next round).
  int lo = INT_MAX;
  int hi = -1;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    if (valid[k]) {
      lo = min(lo, entry[k]);
      hi = max(hi, entry[k]);
    }
  }
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) {
    lo = min(lo, __shfl_xor_sync(full_mask, lo, d));
    hi = max(hi, __shfl_xor_sync(full_mask, hi, d));
  }
  if (threadIdx.x == 0) {
    int* next = cs.ranges + 2 * (cs.round & 1);
    next[0] = INT_MAX;
    next[1] = -1;
  }
  if ((threadIdx.x & 31) == 0 && hi >= 0) {
    atomicMin(&range[0], lo);
    atomicMax(&range[1], hi);
  }
  bool pending[K];
#pragma unroll
  for (int k = 0; k < K; ++k) pending[k] = valid[k];
  for (int pass = 0; pass < claim_passes; ++pass) {
    if (cs.epoch + 1 == claim_epochs) {  // the tags would wrap: start over (uniform)
      for (int i = threadIdx.x; i < cs.width; i += blockDim.x) cs.owner[i] = 0;
      cs.epoch = 0;
      __syncthreads();
    }
    ++cs.epoch;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      if (pending[k]) atomicMax(&cs.owner[slot[k]], claim_tag(cs.epoch, first + 32 * k));
    }
    __syncthreads();
    bool any = false;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      if (pending[k] && cs.owner[slot[k]] == claim_tag(cs.epoch, first + 32 * k)) {
        vals[slot[k]] = ring.add(vals[slot[k]], p[k]);
        pending[k] = false;
      }
      any = any || pending[k];
    }
    if (!__syncthreads_or(any)) return;
    if (range[1] - range[0] < cs.entry_passes) break;
  }
  if (range[1] - range[0] >= cs.entry_passes) {
    add_by_warp_turns<K, T>(pending, slot, p, vals, ring);
    return;
  }
  const int last = range[1];
  for (int e = range[0]; e <= last; ++e) {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      if (pending[k] && entry[k] == e) {
        vals[slot[k]] = ring.add(vals[slot[k]], p[k]);
        pending[k] = false;
      }
    }
    __syncthreads();
  }
}

// The next item of a persistent block (the whole block calls it): false once
// every item is taken.
__device__ __forceinline__ bool take_item(unsigned long long* counter, unsigned long long items,
                                          unsigned long long& item) {
  __shared__ unsigned long long taken;
  __syncthreads();  // the previous item is written out; `taken` is free
  if (threadIdx.x == 0) taken = atomicAdd(counter, 1ull);
  __syncthreads();
  item = taken;
  return item < items;
}

// Item (row, segment) of the segment rows and where its entries go in C.
struct segment_item {
  std::int64_t row;
  int segment;
  index_t lo;  // first column of the segment
  offset_t begin;
  offset_t end;
};

__device__ __forceinline__ segment_item item_at(unsigned long long item, const int* __restrict__ rows, int segments,
                                                int width, const int* __restrict__ seg_start,
                                                const offset_t* __restrict__ c_off) {
  const auto i = static_cast<std::int64_t>(item / static_cast<unsigned long long>(segments));
  const int s = static_cast<int>(item - static_cast<unsigned long long>(i) * segments);
  segment_item it;
  it.row = rows[i];
  it.segment = s;
  it.lo = static_cast<index_t>(s) * width;
  const offset_t row_begin = c_off[it.row];
  it.begin = row_begin + seg_start[item];
  it.end = s + 1 < segments ? row_begin + seg_start[item + 1] : c_off[it.row + 1];
  return it;
}

// Writes the item's entries out in column order (the set bits, scanned) and
// resets the values (to `empty_value`) and bits it read. The whole block
// calls it (one bitmap word per thread, `words` of them).
template <typename T>
__device__ __forceinline__ void write_segment(const segment_item& it, unsigned* bits, int words, T* vals,
                                              T empty_value, index_t* __restrict__ c_col, T* __restrict__ c_val) {
  const int w = static_cast<int>(threadIdx.x);
  unsigned word = w < words ? bits[w] : 0u;
  long long total = 0;
  const long long incl = block_inclusive_scan(__popc(word), total);
  offset_t at = it.begin + incl - __popc(word);
  while (word != 0) {
    const int slot = w * 32 + __ffs(word) - 1;
    c_col[at] = it.lo + slot;
    c_val[at] = vals[slot];
    vals[slot] = empty_value;
    ++at;
    word &= word - 1;
  }
  if (w < words) bits[w] = 0;
}

// Numeric: the block enumerates an item's products together and adds them
// with ordered_add (entry_passes: its rule for the rounds that span few
// entries of A). seg_start holds the offsets of the segments within their rows
// (symbolic_segment_kernel), next_item the shared item counter (zero at launch).
// Rows whose numeric bin is no longer a segment bin (planner::numeric_bin) are
// a table's: skipped.
template <typename T, typename S>
__global__ void __launch_bounds__(planner::segment_block_threads)
    numeric_segment_kernel(const int* __restrict__ rows, const unsigned char* __restrict__ bins, std::int64_t n,
                           int segments, int width, const int* __restrict__ pos, const int* __restrict__ seg_start,
                           unsigned long long* __restrict__ next_item, int entry_passes,
                           const offset_t* __restrict__ a_off, const index_t* __restrict__ a_col,
                           const T* __restrict__ a_val, const offset_t* __restrict__ b_off,
                           const index_t* __restrict__ b_col, const T* __restrict__ b_val,
                           const offset_t* __restrict__ c_off, index_t* __restrict__ c_col, T* __restrict__ c_val,
                           S ring) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int g = static_cast<int>(blockDim.x);
  unsigned char* p8 = smem;
  T* vals = reinterpret_cast<T*>(p8);
  p8 += sizeof(T) * width;
  stage<T> st;
  st.b_begin = reinterpret_cast<offset_t*>(p8);
  p8 += 8 * g;
  st.incl = reinterpret_cast<long long*>(p8);
  p8 += 8 * g;
  st.a_val = reinterpret_cast<T*>(p8);
  p8 += sizeof(T) * g;
  st.scratch = nullptr;
  __shared__ int ranges[4];
  claim_state cs;
  cs.owner = reinterpret_cast<unsigned*>(p8);
  cs.ranges = ranges;
  cs.entry_passes = entry_passes;
  cs.width = width;
  p8 += sizeof(unsigned) * width;
  unsigned* bits = reinterpret_cast<unsigned*>(p8);
  const int words = width / 32;
  const T empty_value = ring.template identity<T>();
  for (int i = threadIdx.x; i < width; i += g) {
    vals[i] = empty_value;
    cs.owner[i] = 0;
  }
  if (threadIdx.x == 0) {
    ranges[0] = INT_MAX;
    ranges[1] = -1;
  }
  for (int w = threadIdx.x; w < words; w += g) bits[w] = 0;
  const unsigned long long items = static_cast<unsigned long long>(n) * static_cast<unsigned long long>(segments);
  unsigned long long item = 0;
  while (take_item(next_item, items, item)) {
    const segment_item it = item_at(item, rows, segments, width, seg_start, c_off);
    if (it.begin == it.end || !planner::is_segment_bin(bins[it.row])) continue;
    for_each_product_chunk<false, true, segment_batch, T>(
        it.row, a_off, a_col, a_val, b_off, b_col, b_val, st, segment_part(pos, segments, it.segment),
        [&](const auto& valid, const auto& col, const auto& p, const auto& entry) {
          int slot[segment_batch];
          slots_of(col, it.lo, slot);
          set_bits(bits, valid, slot);
          ordered_add<segment_batch, T>(valid, slot, p, entry, vals, cs, ring);
        },
        ring);
    __syncthreads();
    write_segment(it, bits, words, vals, empty_value, c_col, c_val);
  }
}

}  // namespace spgemm::hash::kernels
