// bhSPARSE host dispatch (see bhsparse.hpp for the contract,
// bhsparse_kernels.cuh for the stages and their kernels, bhsparse_tuning.hpp
// for the bins).
//
// Stages: (1) the bins kernel: every row's upper bound, bin and size in C~,
// the counters read back (rows per bin, nnz(C~), the long rows' lists at
// most, the bound of nnz(C)); (2) the rows sorted by bin (CUB radix sort on
// the bin byte, stable: rows of a bin in order), C~'s offsets (CUB scan)
// and C~ allocated; (3) a launch per bin group: bin 1, the heap bins (one
// launch, a thread per row), each ESC bin (a block per row), then the long
// rows: merge rounds of capacity 256, 512, ... up to the device's largest
// shared list, each round's lists allocated for the rows it takes (the rows
// a round checkpoints are counted and read back: the host sizes the next
// round), and a global round for what is left (level-2 lists of 2 x bound
// entries each); or, with tuning::bhsparse_segmented_merge, the long rows by
// segmented merge (segmerge.cuh); (4) C's offsets from the nnz every stage
// wrote (CUB scan), C allocated exactly, rows copied from C~ and the lists.
// Workspace (bytes; n = rows of A, v = value bytes, L = long rows):
//     8 counter::count + n (bins) + 8 (n + 1) (C~ offsets)
//   + 9 n + CUB radix sort storage (the sort: keys out, rows in and out)
//   + nnz(C~) (4 + v)
//   + L (sizeof(long_row) + 8 + 8) + 4 (state, two queues, the round count)
//   + the long rows' lists: counter::long_area entries (4 + v) and L + 1
//     offsets of the global round (merge path), or segmerge.cuh's workspace
//   + the larger of the CUB scans' storage
// all of it held at once at worst (stage 4 allocates C beside it).
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "bhsparse/bhsparse.hpp"
#include "bhsparse/bhsparse_kernels.cuh"
#include "bhsparse/bhsparse_tuning.hpp"
#include "bhsparse/segmerge_kernels.cuh"
#include "cuda/cuda_check.hpp"
#include "cuda/device_facts.hpp"
#include "cuda/read_back.hpp"
#include "cuda/scan.cuh"
#include "cuda/segmented_merge.cuh"
#include "spgemm/errors.hpp"

namespace spgemm::bhsparse {
namespace {

using cuda::device_buffer;
using cuda::device_csr;
using cuda::memory_resource;
using kernels::ull;

unsigned blocks_for(std::int64_t threads, int per_block) {
  return static_cast<unsigned>(std::max<std::int64_t>((threads + per_block - 1) / per_block, 1));
}

// Lanes per row of the bins kernel: the power of two at or above A's mean row, 1 .. 32.
int lanes_for(std::int64_t rows, std::int64_t nnz) {
  int lanes = 1;
  while (lanes < 32 && static_cast<std::int64_t>(lanes) * rows < nnz) lanes *= 2;
  return lanes;
}

int capacity_max_for(std::size_t value_bytes) {
  return merge_capacity_max(cuda::current_device_facts().max_shared, value_bytes);
}

std::size_t sort_bytes(std::int64_t rows) {
  std::size_t bytes = 0;
  SPGEMM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, static_cast<const unsigned char*>(nullptr),
                                                    static_cast<unsigned char*>(nullptr), static_cast<const int*>(nullptr),
                                                    static_cast<int*>(nullptr), static_cast<int>(rows), 0, 6));
  return bytes;
}

// Stage (1)'s counters.
struct counts {
  std::array<std::int64_t, bin_count> hist{};
  std::int64_t tilde = 0;
  std::int64_t long_area = 0;
  std::int64_t bound = 0;
  std::int64_t products = 0;
  std::int64_t max_long = 0;
  std::int64_t long_bound = 0;
  std::int64_t long_entries = 0;
  std::int64_t long_products = 0;
  std::int64_t rows_of(int first, int last) const {  // bins [first, last]
    std::int64_t n = 0;
    for (int b = first; b <= last; ++b) n += hist[static_cast<std::size_t>(b)];
    return n;
  }
};

