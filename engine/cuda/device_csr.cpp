#include "cuda/device_csr.hpp"

#include <string>

#include "cuda/cuda_check.hpp"
#include "spgemm/errors.hpp"

namespace spgemm::cuda {

template <typename T>
device_csr<T> upload(const csr_matrix<T>& m, device_allocator& allocator, cudaStream_t stream,
                     job_meter* meter) {
  // The arrays must at least agree in size: the copies below trust them.
  if (m.rows < 0 || m.cols < 0 || m.row_offsets.size() != static_cast<std::size_t>(m.rows) + 1 ||
      m.row_offsets.front() != 0 || m.row_offsets.back() != m.nnz() ||
      m.values.size() != m.col_indices.size()) {
    throw_bad_input("matrix to store: array lengths do not match its shape (rows " +
                    std::to_string(m.rows) + ", nnz " + std::to_string(m.nnz()) + ")");
  }
  device_csr<T> d;
  d.rows = m.rows;
  d.cols = m.cols;
  d.nnz = m.nnz();
  d.row_offsets = device_buffer<offset_t>(allocator, m.row_offsets.size(), stream, meter);
  d.col_indices = device_buffer<index_t>(allocator, m.col_indices.size(), stream, meter);
  d.values = device_buffer<T>(allocator, m.values.size(), stream, meter);
  SPGEMM_CUDA_CHECK(cudaMemcpyAsync(d.row_offsets.data(), m.row_offsets.data(), d.row_offsets.bytes(),
                                    cudaMemcpyHostToDevice, stream));
  if (d.nnz > 0) {
    SPGEMM_CUDA_CHECK(cudaMemcpyAsync(d.col_indices.data(), m.col_indices.data(), d.col_indices.bytes(),
                                      cudaMemcpyHostToDevice, stream));
    SPGEMM_CUDA_CHECK(cudaMemcpyAsync(d.values.data(), m.values.data(), d.values.bytes(),
                                      cudaMemcpyHostToDevice, stream));
  }
  SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  return d;
}

template <typename T>
csr_matrix<T> download_rows(const device_csr<T>& m, std::int64_t row_begin, std::int64_t row_end,
                            cudaStream_t stream) {
  if (row_begin < 0 || row_end < row_begin || row_end > m.rows) {
    throw_bad_input("rows [" + std::to_string(row_begin) + ", " + std::to_string(row_end) +
                    ") are outside the matrix's " + std::to_string(m.rows) + " rows");
  }
  csr_matrix<T> h;
  h.rows = row_end - row_begin;
  h.cols = m.cols;
  h.row_offsets.resize(static_cast<std::size_t>(h.rows) + 1);
  SPGEMM_CUDA_CHECK(cudaMemcpyAsync(h.row_offsets.data(), m.row_offsets.data() + row_begin,
                                    h.row_offsets.size() * sizeof(offset_t), cudaMemcpyDeviceToHost,
                                    stream));
  SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  const offset_t base = h.row_offsets.front();
  for (offset_t& o : h.row_offsets) o -= base;
  const std::size_t n = static_cast<std::size_t>(h.row_offsets.back());
  h.col_indices.resize(n);
  h.values.resize(n);
  if (n > 0) {
    SPGEMM_CUDA_CHECK(cudaMemcpyAsync(h.col_indices.data(), m.col_indices.data() + base,
                                      n * sizeof(index_t), cudaMemcpyDeviceToHost, stream));
    SPGEMM_CUDA_CHECK(cudaMemcpyAsync(h.values.data(), m.values.data() + base, n * sizeof(T),
                                      cudaMemcpyDeviceToHost, stream));
    SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  return h;
}

template device_csr<float> upload(const csr_matrix<float>&, device_allocator&, cudaStream_t, job_meter*);
template device_csr<double> upload(const csr_matrix<double>&, device_allocator&, cudaStream_t, job_meter*);
template csr_matrix<float> download_rows(const device_csr<float>&, std::int64_t, std::int64_t, cudaStream_t);
template csr_matrix<double> download_rows(const device_csr<double>&, std::int64_t, std::int64_t,
                                          cudaStream_t);

}  // namespace spgemm::cuda
