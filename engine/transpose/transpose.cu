// Host dispatch of the GPU transpose (see transpose.hpp for the contract and
// transpose_kernels.cuh for the method): sizes, the workspace, the launches.
//
// Stream operations: one memset (column counts, scan state, list counters),
// then the rank, scan, scatter and sort_rows kernels, and merge_chunks where
// rows(A) > 512 (only then can a row of A^T span several chunks). Each
// kernel after the rank launches while the one before it finishes
// (programmatic dependent launch; it waits on the device before reading that
// one's output), so the GPU does not idle between them. No host
// synchronization and no read-back: every size the kernels need stays on the
// device. Allocations: A^T (one, device_csr::storage) and one workspace buffer.
#include <algorithm>
#include <climits>
#include <map>
#include <mutex>
#include <utility>

#include "cuda/cuda_check.hpp"
#include "cuda/dependent_launch.cuh"
#include "spgemm/errors.hpp"
#include "transpose/transpose.hpp"
#include "transpose/transpose_kernels.cuh"
#include "transpose/transpose_sort.cuh"

namespace spgemm::transpose {
namespace {

namespace tk = kernels;
using cuda::csr_view;
using cuda::device_buffer;
using cuda::device_csr;
using cuda::memory_resource;

std::size_t align_up(std::size_t bytes, std::size_t alignment) { return (bytes + alignment - 1) / alignment * alignment; }

// Where each part of the workspace lies (byte offsets) and how much of it
// the kernels may use.
struct workspace_layout {
  std::int64_t scan_tiles = 0;
  std::size_t state = 0;     // ull per scan tile
  std::size_t counters = 0;  // tk::counters unsigned
  std::size_t zeroed = 0;    // counts, scan state and counters: [0, zeroed)
  std::size_t place = 0;     // unsigned per entry
  std::size_t group = 0;     // unsigned short per entry
  std::size_t rows[tk::short_lists] = {};
  std::size_t chunks = 0;
  std::int64_t chunk_capacity = 0;  // entries of the chunk list
  bool merge = false;               // rows of several chunks possible: work arrays present
  std::size_t work_col = 0;
  std::size_t work_val = 0;
  std::size_t total = 0;
};

workspace_layout layout_of(std::int64_t rows, std::int64_t cols, std::int64_t nnz, std::size_t value_bytes) {
  workspace_layout w;
  w.scan_tiles = (cols + tk::scan_tile - 1) / tk::scan_tile;
  std::size_t at = static_cast<std::size_t>(cols) * sizeof(unsigned);  // counts / cursors at 0
  w.state = at = align_up(at, 16);
  at += static_cast<std::size_t>(w.scan_tiles) * sizeof(tk::ull);
  w.counters = at;
  at += tk::counters * sizeof(unsigned);
  w.zeroed = at;
  w.place = at = align_up(at, 256);
  at += static_cast<std::size_t>(nnz) * sizeof(unsigned);
  w.group = at = align_up(at, 256);
  at += static_cast<std::size_t>(nnz) * sizeof(unsigned short);
  for (int l = 0; l < tk::short_lists; ++l) {
    w.rows[l] = at = align_up(at, 256);
    at += static_cast<std::size_t>(std::min<std::int64_t>(cols, nnz / tk::list_min[l])) * sizeof(index_t);
  }
  // Rows of > 128 entries (at most min(cols, nnz / 129)) and their chunks
  // beyond the first (at most nnz / 512). A row of A^T has at most rows(A) entries.
  if (rows > static_cast<std::int64_t>(tk::list_max[tk::short_lists - 1])) {
    w.chunk_capacity = std::min<std::int64_t>(cols, nnz / tk::list_min[tk::short_lists]) + nnz / tk::chunk;
  }
  w.chunks = at = align_up(at, 256);
  at += static_cast<std::size_t>(w.chunk_capacity) * sizeof(int2);
  w.merge = rows > tk::chunk && nnz > tk::chunk;
  if (w.merge) {
    w.work_col = at = align_up(at, 256);
    at += static_cast<std::size_t>(nnz) * sizeof(index_t);
    w.work_val = at = align_up(at, 256);
    at += static_cast<std::size_t>(nnz) * value_bytes;
  }
  w.total = at;
  return w;
}

unsigned blocks_for(std::int64_t items, std::int64_t per_block) {
  return static_cast<unsigned>(std::max<std::int64_t>((items + per_block - 1) / per_block, 1));
}

// Blocks of `kernel` (block_threads threads) resident on the current device at once.
std::int64_t resident_blocks(const void* kernel) {
  static std::mutex mutex;
  static std::map<std::pair<int, const void*>, std::int64_t> cache;
  int device = 0;
  SPGEMM_CUDA_CHECK(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(device, kernel);
  const auto found = cache.find(key);
  if (found != cache.end()) return found->second;
  int sms = 0;
  int per_sm = 0;
  SPGEMM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  SPGEMM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, tk::block_threads, 0));
  const std::int64_t blocks = std::max<std::int64_t>(std::int64_t{sms} * per_sm, 1);
  cache.emplace(key, blocks);
  return blocks;
}

unsigned persistent_blocks(const void* kernel, std::int64_t useful) {
  return static_cast<unsigned>(std::clamp<std::int64_t>(useful, 1, resident_blocks(kernel)));
}

// Launches phase `kernel` on `grid` blocks to start while the stream's
// previous kernel finishes (see the kernels' wait_for_previous_grid).
template <typename... Params, typename... Args>
void launch_phase(void (*kernel)(Params...), unsigned grid, cudaStream_t stream, Args... args) {
  cuda::launch_dependent(kernel, dim3(grid), dim3(tk::block_threads), stream, args...);
}

// Phase 4 with sort keys K (see transpose_sort.cuh).
template <typename K, typename T>
void sort_rows(const offset_t* t_off, index_t* t_col, T* t_val, const tk::lists_view& lists, index_t* work_col,
               T* work_val, std::int64_t tasks, cudaStream_t stream) {
  const auto* kernel = reinterpret_cast<const void*>(&tk::sort_rows_kernel<K, T>);
  launch_phase(&tk::sort_rows_kernel<K, T>, persistent_blocks(kernel, blocks_for(tasks, tk::warps_per_block)),
               stream, t_off, t_col, t_val, lists, work_col, work_val);
}

}  // namespace