counts counts_of(const ull* host) {
  counts c;
  for (int b = 0; b < bin_count; ++b) c.hist[static_cast<std::size_t>(b)] = static_cast<std::int64_t>(host[kernels::counter::hist + b]);
  c.tilde = static_cast<std::int64_t>(host[kernels::counter::tilde]);
  c.long_area = static_cast<std::int64_t>(host[kernels::counter::long_area]);
  c.bound = static_cast<std::int64_t>(host[kernels::counter::bound]);
  c.products = static_cast<std::int64_t>(host[kernels::counter::products]);
  c.max_long = static_cast<std::int64_t>(host[kernels::counter::max_long]);
  c.long_bound = static_cast<std::int64_t>(host[kernels::counter::long_bound]);
  c.long_entries = static_cast<std::int64_t>(host[kernels::counter::long_entries]);
  c.long_products = static_cast<std::int64_t>(host[kernels::counter::long_products]);
  return c;
}

void launch_bins(const cuda::structure_view& a, const cuda::structure_view& b, int capacity_max, unsigned char* bins,
                 offset_t* tilde, offset_t* c_len, ull* counters, cudaStream_t stream) {
  if (a.rows == 0) return;
  const int lanes = lanes_for(a.rows, a.nnz);
  kernels::bins_kernel<<<blocks_for(a.rows * lanes, kernels::helper_threads), kernels::helper_threads, 0, stream>>>(
      a.rows, lanes, a.row_offsets, a.col_indices, b.row_offsets, b.cols, capacity_max, bins, tilde, c_len, counters);
  SPGEMM_CUDA_CHECK_LAUNCH();
}

// The segmented merge's slice (bhsparse_tuning.hpp) for stage (1)'s counts.
std::int64_t slice_products(const tuning& t, const counts& c, std::int64_t b_longest_row) {
  return segmerge_slice(t.segmerge_slice_products, c.max_long, b_longest_row, c.long_products);
}

// The scans of a slice: its run heads (int) and its sub-segment starts.
std::size_t segmerge_scan_bytes(std::int64_t slice, std::int64_t subs) {
  return std::max(cuda::inclusive_scan_bytes<int>(slice), cuda::exclusive_scan_bytes<std::int64_t>(subs));
}

// The segmented merge's buffers for the long rows (segmerge_long_rows).
std::size_t segmerge_bytes(const counts& c, std::int64_t slice, std::size_t value_bytes) {
  const auto n_long = static_cast<std::size_t>(c.hist[long_bin]);
  const auto subs = static_cast<std::size_t>(c.long_entries) + 2;
  const auto s = static_cast<std::size_t>(slice);
  std::size_t w = 8 * (2 * n_long + 3 * (n_long + 1));  // products and entries; res_at, seg, seg_pos
  w += 12 * subs;                                         // sub-segment starts and segments
  w += s * (2 * (4 + value_bytes) + 4);                   // keys and values twice, run heads
  w += static_cast<std::size_t>(c.long_bound) * (4 + value_bytes);  // the long rows' results
  w += segmerge_scan_bytes(slice, static_cast<std::int64_t>(subs));
  return w;
}

