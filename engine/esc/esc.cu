// ESC SpGEMM host dispatch (see esc.hpp for the contract and esc_kernels.cuh
// for the kernels). Bell, Dalton & Olson 2012, section 3.3: expansion, sort,
// compression, on slices of the rows of A within a bounded workspace.
//
// Phases:
//  (1) the first product of every entry of A: products per entry, exclusive
//      scan (int64), the total read back;
//  (2) slices: cub::DeviceSelect picks the rows where a slice may start
//      (kernels::piece_start), their first entry and product are read back,
//      and the host joins consecutive pieces into slices of at most S
//      products (S = slice_products(): tuning::esc_slice_products); a row
//      of more than S products is a slice of its own (a "long row", below);
//  (3) structure pass, per slice: expand the keys (row within the slice <<
//      column bits | column), radix sort them on bits(rows of the slice - 1)
//      + bits(cols of B - 1) bits, number the runs of equal keys (head flags,
//      inclusive scan), and write the distinct keys of every row into C's
//      offsets as its length;
//  (4) exclusive scan of the row lengths, nnz(C) read back, C allocated
//      exactly. Chosen over a single pass that keeps the compressed slices
//      in a buffer: that buffer would grow with nnz(C) and break the bound;
//      the price is a second expansion and sort;
//  (5) value pass, per slice: expand keys and values, radix sort of the
//      pairs, number the runs, compress. A slice's rows are contiguous in C
//      and its runs come in row-major order, so run j of the slice lands at
//      C's offset of the slice's first row + j: straight into place.
// Long rows (more than S products): by column bands of W = S / 2 columns. In
// a band, the part of every selected row of B inside the band is found by
// binary search (kernels::band_ranges_kernel) and its products are taken in
// chunks of at most S - W; each chunk is sorted behind the distinct keys (and
// partial sums) carried from the chunks before (at most W), so at most S
// items are sorted at once; the last chunk's runs are the band's part of the
// row of C. The number of runs is read back after every chunk.
// Semirings and masks: products by the job's semiring and runs summed by
// its monoid (plus_times_ops as always, else semiring_ops); with a mask
// (C<M> or C<!M>), the expansion flags the products the mask allows and
// cub::DeviceSelect::Flagged compacts them into the other buffer before the
// sort, so only they are sorted and compressed; row lengths then come from
// the run heads (kernels::row_heads_kernel), one count read back per slice
// and chunk.
// Determinism: CUB's radix sort is stable and deterministic, the scans are
// over integers, and every run is summed sequentially by one thread
// (kernels::compress_kernel) in expansion order, i.e. A's entries in order
// -- carried sums come first in their run -- after every product was rounded
// on its own: the order of the CPU reference, so the values equal it bit for
// bit (not only from run to run). No floating-point atomics, no
// cub::DeviceReduce::ReduceByKey (its decoupled look-back may group a run
// that spans tiles differently from run to run).
// Workspace (bytes; S' = min(S, products); k = key bytes: 4 where
// bits(rows - 1) + bits(cols of B - 1) <= 32, else 8; v = value bytes):
//     8 (nnz(A) + 1)                      first product of every entry of A
//   + max( CUB scan storage over nnz(A) + 1,
//          24 L + 8 + CUB select storage,  slice starts: L = min(rows + 1, 2 ceil(products / S) + 2)
//          S' (2k + 2v + 4)                keys and values double-buffered, run numbers
//          + 8 (2 len + 1)                 band ranges of the longest row of A, if a row exceeds S
//          + CUB storage )                 the largest of: the radix sorts and the run scan of S'
//                                          items, the scans of rows + 1 offsets and of len + 1 band counts
// With S = 2^24 (the default tuning) the slice part is at most 576 MiB
// (f64, 8-byte keys), 448 MiB (f64, 4-byte keys), 320 MiB (f32, 4-byte keys),
// whatever the number of products. C is allocated exactly after phase (4).
// Complexity: two expansions and two radix sorts of every product (passes of
// 8 bits over the slice's key bits), O(products) scans and compression.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/read_back.hpp"
#include "esc/esc.hpp"
#include "esc/esc_kernels.cuh"
#include "planner/statistics.hpp"
#include "spgemm/errors.hpp"

