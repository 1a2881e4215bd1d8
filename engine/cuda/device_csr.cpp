#include "cuda/device_csr.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/staging_buffers.hpp"
#include "spgemm/errors.hpp"
#include "src/huge_pages.hpp"

namespace spgemm::cuda {

namespace {

// Large host <-> device copies go in pieces through two pinned staging
// buffers (staging_buffers.hpp): a pageable cudaMemcpy goes through the
// driver's own small staging buffers, synchronously, at a fraction of the
// link's speed. Copies below staged_min_bytes stay plain (pageable) copies.
constexpr std::size_t staged_min_bytes = 1 << 20;

// Two pinned buffers and their events, for one copy at a time; taken on the
// first copy large enough to stage.
class staging {
 public:
  staging() = default;
  ~staging() {
    for (int i = 0; i < 2; ++i) {
      if (ev_[i] != nullptr) (void)cudaEventDestroy(ev_[i]);
      // Nothing copies into or out of a buffer handed back: every copy below
      // waits for its pieces before returning (or throws after a failed
      // call, when the stream is broken anyway).
      release_staging(buf_[i]);
    }
  }
  staging(const staging&) = delete;
  staging& operator=(const staging&) = delete;

  // Host `src` to device `dst`, enqueued on `stream`; returns once the host
  // memory is no longer read (the last piece may still be in flight on
  // `stream`: synchronize it before using the device copy).
  void to_device(void* dst, const void* src, std::size_t bytes, cudaStream_t stream) {
    if (bytes < staged_min_bytes || !ready()) {
      SPGEMM_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
      SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
      return;
    }
    const std::size_t pieces = (bytes + staging_bytes - 1) / staging_bytes;
    for (std::size_t i = 0; i < pieces; ++i) {
      const int k = static_cast<int>(i % 2);
      const std::size_t off = i * staging_bytes;
      const std::size_t len = std::min(staging_bytes, bytes - off);
      if (i >= 2) SPGEMM_CUDA_CHECK(cudaEventSynchronize(ev_[k]));  // its last piece has left the buffer
      std::memcpy(buf_[k], static_cast<const char*>(src) + off, len);
      SPGEMM_CUDA_CHECK(
          cudaMemcpyAsync(static_cast<char*>(dst) + off, buf_[k], len, cudaMemcpyHostToDevice, stream));
      SPGEMM_CUDA_CHECK(cudaEventRecord(ev_[k], stream));
    }
    // The buffers are reused by the next copy: wait until both drained.
    SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  // Device `src` to host `dst`; synchronized.
  void to_host(void* dst, const void* src, std::size_t bytes, cudaStream_t stream) {
    if (bytes < staged_min_bytes || !ready()) {
      SPGEMM_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream));
      SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
      return;
    }
    out_through_staging(src, bytes, stream, [&](const void* piece, std::size_t off, std::size_t len) {
      std::memcpy(static_cast<char*>(dst) + off, piece, len);
    });
  }

  // Device `src` handed to `sink` as `which`: large copies a piece at a time
  // from the staging buffers, small ones through a host copy; synchronized.
  void to_sink(const void* src, std::size_t bytes, cudaStream_t stream, rows_sink& sink, rows_sink::array which) {
    if (bytes < staged_min_bytes || !ready()) {
      std::vector<unsigned char> host(bytes);
      to_host(host.data(), src, bytes, stream);
      sink.piece(which, 0, host.data(), bytes);
      return;
    }
    out_through_staging(src, bytes, stream, [&](const void* piece, std::size_t off, std::size_t len) {
      sink.piece(which, static_cast<std::int64_t>(off), piece, len);
    });
  }

  // Device `src` (n values) appended to host `dst`; synchronized. The same
  // pieces as to_host, each inserted at dst's end: memory the vector grows
  // into is written once, never zeroed first.
  template <typename V>
  void append_to_host(std::vector<V>& dst, const V* src, std::size_t n, cudaStream_t stream) {
    static_assert(staging_bytes % sizeof(V) == 0, "pieces hold whole values");
    if (n * sizeof(V) < staged_min_bytes || !ready()) {
      const std::size_t old = dst.size();
      dst.resize(old + n);
      to_host(dst.data() + old, src, n * sizeof(V), stream);
      return;
    }
    out_through_staging(src, n * sizeof(V), stream, [&](const void* piece, std::size_t, std::size_t len) {
      const V* values = static_cast<const V*>(piece);
      dst.insert(dst.end(), values, values + len / sizeof(V));
    });
  }