// Bytes run() holds at most beside C, for the counts of stage (1); the long
// rows by merge path, or (segmented) by segmented merge in slices of `slice`
// products.
std::size_t workspace_bytes(const counts& c, std::int64_t rows, std::size_t value_bytes, bool segmented,
                            std::int64_t slice) {
  const auto n = static_cast<std::size_t>(rows);
  const auto entry = 4 + value_bytes;
  const auto long_rows = static_cast<std::size_t>(c.hist[long_bin]);
  std::size_t w = 8 * kernels::counter::count + n + 8 * (n + 1);
  w += 9 * n + sort_bytes(rows);
  w += static_cast<std::size_t>(c.tilde) * entry;
  w += long_rows * sizeof(kernels::long_row<double>);
  if (segmented) {
    if (long_rows > 0) w += segmerge_bytes(c, slice, value_bytes);  // run() allocates it for long rows only
  } else {
    w += long_rows * 8 + 4;  // two queues, the round's count
    w += static_cast<std::size_t>(c.long_area) * entry + 8 * (long_rows + 1);
    w += cuda::exclusive_scan_bytes<std::int64_t>(static_cast<std::int64_t>(long_rows) + 1);
  }
  w += cuda::exclusive_scan_bytes<offset_t>(rows + 1);
  return w;
}

template <typename T>
void launch_heap_bins(const int* rows, std::int64_t n, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b,
                      const offset_t* tilde, index_t* ct_col, T* ct_val, offset_t* c_len, cudaStream_t stream) {
  if (n == 0) return;
  const auto kernel = kernels::heap_kernel<T>;
  cuda::allow_max_dynamic_shared(kernel);
  const std::size_t shared = static_cast<std::size_t>(heap_block_threads) * heap_max * (sizeof(T) + sizeof(index_t));
  kernel<<<blocks_for(n, heap_block_threads), heap_block_threads, shared, stream>>>(
      rows, n, a.row_offsets, a.col_indices, a.values, b.row_offsets, b.col_indices, b.values, tilde, ct_col, ct_val,
      c_len);
  SPGEMM_CUDA_CHECK_LAUNCH();
}

template <typename T>
void launch_esc_bin(int bin, const int* rows, std::int64_t n, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b,
                    const offset_t* tilde, index_t* ct_col, T* ct_val, offset_t* c_len, cudaStream_t stream) {
  if (n == 0) return;
  const int size = esc_size(bin);
  const int threads = esc_threads(bin);
  const std::size_t shared = static_cast<std::size_t>(size) * (sizeof(T) + sizeof(index_t)) +
                             static_cast<std::size_t>(threads) * (2 * sizeof(long long) + sizeof(T));
  kernels::esc_kernel<T><<<static_cast<unsigned>(n), threads, shared, stream>>>(
      rows, size, a.row_offsets, a.col_indices, a.values, b.row_offsets, b.col_indices, b.values, tilde, ct_col,
      ct_val, c_len);
  SPGEMM_CUDA_CHECK_LAUNCH();
}

// The long rows' lists: device buffers kept until stage (4) copies them.
template <typename T>
struct long_lists {
  device_buffer<kernels::long_row<T>> state;
  std::vector<device_buffer<index_t>> cols;
  std::vector<device_buffer<T>> vals;
  std::int64_t n = 0;
};