namespace spgemm::esc {
namespace {

using cuda::memory_resource;
using cuda::device_buffer;
using cuda::device_csr;
using cuda::read_back;

constexpr std::int64_t max_slice_products = std::int64_t{1} << 30;  // run numbers are int

unsigned blocks_for(std::int64_t threads) {
  const std::int64_t b = (threads + kernels::block_threads - 1) / kernels::block_threads;
  return static_cast<unsigned>(std::max<std::int64_t>(b, 1));
}

unsigned expand_blocks(std::int64_t products) {
  return blocks_for((products + kernels::items_per_lane - 1) / kernels::items_per_lane);
}

// Bits needed for the values 0 .. x (0 for x <= 0).
int bits_for(std::int64_t x) {
  int bits = 0;
  while (bits < 63 && (std::int64_t{1} << bits) <= x) ++bits;
  return bits;
}

// Key bits of the widest slice: row bits of all rows, column bits of B.
int max_key_bits(std::int64_t rows, std::int64_t b_cols) { return bits_for(rows - 1) + bits_for(b_cols - 1); }

// Calls f(K{}) with the job's key type: 32 bits where every key fits.
template <typename F>
decltype(auto) with_key_type(std::int64_t rows, std::int64_t b_cols, F&& f) {
  const int bits = max_key_bits(rows, b_cols);
  if (bits > 64) throw_bad_input("esc: row and column indices need more than 64 key bits");
  if (bits <= 32) return f(std::uint32_t{});
  return f(std::uint64_t{});
}

template <typename V>
std::size_t exclusive_scan_bytes(std::int64_t items) {
  std::size_t bytes = 0;
  SPGEMM_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<V*>(nullptr), items));
  return bytes;
}

std::size_t select_bytes(std::int64_t rows) {
  std::size_t bytes = 0;
  SPGEMM_CUDA_CHECK(cub::DeviceSelect::If(nullptr, bytes, thrust::counting_iterator<std::int64_t>(0),
                                          static_cast<std::int64_t*>(nullptr), static_cast<std::int64_t*>(nullptr),
                                          rows + 1, kernels::piece_start{}));
  return bytes;
}

// Boundaries DeviceSelect can return (see kernels::piece_start).
std::int64_t start_capacity(std::int64_t rows, std::int64_t products, std::int64_t budget) {
  return std::min(rows + 1, 2 * ((products + budget - 1) / budget) + 2);
}

// What multiply() allocates beyond C, for the sizes of a job.
struct plan_input {
  std::int64_t rows = 0;
  std::int64_t nnz_a = 0;
  std::int64_t b_cols = 0;
  std::int64_t products = 0;
  std::int64_t long_row_length = 0;  // entries of the longest row of more than S products (0: none)
  std::int64_t budget = 0;           // S
  bool masked = false;               // products compacted by a mask before the sort
};

struct workspace_plan {
  std::size_t prefix = 0;       // first product of every entry of A
  std::size_t prefix_scan = 0;  // CUB storage of its scan
  std::size_t starts = 0;       // slice starts: three arrays, the count, CUB select storage
  std::int64_t items = 0;       // S'
  std::size_t temp = 0;         // CUB storage of the slice phase
  std::size_t slices = 0;       // keys, values, run numbers, band ranges, temp

  std::size_t total() const { return prefix + std::max({prefix_scan, starts, slices}); }
};