memory_estimate estimate(const matrix_info& a) {
  memory_estimate e;
  e.output_bytes = cuda::csr_bytes(a.cols, a.nnz, size_of(a.type));
  e.nnz_bound = a.nnz;
  e.workspace_bytes = a.nnz > 0 ? layout_of(a.rows, a.cols, a.nnz, size_of(a.type)).total : 0;
  e.exact = true;
  e.method = "transpose";
  return e;
}

template <typename T>
device_csr<T> run(const csr_view<T>& a, memory_resource& memory, cudaStream_t stream, const cancel_token& cancel) {
  if (a.nnz > INT32_MAX || a.rows > INT32_MAX) {
    throw_bad_input("transpose of more than 2^31 - 1 entries or rows is not supported on the GPU");
  }
  device_csr<T> t = cuda::allocate_csr<T>(a.cols, a.rows, a.nnz, memory, stream);
  if (a.nnz == 0) {
    SPGEMM_CUDA_CHECK(cudaMemsetAsync(t.row_offsets.data(), 0, t.row_offsets.bytes(), stream));
    return t;
  }

  const workspace_layout w = layout_of(a.rows, a.cols, a.nnz, sizeof(T));
  device_buffer<unsigned char> work(memory, w.total, stream);
  unsigned char* base = work.data();
  auto* counts = reinterpret_cast<unsigned*>(base);
  auto* place = reinterpret_cast<unsigned*>(base + w.place);
  auto* group = reinterpret_cast<unsigned short*>(base + w.group);
  tk::lists_view lists;
  lists.counters = reinterpret_cast<unsigned*>(base + w.counters);
  for (int l = 0; l < tk::short_lists; ++l) lists.rows[l] = reinterpret_cast<index_t*>(base + w.rows[l]);
  lists.chunks = reinterpret_cast<int2*>(base + w.chunks);
  auto* work_col = w.merge ? reinterpret_cast<index_t*>(base + w.work_col) : nullptr;
  auto* work_val = w.merge ? reinterpret_cast<T*>(base + w.work_val) : nullptr;
  offset_t* t_off = t.row_offsets.data();
  index_t* t_col = t.col_indices.data();
  T* t_val = t.values.data();
  const unsigned entry_blocks = blocks_for(a.nnz, tk::entry_tile);

  SPGEMM_CUDA_CHECK(cudaMemsetAsync(base, 0, w.zeroed, stream));
  tk::rank_kernel<<<entry_blocks, tk::block_threads, 0, stream>>>(a.col_indices, a.nnz, counts, place, group);
  SPGEMM_CUDA_CHECK_LAUNCH();
  launch_phase(&tk::scan_kernel, static_cast<unsigned>(w.scan_tiles), stream, counts, a.cols, t_off,
               reinterpret_cast<tk::ull*>(base + w.state), lists);
  cancel.throw_if_cancelled();
  launch_phase(&tk::scatter_kernel<T>, entry_blocks, stream, a.row_offsets, a.rows, a.col_indices, a.values, a.nnz,
               counts, place, group, t_col, t_val);
  cancel.throw_if_cancelled();
  // At most min(cols, nnz / 2) rows to sort plus nnz / 512 further chunks; a
  // warp task sorts at least one of them.
  const std::int64_t tasks = std::min<std::int64_t>(a.cols, a.nnz / 2) + a.nnz / tk::chunk;
  if (a.rows <= tk::narrow_key_rows) {
    sort_rows<unsigned>(t_off, t_col, t_val, lists, work_col, work_val, tasks, stream);
  } else {
    sort_rows<tk::ull>(t_off, t_col, t_val, lists, work_col, work_val, tasks, stream);
  }
  if (w.merge) {
    const auto* merge = reinterpret_cast<const void*>(&tk::merge_chunks_kernel<T>);
    launch_phase(&tk::merge_chunks_kernel<T>, persistent_blocks(merge, w.chunk_capacity), stream, t_off, lists,
                 work_col, work_val, t_col, t_val);
  }
  return t;  // the workspace is freed in stream order, after the kernels
}

template device_csr<float> run(const csr_view<float>&, memory_resource&, cudaStream_t, const cancel_token&);
template device_csr<double> run(const csr_view<double>&, memory_resource&, cudaStream_t, const cancel_token&);

}  // namespace spgemm::transpose