// The long rows by merge path: rounds of growing capacity, then the global round.
template <typename T>
void merge_long_rows(long_lists<T>& lists, const int* rows, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b,
                     offset_t* c_len, memory_resource& memory, cudaStream_t stream, const cancel_token& cancel) {
  const std::int64_t n_long = lists.n;
  const int capacity_max = capacity_max_for(sizeof(T));
  device_buffer<int> queues(memory, 2 * static_cast<std::size_t>(n_long), stream);
  device_buffer<unsigned> next_count(memory, 1, stream);
  int* queue = queues.data();
  int* next = queues.data() + n_long;
  kernels::long_rows_kernel<T><<<blocks_for(n_long, kernels::helper_threads), kernels::helper_threads, 0, stream>>>(
      rows, n_long, a.row_offsets, c_len, b.cols, lists.state.data(), queue);
  SPGEMM_CUDA_CHECK_LAUNCH();
  std::int64_t n = n_long;
  for (int capacity = first_merge_capacity; n > 0 && capacity <= capacity_max; capacity *= 2) {
    cancel.throw_if_cancelled();
    const auto slots = static_cast<std::size_t>(n) * static_cast<std::size_t>(capacity);
    lists.cols.emplace_back(memory, slots, stream);
    lists.vals.emplace_back(memory, slots, stream);
    SPGEMM_CUDA_CHECK(cudaMemsetAsync(next_count.data(), 0, sizeof(unsigned), stream));
    const auto kernel = kernels::merge_round_kernel<T>;
    cuda::allow_max_dynamic_shared(kernel);
    kernel<<<static_cast<unsigned>(n), merge_threads(capacity), merge_shared_bytes(capacity, sizeof(T)), stream>>>(
        lists.state.data(), queue, capacity, lists.cols.back().data(), lists.vals.back().data(), next,
        next_count.data(), a.row_offsets, a.col_indices, a.values, b.row_offsets, b.col_indices, b.values, c_len);
    SPGEMM_CUDA_CHECK_LAUNCH();
    n = cuda::read_back(next_count.data(), stream);
    std::swap(queue, next);
  }
  if (n == 0) return;
  // The global round: level-2 lists of 2 x bound entries per row.
  cancel.throw_if_cancelled();
  device_buffer<std::int64_t> l2_at(memory, static_cast<std::size_t>(n) + 1, stream);
  kernels::l2_sizes_kernel<T><<<blocks_for(n + 1, kernels::helper_threads), kernels::helper_threads, 0, stream>>>(
      lists.state.data(), queue, n, l2_at.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
  cuda::exclusive_scan_in_place(l2_at.data(), n + 1, memory, stream);
  const std::int64_t total = cuda::read_back(l2_at.data() + n, stream);
  lists.cols.emplace_back(memory, static_cast<std::size_t>(total), stream);
  lists.vals.emplace_back(memory, static_cast<std::size_t>(total), stream);
  const auto kernel = kernels::merge_global_kernel<T>;
  cuda::allow_max_dynamic_shared(kernel);
  kernel<<<static_cast<unsigned>(n), merge_threads(capacity_max), merge_shared_bytes(capacity_max, sizeof(T)),
           stream>>>(lists.state.data(), queue, capacity_max, l2_at.data(), lists.cols.back().data(),
                     lists.vals.back().data(), a.row_offsets, a.col_indices, a.values, b.row_offsets, b.col_indices,
                     b.values, c_len);
  SPGEMM_CUDA_CHECK_LAUNCH();
}

int passes_for(std::int64_t most_sub_segments) {
  int passes = 0;
  while ((std::int64_t{1} << passes) < most_sub_segments) ++passes;
  return passes;
}

// The long rows by segmented merge (segmerge_kernels.cuh): slices of at most
// `slice` products, a row of more alone in chunks with its result carried.
template <typename T>
void segmerge_long_rows(long_lists<T>& lists, const int* rows, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b,
                        offset_t* c_len, std::int64_t slice, memory_resource& memory, cudaStream_t stream,
                        const cancel_token& cancel) {
  const std::int64_t n = lists.n;
  const auto un = static_cast<std::size_t>(n);
  // Every long row's products and entries, on the host.
  std::vector<std::int64_t> products(un);
  std::vector<std::int64_t> entries(un);
  {
    device_buffer<std::int64_t> shape(memory, 2 * un, stream);
    kernels::long_shape_kernel<<<blocks_for(n, kernels::helper_threads), kernels::helper_threads, 0, stream>>>(
        rows, n, a.row_offsets, c_len, shape.data(), shape.data() + n);
    SPGEMM_CUDA_CHECK_LAUNCH();
    SPGEMM_CUDA_CHECK(cudaMemcpyAsync(products.data(), shape.data(), un * 8, cudaMemcpyDeviceToHost, stream));
    SPGEMM_CUDA_CHECK(cudaMemcpyAsync(entries.data(), shape.data() + n, un * 8, cudaMemcpyDeviceToHost, stream));
    SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  // Each row's place in the results: its bound min(u, cols of B).
  std::vector<std::int64_t> res_at(un + 1, 0);
  std::int64_t all_entries = 0;
  for (std::size_t i = 0; i < un; ++i) {
    res_at[i + 1] = res_at[i] + std::min(products[i], b.cols);
    all_entries += entries[i];
  }
  const auto results = static_cast<std::size_t>(res_at[un]);
  lists.cols.emplace_back(memory, results, stream);
  lists.vals.emplace_back(memory, results, stream);
  index_t* res_cols = lists.cols.back().data();
  T* res_vals = lists.vals.back().data();
  const auto subs = static_cast<std::size_t>(all_entries) + 2;
  const auto items = static_cast<std::size_t>(slice);
  device_buffer<std::int64_t> index(memory, 3 * (un + 1), stream);  // res_at, seg, seg_pos
  std::int64_t* res_at_dev = index.data();
  std::int64_t* seg = index.data() + n + 1;
  std::int64_t* seg_pos = index.data() + 2 * (n + 1);
  SPGEMM_CUDA_CHECK(cudaMemcpyAsync(res_at_dev, res_at.data(), (un + 1) * 8, cudaMemcpyHostToDevice, stream));
  device_buffer<std::int64_t> sub(memory, subs, stream);
  device_buffer<int> seg_of(memory, subs, stream);
  device_buffer<index_t> keys0(memory, items, stream);
  device_buffer<index_t> keys1(memory, items, stream);
  device_buffer<T> vals0(memory, items, stream);
  device_buffer<T> vals1(memory, items, stream);
  device_buffer<int> runs(memory, items, stream);
  const std::size_t temp_bytes = segmerge_scan_bytes(slice, static_cast<std::int64_t>(subs));
  device_buffer<unsigned char> temp(memory, temp_bytes, stream);
  index_t* const keys[2] = {keys0.data(), keys1.data()};
  T* const vals[2] = {vals0.data(), vals1.data()};

  // One segmented-merge computation: v's segments, `q` sub-segments (their
  // segment starts already in seg), `count` products, `passes` passes.
  auto merge = [&](const kernels::slice_view& v, std::int64_t q, std::int64_t count, int passes,
                   const index_t* carry_cols, const T* carry_vals) {
    kernels::sub_lengths_kernel<<<blocks_for(v.segments * 32, kernels::helper_threads), kernels::helper_threads, 0,
                                  stream>>>(v, a.row_offsets, a.col_indices, b.row_offsets, sub.data(), seg_of.data());
    SPGEMM_CUDA_CHECK_LAUNCH();
    std::size_t bytes = temp_bytes;
    SPGEMM_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.data(), bytes, sub.data(), q + 1, stream));
    kernels::segment_positions_kernel<<<blocks_for(v.segments + 1, kernels::helper_threads), kernels::helper_threads,
                                        0, stream>>>(v, sub.data(), seg_pos);
    SPGEMM_CUDA_CHECK_LAUNCH();
    if (count == 0) {
      SPGEMM_CUDA_CHECK(cudaMemsetAsync(runs.data(), 0, sizeof(int), stream));
    } else {
      kernels::expand_kernel<T><<<blocks_for(count, kernels::helper_threads), kernels::helper_threads, 0, stream>>>(
          v, count, sub.data(), q, seg_of.data(), a.row_offsets, a.col_indices, a.values, b.row_offsets,
          b.col_indices, b.values, carry_cols, carry_vals, keys[0], vals[0]);
      SPGEMM_CUDA_CHECK_LAUNCH();
      const int in = cuda::segmented_merge(keys, vals, count, sub.data(), q, seg_of.data(), v.seg, passes, stream);
      kernels::heads_kernel<<<blocks_for(count, kernels::helper_threads), kernels::helper_threads, 0, stream>>>(
          count, v.segments, seg_pos, keys[in], runs.data());
      SPGEMM_CUDA_CHECK_LAUNCH();
      bytes = temp_bytes;
      SPGEMM_CUDA_CHECK(cub::DeviceScan::InclusiveSum(temp.data(), bytes, runs.data(), count, stream));
      kernels::compress_kernel<T><<<blocks_for(count, kernels::helper_threads), kernels::helper_threads, 0, stream>>>(
          v, count, seg_pos, keys[in], vals[in], runs.data(), res_cols, res_vals);
      SPGEMM_CUDA_CHECK_LAUNCH();
    }
    kernels::segment_nnz_kernel<<<blocks_for(v.segments, kernels::helper_threads), kernels::helper_threads, 0,
                                  stream>>>(v, seg_pos, runs.data(), c_len);
    SPGEMM_CUDA_CHECK_LAUNCH();
  };

  std::vector<std::int64_t> host_seg;
  std::size_t i = 0;
  while (i < un) {
    cancel.throw_if_cancelled();
    kernels::slice_view v;
    v.rows = rows + i;
    v.res_at = res_at_dev + i;
    v.seg = seg;
    if (products[i] <= slice) {  // rows one after another while their products fit
      std::size_t k = 0;
      std::int64_t count = 0;
      std::int64_t most = 0;
      host_seg.assign(1, 0);
      while (i + k < un && products[i + k] <= slice && count + products[i + k] <= slice) {
        count += products[i + k];
        most = std::max(most, entries[i + k]);
        host_seg.push_back(host_seg.back() + entries[i + k]);
        ++k;
      }
      v.segments = static_cast<std::int64_t>(k);
      SPGEMM_CUDA_CHECK(cudaMemcpyAsync(seg, host_seg.data(), host_seg.size() * 8, cudaMemcpyHostToDevice, stream));
      merge(v, host_seg.back(), count, passes_for(most), nullptr, nullptr);
      i += k;
      continue;
    }
    // A row of more than `slice` products: chunks of its entries, the result carried.
    int row = 0;
    SPGEMM_CUDA_CHECK(cudaMemcpyAsync(&row, rows + i, sizeof row, cudaMemcpyDeviceToHost, stream));
    SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
    offset_t first = 0;
    SPGEMM_CUDA_CHECK(cudaMemcpyAsync(&first, a.row_offsets + row, sizeof first, cudaMemcpyDeviceToHost, stream));
    // The lengths of its rows of B, by the sub-segment pass on the row alone.
    std::vector<std::int64_t> lengths(static_cast<std::size_t>(entries[i]));
    host_seg = {0, entries[i]};
    v.segments = 1;
    SPGEMM_CUDA_CHECK(cudaMemcpyAsync(seg, host_seg.data(), 2 * 8, cudaMemcpyHostToDevice, stream));
    kernels::sub_lengths_kernel<<<1, 32, 0, stream>>>(v, a.row_offsets, a.col_indices, b.row_offsets, sub.data(),
                                                       seg_of.data());
    SPGEMM_CUDA_CHECK_LAUNCH();
    SPGEMM_CUDA_CHECK(cudaMemcpyAsync(lengths.data(), sub.data(), lengths.size() * 8, cudaMemcpyDeviceToHost, stream));
    SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::int64_t carry = 0;
    std::int64_t e = 0;
    while (e < entries[i]) {
      cancel.throw_if_cancelled();
      std::int64_t t = e;
      std::int64_t count = carry;
      while (t < entries[i] && count + lengths[static_cast<std::size_t>(t)] <= slice) count += lengths[static_cast<std::size_t>(t++)];
      if (t == e) throw error(error_kind::device_failure, "segmerge: a row of B does not fit the slice with its row's result");
      v.chunked = true;
      v.carry = carry;
      v.entry_base = first + e;
      host_seg = {0, 1 + (t - e)};
      SPGEMM_CUDA_CHECK(cudaMemcpyAsync(seg, host_seg.data(), 2 * 8, cudaMemcpyHostToDevice, stream));
      merge(v, 1 + (t - e), count, passes_for(1 + (t - e)), res_cols + res_at[i], res_vals + res_at[i]);
      carry = cuda::read_back(c_len + row, stream);
      e = t;
    }
    ++i;
  }
  kernels::segmerge_done_kernel<T><<<blocks_for(n, kernels::helper_threads), kernels::helper_threads, 0, stream>>>(
      rows, n, res_at_dev, c_len, res_cols, res_vals, lists.state.data());
  SPGEMM_CUDA_CHECK_LAUNCH();
}

}  // namespace