template <typename K, typename T>
workspace_plan plan_workspace(const plan_input& in) {
  workspace_plan w;
  if (in.rows == 0 || in.nnz_a == 0) return w;
  w.prefix = static_cast<std::size_t>(in.nnz_a + 1) * sizeof(std::int64_t);
  w.prefix_scan = exclusive_scan_bytes<std::int64_t>(in.nnz_a + 1);
  if (in.products == 0) return w;
  w.starts = static_cast<std::size_t>(start_capacity(in.rows, in.products, in.budget)) * 3 * sizeof(std::int64_t) +
             sizeof(std::int64_t) + select_bytes(in.rows);
  w.items = std::min(in.budget, in.products);
  const int items = static_cast<int>(w.items);
  const int end_bit = std::max(1, max_key_bits(in.rows, in.b_cols));
  cub::DoubleBuffer<K> keys(nullptr, nullptr);
  cub::DoubleBuffer<T> vals(nullptr, nullptr);
  std::size_t sort_keys = 0;
  std::size_t sort_pairs = 0;
  std::size_t heads = 0;
  SPGEMM_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, sort_keys, keys, items, 0, end_bit));
  SPGEMM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_pairs, keys, vals, items, 0, end_bit));
  SPGEMM_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, heads, static_cast<int*>(nullptr), items));
  w.temp = std::max({sort_keys, sort_pairs, heads, exclusive_scan_bytes<offset_t>(in.rows + 1)});
  if (in.masked) {
    std::size_t select_keys = 0;
    std::size_t select_vals = 0;
    SPGEMM_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, select_keys, static_cast<K*>(nullptr),
                                                 static_cast<int*>(nullptr), static_cast<K*>(nullptr),
                                                 static_cast<std::int64_t*>(nullptr), w.items));
    SPGEMM_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, select_vals, static_cast<T*>(nullptr),
                                                 static_cast<int*>(nullptr), static_cast<T*>(nullptr),
                                                 static_cast<std::int64_t*>(nullptr), w.items));
    w.temp = std::max({w.temp, select_keys, select_vals});
  }
  std::size_t band = 0;
  if (in.long_row_length > 0) {
    band = static_cast<std::size_t>(2 * in.long_row_length + 1) * sizeof(std::int64_t);
    w.temp = std::max(w.temp, exclusive_scan_bytes<std::int64_t>(in.long_row_length + 1));
  }
  w.slices = static_cast<std::size_t>(w.items) * (2 * sizeof(K) + 2 * sizeof(T) + sizeof(int)) + band + w.temp +
             (in.masked ? sizeof(std::int64_t) : 0);
  return w;
}

template <typename T>
workspace_plan plan_for(const plan_input& in) {
  return with_key_type(in.rows, in.b_cols, [&](auto key) { return plan_workspace<decltype(key), T>(in); });
}

// A slice of rows: kernels::slice_view, and whether it is one long row.
struct slice {
  kernels::slice_view v;
  bool long_row = false;
};