 private:
  // Device `src` to the host in pieces through the two buffers, each piece's
  // copy overlapping `take(piece, offset, length)` of the one before; synchronized.
  template <typename Take>
  void out_through_staging(const void* src, std::size_t bytes, cudaStream_t stream, Take take) {
    const std::size_t pieces = (bytes + staging_bytes - 1) / staging_bytes;
    auto start = [&](std::size_t i) {
      const int k = static_cast<int>(i % 2);
      const std::size_t off = i * staging_bytes;
      const std::size_t len = std::min(staging_bytes, bytes - off);
      SPGEMM_CUDA_CHECK(
          cudaMemcpyAsync(buf_[k], static_cast<const char*>(src) + off, len, cudaMemcpyDeviceToHost, stream));
      SPGEMM_CUDA_CHECK(cudaEventRecord(ev_[k], stream));
    };
    start(0);
    for (std::size_t i = 0; i < pieces; ++i) {
      const int k = static_cast<int>(i % 2);
      // The other buffer was emptied by the previous iteration's take.
      if (i + 1 < pieces) start(i + 1);
      SPGEMM_CUDA_CHECK(cudaEventSynchronize(ev_[k]));
      const std::size_t off = i * staging_bytes;
      take(buf_[k], off, std::min(staging_bytes, bytes - off));
    }
  }

  // Takes the buffers and events once; false when pinned memory or events
  // can not be had (plain copies then).
  bool ready() {
    if (!taken_) {
      taken_ = true;
      for (int i = 0; i < 2; ++i) {
        buf_[i] = acquire_staging();
        if (buf_[i] == nullptr) ok_ = false;
        if (cudaEventCreateWithFlags(&ev_[i], cudaEventDisableTiming) != cudaSuccess) {
          (void)cudaGetLastError();
          ev_[i] = nullptr;
          ok_ = false;
        }
      }
    }
    return ok_;
  }

  void* buf_[2] = {nullptr, nullptr};
  cudaEvent_t ev_[2] = {nullptr, nullptr};
  bool taken_ = false;
  bool ok_ = true;
};

}  // namespace

template <typename T>
device_csr<T> allocate_csr(std::int64_t rows, std::int64_t cols, std::int64_t nnz, memory_resource& memory,
                           cudaStream_t stream) {
  device_csr<T> d;
  d.rows = rows;
  d.cols = cols;
  d.nnz = nnz;
  const auto n = static_cast<std::size_t>(nnz);
  d.storage = device_buffer<unsigned char>(memory, csr_bytes(rows, nnz, sizeof(T)), stream);
  array_carver carve(d.storage.data());
  d.row_offsets = carve.next<offset_t>(static_cast<std::size_t>(rows) + 1);
  d.values = carve.next<T>(n);
  d.col_indices = carve.next<index_t>(n);
  return d;
}

template <typename T>
void upload_rows(device_csr<T>& d, const offset_t* row_offsets, const index_t* col_indices, const T* values,
                 std::int64_t row_begin, std::int64_t row_end, cudaStream_t stream) {
  staging st;
  const auto offsets = static_cast<std::size_t>(row_end - row_begin + 1);
  st.to_device(d.row_offsets.data() + row_begin, row_offsets + row_begin, offsets * sizeof(offset_t), stream);
  const offset_t first = row_offsets[row_begin];
  const auto n = static_cast<std::size_t>(row_offsets[row_end] - first);
  if (n > 0) {
    st.to_device(d.col_indices.data() + first, col_indices + first, n * sizeof(index_t), stream);
    st.to_device(d.values.data() + first, values + first, n * sizeof(T), stream);
  }
  SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
}

template <typename T>
device_csr<T> upload(const csr_matrix<T>& m, memory_resource& memory, cudaStream_t stream) {
  // The arrays must at least agree in size: the copies below trust them.
  if (m.rows < 0 || m.cols < 0 || m.row_offsets.size() != static_cast<std::size_t>(m.rows) + 1 ||
      m.row_offsets.front() != 0 || m.row_offsets.back() != m.nnz() ||
      m.values.size() != m.col_indices.size()) {
    throw_bad_input("matrix to store: array lengths do not match its shape (rows " +
                    std::to_string(m.rows) + ", nnz " + std::to_string(m.nnz()) + ")");
  }
  device_csr<T> d = allocate_csr<T>(m.rows, m.cols, m.nnz(), memory, stream);
  upload_rows(d, m.row_offsets.data(), m.col_indices.data(), m.values.data(), 0, m.rows, stream);
  return d;
}