memory_estimate estimate(const method::job& job) {
  const int capacity_max = capacity_max_for(job.value_bytes);
  device_buffer<ull> counters(job.memory, kernels::counter::count, job.stream);
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(counters.data(), 0, counters.bytes(), job.stream));
  launch_bins(job.a, job.b, capacity_max, nullptr, nullptr, nullptr, counters.data(), job.stream);
  std::array<ull, kernels::counter::count> host{};
  cuda::read_back(counters.data(), host.size(), host.data(), job.stream);
  const counts c = counts_of(host.data());
  const bool segmented = job.tuning.bhsparse_segmented_merge != 0;
  const std::int64_t slice = segmented ? slice_products(job.tuning, c, job.facts.b_rows().max_row_length) : 0;
  memory_estimate e;
  e.exact = false;
  e.products = c.products;
  e.nnz_bound = c.bound;
  e.output_bytes = cuda::csr_bytes(job.a.rows, c.bound, job.value_bytes);
  e.workspace_bytes = workspace_bytes(c, job.a.rows, job.value_bytes, segmented, slice);
  e.method = std::string(segmented ? "segmerge" : "bhsparse") + " (" + std::to_string(c.rows_of(2, heap_max)) +
             " heap rows, " + std::to_string(c.rows_of(first_esc_bin, long_bin - 1)) + " ESC rows, " +
             std::to_string(c.hist[long_bin]) + " long rows by " +
             (segmented ? "segmented merge, slices of " + std::to_string(slice) + " products)" : "merge path)");
  return e;
}