// Phase (2): the slices of the product, each of at most `budget` products or
// a single long row; slices without products are left out.
std::vector<slice> find_slices(const cuda::structure_view& a, const std::int64_t* prefix, std::int64_t products,
                               std::int64_t budget, memory_resource& memory, cudaStream_t stream) {
  const std::int64_t capacity = start_capacity(a.rows, products, budget);
  const auto cap = static_cast<std::size_t>(capacity);
  device_buffer<std::int64_t> rows(memory, cap, stream);
  device_buffer<std::int64_t> entry_at(memory, cap, stream);
  device_buffer<std::int64_t> product_at(memory, cap, stream);
  device_buffer<std::int64_t> count(memory, 1, stream);
  {
    std::size_t bytes = select_bytes(a.rows);
    device_buffer<unsigned char> temp(memory, bytes, stream);
    SPGEMM_CUDA_CHECK(cub::DeviceSelect::If(temp.data(), bytes, thrust::counting_iterator<std::int64_t>(0),
                                            rows.data(), count.data(), a.rows + 1,
                                            kernels::piece_start{prefix, a.row_offsets, a.rows, budget}, stream));
  }
  kernels::boundary_gather_kernel<<<blocks_for(capacity), kernels::block_threads, 0, stream>>>(
      rows.data(), count.data(), a.row_offsets, prefix, entry_at.data(), product_at.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  const std::int64_t n = read_back(count.data(), stream);
  std::vector<std::int64_t> row(static_cast<std::size_t>(n)), entry(row.size()), product(row.size());
  const std::size_t bytes = row.size() * sizeof(std::int64_t);
  SPGEMM_CUDA_CHECK(cudaMemcpyAsync(row.data(), rows.data(), bytes, cudaMemcpyDeviceToHost, stream));
  SPGEMM_CUDA_CHECK(cudaMemcpyAsync(entry.data(), entry_at.data(), bytes, cudaMemcpyDeviceToHost, stream));
  SPGEMM_CUDA_CHECK(cudaMemcpyAsync(product.data(), product_at.data(), bytes, cudaMemcpyDeviceToHost, stream));
  SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));

  // Greedy: a piece of more than `budget` products is one row and stays
  // alone; other pieces (fewer than `budget` products each) are joined while
  // the slice keeps within the budget.
  std::vector<slice> out;
  std::size_t i = 0;
  while (i + 1 < row.size()) {
    std::size_t j = i + 1;
    if (product[j] - product[i] <= budget) {
      while (j + 1 < row.size() && product[j + 1] - product[i] <= budget) ++j;
    }
    slice s;
    s.v = {row[i], row[j], entry[i], entry[j], product[i], product[j] - product[i]};
    s.long_row = s.v.n > budget;
    if (s.long_row && s.v.r1 - s.v.r0 != 1) {
      throw error(error_kind::device_failure, "esc: a slice of several rows exceeds the budget");
    }
    if (s.v.n > 0) out.push_back(s);
    i = j;
  }
  return out;
}

// The buffers of the slice phase and the passes over the slices, over the
// semiring S, within `mask` where it has rows.
template <typename K, typename T, typename S>
class slice_runner {
 public:
  slice_runner(const cuda::csr_view<T>& a, const cuda::csr_view<T>& b, const std::int64_t* prefix,
               const workspace_plan& w, std::int64_t long_row_length, std::int64_t budget, device_csr<T>& c,
               S ring, method::mask_view<T> mask, memory_resource& memory, cudaStream_t stream,
               const cancel_token& cancel)
      : a_(a), b_(b), prefix_(prefix), budget_(budget), c_(c), ring_(ring), mask_(mask), stream_(stream),
        cancel_(cancel), col_bits_(bits_for(b.cols - 1)), temp_bytes_(w.temp) {
    const auto items = static_cast<std::size_t>(w.items);
    for (int i = 0; i < 2; ++i) {
      keys_[i] = device_buffer<K>(memory, items, stream);
      vals_[i] = device_buffer<T>(memory, items, stream);
    }
    heads_ = device_buffer<int>(memory, items, stream);
    temp_ = device_buffer<unsigned char>(memory, w.temp, stream);
    if (masked()) kept_ = device_buffer<std::int64_t>(memory, 1, stream);
    if (long_row_length > 0) {
      band_first_ = device_buffer<std::int64_t>(memory, static_cast<std::size_t>(long_row_length), stream);
      band_prefix_ =
          device_buffer<std::int64_t>(memory, static_cast<std::size_t>(long_row_length) + 1, stream);
    }
  }