template <typename T>
csr_matrix<T> download_rows(const device_csr<T>& m, std::int64_t row_begin, std::int64_t row_end,
                            cudaStream_t stream) {
  // Appended to an empty matrix: the host arrays are written once, not zero-filled first.
  csr_matrix<T> h;
  h.cols = m.cols;
  append_rows(m, row_begin, row_end, h, stream);
  return h;
}

template <typename T>
void download_rows_to(const device_csr<T>& m, std::int64_t row_begin, std::int64_t row_end, rows_sink& sink,
                      cudaStream_t stream) {
  require_rows_within(row_begin, row_end, m.rows);
  staging st;
  std::vector<offset_t> offsets(static_cast<std::size_t>(row_end - row_begin) + 1);
  st.to_host(offsets.data(), m.row_offsets.data() + row_begin, offsets.size() * sizeof(offset_t), stream);
  const offset_t first = offsets.front();
  for (offset_t& o : offsets) o -= first;
  sink.piece(rows_sink::array::row_offsets, 0, offsets.data(), offsets.size() * sizeof(offset_t));
  const auto n = static_cast<std::size_t>(offsets.back());
  if (n == 0) return;
  st.to_sink(m.col_indices.data() + first, n * sizeof(index_t), stream, sink, rows_sink::array::col_indices);
  st.to_sink(m.values.data() + first, n * sizeof(T), stream, sink, rows_sink::array::values);
}

template <typename T>
void append_rows(const device_csr<T>& m, std::int64_t row_begin, std::int64_t row_end, csr_matrix<T>& out,
                 cudaStream_t stream) {
  if (row_begin < 0 || row_end < row_begin || row_end > m.rows || m.cols != out.cols) {
    throw_bad_input("rows [" + std::to_string(row_begin) + ", " + std::to_string(row_end) + ") of a " +
                    std::to_string(m.rows) + " x " + std::to_string(m.cols) + " matrix cannot go to one of " +
                    std::to_string(out.cols) + " columns");
  }
  staging st;
  std::vector<offset_t> offsets(static_cast<std::size_t>(row_end - row_begin) + 1);
  st.to_host(offsets.data(), m.row_offsets.data() + row_begin, offsets.size() * sizeof(offset_t), stream);
  const offset_t first = offsets.front(), shift = out.nnz() - first;
  out.row_offsets.reserve(out.row_offsets.size() + offsets.size() - 1);
  for (std::size_t r = 1; r < offsets.size(); ++r) out.row_offsets.push_back(offsets[r] + shift);
  const auto n = static_cast<std::size_t>(offsets.back() - first);
  out.col_indices.reserve(out.col_indices.size() + n);  // grown once, not doubled as it fills
  out.values.reserve(out.values.size() + n);
  advise_huge_pages(out.col_indices.data() + out.col_indices.size(), n * sizeof(index_t));
  advise_huge_pages(out.values.data() + out.values.size(), n * sizeof(T));
  if (n > 0) {
    st.append_to_host(out.col_indices, m.col_indices.data() + first, n, stream);
    st.append_to_host(out.values, m.values.data() + first, n, stream);
  }
  out.rows += row_end - row_begin;
}

template device_csr<float> allocate_csr<float>(std::int64_t, std::int64_t, std::int64_t, memory_resource&,
                                                cudaStream_t);
template device_csr<double> allocate_csr<double>(std::int64_t, std::int64_t, std::int64_t, memory_resource&,
                                                  cudaStream_t);
template void upload_rows(device_csr<float>&, const offset_t*, const index_t*, const float*, std::int64_t,
                          std::int64_t, cudaStream_t);
template void upload_rows(device_csr<double>&, const offset_t*, const index_t*, const double*, std::int64_t,
                          std::int64_t, cudaStream_t);
template device_csr<float> upload(const csr_matrix<float>&, memory_resource&, cudaStream_t);
template device_csr<double> upload(const csr_matrix<double>&, memory_resource&, cudaStream_t);
template csr_matrix<float> download_rows(const device_csr<float>&, std::int64_t, std::int64_t, cudaStream_t);
template csr_matrix<double> download_rows(const device_csr<double>&, std::int64_t, std::int64_t,
                                          cudaStream_t);
template void download_rows_to(const device_csr<float>&, std::int64_t, std::int64_t, rows_sink&, cudaStream_t);
template void download_rows_to(const device_csr<double>&, std::int64_t, std::int64_t, rows_sink&, cudaStream_t);
template void append_rows(const device_csr<float>&, std::int64_t, std::int64_t, csr_matrix<float>&, cudaStream_t);
template void append_rows(const device_csr<double>&, std::int64_t, std::int64_t, csr_matrix<double>&, cudaStream_t);

}  // namespace spgemm::cuda