template <typename T>
device_csr<T> run(const method::job& job, const cuda::csr_view<T>& a, const cuda::csr_view<T>& b) {
  memory_resource& memory = job.memory;
  const cudaStream_t stream = job.stream;
  const std::int64_t m = a.rows;
  device_csr<T> c = cuda::with_zero_offsets<T>(m, b.cols, memory, stream);
  if (m == 0 || a.nnz == 0 || b.nnz == 0) {
    cuda::allocate_entries(c, 0, memory, stream);
    return c;
  }
  offset_t* c_len = c.row_offsets.data();

  // (1) Upper bounds and bins.
  const auto rows = static_cast<std::size_t>(m);
  device_buffer<ull> counters(memory, kernels::counter::count, stream);
  device_buffer<unsigned char> bins(memory, rows, stream);
  device_buffer<offset_t> tilde(memory, rows + 1, stream);
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(counters.data(), 0, counters.bytes(), stream));
  SPGEMM_CUDA_CHECK(cudaMemsetAsync(tilde.data() + m, 0, sizeof(offset_t), stream));
  launch_bins(a.structure(), b.structure(), capacity_max_for(sizeof(T)), bins.data(), tilde.data(), c_len,
              counters.data(), stream);
  std::array<ull, kernels::counter::count> host{};
  cuda::read_back(counters.data(), host.size(), host.data(), stream);
  const counts n = counts_of(host.data());
  job.cancel.throw_if_cancelled();

  // (2) Rows by bin, C~.
  device_buffer<int> perm(memory, rows, stream);
  {
    device_buffer<unsigned char> sorted_bins(memory, rows, stream);
    device_buffer<int> identity(memory, rows, stream);
    kernels::identity_kernel<<<blocks_for(m, kernels::helper_threads), kernels::helper_threads, 0, stream>>>(
        m, identity.data());
    SPGEMM_CUDA_CHECK_LAUNCH();
    std::size_t bytes = sort_bytes(m);
    device_buffer<unsigned char> temp(memory, bytes, stream);
    SPGEMM_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, bins.data(), sorted_bins.data(),
                                                      identity.data(), perm.data(), static_cast<int>(m), 0, 6,
                                                      stream));
  }
  bins.reset();
  cuda::exclusive_scan_in_place(tilde.data(), m + 1, memory, stream);
  device_buffer<index_t> ct_col(memory, static_cast<std::size_t>(n.tilde), stream);
  device_buffer<T> ct_val(memory, static_cast<std::size_t>(n.tilde), stream);
  std::array<std::int64_t, bin_count + 1> start{};
  for (int bin = 0; bin < bin_count; ++bin) start[bin + 1] = start[bin] + n.hist[static_cast<std::size_t>(bin)];
  const int* by_bin = perm.data();

  // (3) The bins.
  if (n.hist[bin_single] > 0) {
    kernels::single_kernel<T><<<blocks_for(n.hist[bin_single], kernels::helper_threads), kernels::helper_threads, 0,
                                stream>>>(by_bin + start[bin_single], n.hist[bin_single], a.row_offsets, a.col_indices,
                                          a.values, b.row_offsets, b.col_indices, b.values, tilde.data(),
                                          ct_col.data(), ct_val.data(), c_len);
    SPGEMM_CUDA_CHECK_LAUNCH();
  }
  launch_heap_bins<T>(by_bin + start[2], n.rows_of(2, heap_max), a, b, tilde.data(), ct_col.data(), ct_val.data(),
                      c_len, stream);
  for (int bin = first_esc_bin; bin < long_bin; ++bin) {
    launch_esc_bin<T>(bin, by_bin + start[bin], n.hist[static_cast<std::size_t>(bin)], a, b, tilde.data(),
                      ct_col.data(), ct_val.data(), c_len, stream);
  }
  job.cancel.throw_if_cancelled();
  long_lists<T> lists;
  lists.n = n.hist[long_bin];
  if (lists.n > 0) {
    lists.state = device_buffer<kernels::long_row<T>>(memory, static_cast<std::size_t>(lists.n), stream);
    if (job.tuning.bhsparse_segmented_merge != 0) {
      const std::int64_t slice = slice_products(job.tuning, n, job.facts.b_rows().max_row_length);
      segmerge_long_rows(lists, by_bin + start[long_bin], a, b, c_len, slice, memory, stream, job.cancel);
    } else {
      merge_long_rows(lists, by_bin + start[long_bin], a, b, c_len, memory, stream, job.cancel);
    }
  }
  job.cancel.throw_if_cancelled();

  // (4) C exactly, rows copied.
  cuda::exclusive_scan_in_place(c_len, m + 1, memory, stream);
  c.nnz = cuda::read_back(c_len + m, stream);
  cuda::allocate_entries(c, c.nnz, memory, stream);
  const std::int64_t short_rows = start[long_bin] - start[bin_single];
  if (short_rows > 0 && c.nnz > 0) {
    kernels::copy_tilde_kernel<T><<<blocks_for(short_rows * 32, kernels::helper_threads), kernels::helper_threads, 0,
                                    stream>>>(by_bin + start[bin_single], short_rows, tilde.data(), ct_col.data(),
                                              ct_val.data(), c.row_offsets.data(), c.col_indices.data(),
                                              c.values.data());
    SPGEMM_CUDA_CHECK_LAUNCH();
  }
  if (lists.n > 0 && c.nnz > 0) {
    kernels::copy_long_kernel<T><<<blocks_for(lists.n * 32, kernels::helper_threads), kernels::helper_threads, 0,
                                   stream>>>(lists.state.data(), lists.n, c.row_offsets.data(), c.col_indices.data(),
                                             c.values.data());
    SPGEMM_CUDA_CHECK_LAUNCH();
  }
  return c;
}

template device_csr<float> run(const method::job&, const cuda::csr_view<float>&, const cuda::csr_view<float>&);
template device_csr<double> run(const method::job&, const cuda::csr_view<double>&, const cuda::csr_view<double>&);

}  // namespace spgemm::bhsparse