  // Phase (3) for one slice: the lengths of its rows of C into C's offsets.
  void structure(const slice& s) {
    if (s.long_row) {
      const std::int64_t nnz = long_row<false>(s.v);
      SPGEMM_CUDA_CHECK(cudaMemcpyAsync(c_.row_offsets.data() + s.v.r0, &nnz, sizeof nnz, cudaMemcpyHostToDevice,
                                        stream_));
      SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));  // `nnz` leaves scope
      return;
    }
    expand<false>(s.v);
    cub::DoubleBuffer<K> keys(keys_[0].data(), keys_[1].data());
    std::int64_t n = s.v.n;
    if (masked()) {
      keep(keys_[0].data(), keys_[1].data(), n);
      n = kept();
      keys = cub::DoubleBuffer<K>(keys_[1].data(), keys_[0].data());
    }
    if (n == 0) return;
    std::size_t bytes = temp_bytes_;
    SPGEMM_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp_.data(), bytes, keys, static_cast<int>(n), 0,
                                                     end_bit(s.v), stream_));
    number_runs(keys.Current(), n);
    if (masked()) {
      kernels::row_heads_kernel<K><<<blocks_for(n), kernels::block_threads, 0, stream_>>>(
          keys.Current(), n, col_bits_, c_.row_offsets.data() + s.v.r0);
    } else {
      kernels::row_nnz_kernel<<<blocks_for(s.v.r1 - s.v.r0), kernels::block_threads, 0, stream_>>>(
          s.v, a_.row_offsets, prefix_, heads_.data(), c_.row_offsets.data());
    }
    SPGEMM_CUDA_CHECK_LAUNCH();
  }

  // Phase (5) for one slice: its rows of C, in place.
  void values(const slice& s) {
    if (s.long_row) {
      long_row<true>(s.v);
      return;
    }
    expand<true>(s.v);
    cub::DoubleBuffer<K> keys(keys_[0].data(), keys_[1].data());
    cub::DoubleBuffer<T> vals(vals_[0].data(), vals_[1].data());
    std::int64_t n = s.v.n;
    if (masked()) {
      keep(keys_[0].data(), keys_[1].data(), n);
      keep(vals_[0].data(), vals_[1].data(), n);
      n = kept();
      keys = cub::DoubleBuffer<K>(keys_[1].data(), keys_[0].data());
      vals = cub::DoubleBuffer<T>(vals_[1].data(), vals_[0].data());
    }
    if (n == 0) return;
    std::size_t bytes = temp_bytes_;
    SPGEMM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp_.data(), bytes, keys, vals, static_cast<int>(n), 0,
                                                      end_bit(s.v), stream_));
    number_runs(keys.Current(), n);
    const K col_mask = (K{1} << col_bits_) - 1;
    kernels::compress_kernel<K, T, false><<<blocks_for(n), kernels::block_threads, 0, stream_>>>(
        keys.Current(), vals.Current(), heads_.data(), n, col_mask, 0, c_.row_offsets.data() + s.v.r0, 0, nullptr,
        nullptr, c_.col_indices.data(), c_.values.data(), ring_);
    SPGEMM_CUDA_CHECK_LAUNCH();
  }

  // The scan of C's row lengths into offsets (phase 4), on the slice
  // phase's CUB storage.
  void scan_offsets() {
    std::size_t bytes = temp_bytes_;
    SPGEMM_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp_.data(), bytes, c_.row_offsets.data(), c_.rows + 1, stream_));
  }

 private:
  int end_bit(const kernels::slice_view& v) const { return std::max(1, bits_for(v.r1 - v.r0 - 1) + col_bits_); }
  bool masked() const { return mask_.offsets != nullptr; }
  // Where the expansion flags the products the mask allows.
  int* keep_flags() { return masked() ? heads_.data() : nullptr; }

  template <bool kValues>
  void expand(const kernels::slice_view& v) {
    kernels::expand_rows_kernel<K, T, kValues><<<expand_blocks(v.n), kernels::block_threads, 0, stream_>>>(
        v, a_.row_offsets, a_.col_indices, a_.values, b_.row_offsets, b_.col_indices, b_.values, prefix_, col_bits_,
        keys_[0].data(), kValues ? vals_[0].data() : nullptr, ring_, mask_, keep_flags());
    SPGEMM_CUDA_CHECK_LAUNCH();
  }

  // The n items of `in` the mask allows (flagged in heads_), compacted into
  // `out`; their number into kept_.
  template <typename V>
  void keep(const V* in, V* out, std::int64_t n) {
    std::size_t bytes = temp_bytes_;
    SPGEMM_CUDA_CHECK(
        cub::DeviceSelect::Flagged(temp_.data(), bytes, in, heads_.data(), out, kept_.data(), n, stream_));
  }
  std::int64_t kept() { return read_back(kept_.data(), stream_); }

  // heads_[i] = number of distinct keys among sorted keys 0 .. i.
  void number_runs(const K* sorted, std::int64_t n) {
    kernels::head_flags_kernel<K><<<blocks_for(n), kernels::block_threads, 0, stream_>>>(sorted, n, heads_.data());
    SPGEMM_CUDA_CHECK_LAUNCH();
    std::size_t bytes = temp_bytes_;
    SPGEMM_CUDA_CHECK(
        cub::DeviceScan::InclusiveSum(temp_.data(), bytes, heads_.data(), static_cast<int>(n), stream_));
  }

  // One long row by column bands (see the file comment). Structure pass
  // (kValues = false): returns the row's length in C. Value pass: writes the
  // row into C and returns its length.
  template <bool kValues>
  std::int64_t long_row(const kernels::slice_view& v) {
    const std::int64_t length = v.k1 - v.k0;
    const std::int64_t width = budget_ / 2;
    const std::int64_t chunk = budget_ - width;
    std::int64_t row_nnz = 0;
    for (std::int64_t c0 = 0; c0 < b_.cols; c0 += width) {
      const std::int64_t c1 = std::min(b_.cols, c0 + width);
      kernels::band_ranges_kernel<<<blocks_for(length + 1), kernels::block_threads, 0, stream_>>>(
          a_.col_indices + v.k0, length, b_.row_offsets, b_.col_indices, static_cast<index_t>(c0),
          static_cast<index_t>(c1), band_first_.data(), band_prefix_.data());
      SPGEMM_CUDA_CHECK_LAUNCH();
      std::size_t bytes = temp_bytes_;
      SPGEMM_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp_.data(), bytes, band_prefix_.data(), length + 1, stream_));
      const std::int64_t band_products = read_back(band_prefix_.data() + length, stream_);
      const int band_bits = std::max(1, bits_for(c1 - c0 - 1));
      std::int64_t carried = 0;
      int in = 0;  // the buffer pair holding the carried runs and the next chunk
      for (std::int64_t q = 0; q < band_products; q += chunk) {
        cancel_.throw_if_cancelled();
        kernels::band_chunk ch;
        ch.length = length;
        ch.q0 = q;
        ch.n = std::min(chunk, band_products - q);
        ch.carried = carried;
        ch.c0 = static_cast<index_t>(c0);
        ch.row = v.r0;
        std::int64_t n = carried + ch.n;
        if (!masked()) {
          kernels::expand_band_kernel<K, T, kValues><<<expand_blocks(ch.n), kernels::block_threads, 0, stream_>>>(
              ch, a_.values + v.k0, b_.col_indices, b_.values, band_first_.data(), band_prefix_.data(),
              keys_[in].data(), kValues ? vals_[in].data() : nullptr, ring_, mask_, nullptr);
          SPGEMM_CUDA_CHECK_LAUNCH();
        } else {  // expanded into the free buffers, the kept ones after the carried runs
          kernels::band_chunk fresh = ch;
          fresh.carried = 0;
          kernels::expand_band_kernel<K, T, kValues><<<expand_blocks(ch.n), kernels::block_threads, 0, stream_>>>(
              fresh, a_.values + v.k0, b_.col_indices, b_.values, band_first_.data(), band_prefix_.data(),
              keys_[1 - in].data(), kValues ? vals_[1 - in].data() : nullptr, ring_, mask_, heads_.data());
          SPGEMM_CUDA_CHECK_LAUNCH();
          keep(keys_[1 - in].data(), keys_[in].data() + carried, ch.n);
          if constexpr (kValues) keep(vals_[1 - in].data(), vals_[in].data() + carried, ch.n);
          n = carried + kept();
          if (n == 0) continue;  // nothing carried, nothing kept: the next chunk starts afresh
        }
        cub::DoubleBuffer<K> keys(keys_[in].data(), keys_[1 - in].data());
        cub::DoubleBuffer<T> vals(vals_[in].data(), vals_[1 - in].data());
        bytes = temp_bytes_;
        if constexpr (kValues) {
          SPGEMM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp_.data(), bytes, keys, vals, static_cast<int>(n), 0,
                                                            band_bits, stream_));
        } else {
          SPGEMM_CUDA_CHECK(
              cub::DeviceRadixSort::SortKeys(temp_.data(), bytes, keys, static_cast<int>(n), 0, band_bits, stream_));
        }
        number_runs(keys.Current(), n);
        const std::int64_t runs = read_back(heads_.data() + n - 1, stream_);
        const bool last = q + ch.n >= band_products;
        const int sorted = keys.selector == 0 ? in : 1 - in;
        if (!last) {  // carry the runs into the other buffers, ahead of the next chunk
          if constexpr (kValues) {
            kernels::compress_kernel<K, T, true><<<blocks_for(n), kernels::block_threads, 0, stream_>>>(
                keys.Current(), vals.Current(), heads_.data(), n, ~K{0}, 0, nullptr, 0, keys_[1 - sorted].data(),
                vals_[1 - sorted].data(), nullptr, nullptr, ring_);
          } else {
            kernels::unique_keys_kernel<K><<<blocks_for(n), kernels::block_threads, 0, stream_>>>(
                keys.Current(), heads_.data(), n, keys_[1 - sorted].data());
          }
          SPGEMM_CUDA_CHECK_LAUNCH();
          carried = runs;
          in = 1 - sorted;
          continue;
        }
        if constexpr (kValues) {
          kernels::compress_kernel<K, T, false><<<blocks_for(n), kernels::block_threads, 0, stream_>>>(
              keys.Current(), vals.Current(), heads_.data(), n, ~K{0}, static_cast<index_t>(c0),
              c_.row_offsets.data() + v.r0, row_nnz, nullptr, nullptr, c_.col_indices.data(), c_.values.data(),
              ring_);
          SPGEMM_CUDA_CHECK_LAUNCH();
        }
        row_nnz += runs;
      }
    }
    return row_nnz;
  }

  const cuda::csr_view<T>& a_;
  const cuda::csr_view<T>& b_;
  const std::int64_t* prefix_;
  std::int64_t budget_;
  device_csr<T>& c_;
  S ring_;
  method::mask_view<T> mask_;
  cudaStream_t stream_;
  const cancel_token& cancel_;
  int col_bits_;
  std::size_t temp_bytes_;
  device_buffer<K> keys_[2];
  device_buffer<T> vals_[2];
  device_buffer<int> heads_;
  device_buffer<unsigned char> temp_;
  device_buffer<std::int64_t> band_first_;
  device_buffer<std::int64_t> band_prefix_;
  device_buffer<std::int64_t> kept_;
};

// The slice budget S: tuning::esc_slice_products, clamped to 2 .. 2^30.
std::int64_t slice_products(const tuning& t) {
  return std::clamp<std::int64_t>(t.esc_slice_products, 2, max_slice_products);
}

// Upper bound of what run() allocates (exact = false). A mask that allows
// (C<M>) bounds C by its entries.
memory_estimate estimate_from(const planner::job_stats& s, std::size_t value_bytes, const tuning& t,
                              const method::job_mask& mask) {
  plan_input in;
  in.masked = mask.present();
  in.rows = s.rows;
  in.nnz_a = s.nnz_a;
  in.b_cols = s.b_cols;
  in.products = s.products;
  in.budget = slice_products(t);
  in.long_row_length = s.max_row_products > in.budget ? s.max_row_length : 0;
  const workspace_plan w = value_bytes == sizeof(double) ? plan_for<double>(in) : plan_for<float>(in);
  memory_estimate e;
  e.exact = false;
  e.products = s.products;
  const std::int64_t bound = mask.present() && !mask.complement ? std::min(s.nnz_c_bound, mask.m.nnz) : s.nnz_c_bound;
  e.output_bytes = cuda::csr_bytes(s.rows, bound, value_bytes);
  e.nnz_bound = bound;
  e.workspace_bytes = w.total();
  e.method = "esc";
  if (s.products > in.budget) e.method += " (slices of " + std::to_string(in.budget) + " products)";
  return e;
}

}  // namespace

memory_estimate estimate(const method::job& job) {
  return estimate_from(planner::compute_stats(job.a, job.b, job.value_bytes, job.tuning, job.memory, job.stream),
                       job.value_bytes, job.tuning, job.mask);
}

template <typename T>
device_csr<T> run(const method::job& job, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b) {
  memory_resource& memory = job.memory;
  const cudaStream_t stream = job.stream;
  const cancel_token& cancel = job.cancel;
  const std::int64_t m = a.rows;
  device_csr<T> c = cuda::with_zero_offsets<T>(m, b.cols, memory, stream);
  auto finish_empty = [&] {
    cuda::allocate_entries(c, 0, memory, stream);
    return std::move(c);
  };
  if (m == 0 || a.nnz == 0) return finish_empty();

  // (1) The first product of every entry of A.
  device_buffer<std::int64_t> prefix(memory, static_cast<std::size_t>(a.nnz) + 1, stream);
  kernels::entry_products_kernel<<<blocks_for(a.nnz + 1), kernels::block_threads, 0, stream>>>(
      a.nnz, a.col_indices, b.row_offsets, prefix.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  {
    std::size_t bytes = exclusive_scan_bytes<std::int64_t>(a.nnz + 1);
    device_buffer<unsigned char> temp(memory, bytes, stream);
    SPGEMM_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.data(), bytes, prefix.data(), a.nnz + 1, stream));
  }
  const std::int64_t products = read_back(prefix.data() + a.nnz, stream);
  if (products == 0) return finish_empty();
  cancel.throw_if_cancelled();

  // (2) Slices.
  const std::int64_t budget = slice_products(job.tuning);
  const std::vector<slice> slices = find_slices(a.structure(), prefix.data(), products, budget, memory, stream);
  plan_input in;
  in.rows = m;
  in.nnz_a = a.nnz;
  in.b_cols = b.cols;
  in.products = products;
  in.budget = budget;
  in.masked = job.mask.present();
  for (const slice& s : slices)
    if (s.long_row) in.long_row_length = std::max(in.long_row_length, s.v.k1 - s.v.k0);
  cancel.throw_if_cancelled();

  with_key_type(m, b.cols, [&](auto key) { ops::with_semiring(job.semiring, [&](auto ring) {
    using K = decltype(key);
    const workspace_plan w = plan_workspace<K, T>(in);
    slice_runner<K, T, decltype(ring)> run(a, b, prefix.data(), w, in.long_row_length, budget, c, ring,
                                           method::mask_view_of<T>(job.mask), memory, stream, cancel);
    // (3) Structure pass.
    for (const slice& s : slices) {
      cancel.throw_if_cancelled();
      run.structure(s);
    }
    // (4) C's offsets, exact allocation.
    run.scan_offsets();
    c.nnz = read_back(c.row_offsets.data() + m, stream);
    cancel.throw_if_cancelled();
    cuda::allocate_entries(c, c.nnz, memory, stream);
    // (5) Value pass.
    for (const slice& s : slices) {
      cancel.throw_if_cancelled();
      run.values(s);
    }
  }); });
  return c;
}

template device_csr<float> run(const method::job&, const cuda::csr_view<float>&, const cuda::csr_view<float>&);
template device_csr<double> run(const method::job&, const cuda::csr_view<double>&, const cuda::csr_view<double>&);

}  // namespace spgemm::esc
