// Pinned host memory for cuda_backend: pages mapped elsewhere (a client's
// shared-memory region) registered with the driver, so that matrices go
// between them and the device by the copy engines alone, at the link's
// speed, with no staging and no copy by the host's CPU.
#include <string>
#include <type_traits>

#include "cuda/cuda_check.hpp"
#include "gpu/cuda_backend.hpp"
#include "spgemm/errors.hpp"

namespace spgemm::gpu {
namespace {

// Whether [p, p + bytes) lies in host memory the driver has pinned: else a
// cudaMemcpy into it would go through the CPU, which this path must not.
bool pinned(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return a.type == cudaMemoryTypeHost;
}

// A copy between the device and the pinned host range [host, host + bytes).
void copy_pinned(void* to, const void* from, std::size_t bytes, const void* host, cudaMemcpyKind kind, const char* what,
                 cudaStream_t stream) {
  if (bytes == 0) return;
  if (!pinned(host) || !pinned(static_cast<const char*>(host) + bytes - 1)) {
    throw_bad_input(std::string(what) + ": not in pinned host memory");
  }
  SPGEMM_CUDA_CHECK(cudaMemcpyAsync(to, from, bytes, kind, stream));
}

void copy_out(void* to, const void* from, std::size_t bytes, const char* what, cudaStream_t stream) {
  copy_pinned(to, from, bytes, to, cudaMemcpyDeviceToHost, what, stream);
}

void copy_in(void* to, const void* from, std::size_t bytes, const char* what, cudaStream_t stream) {
  copy_pinned(to, from, bytes, from, cudaMemcpyHostToDevice, what, stream);
}

}  // namespace

bool cuda_backend::pin_host(void* p, std::size_t bytes) {
  if (p == nullptr || bytes == 0) return false;
  cuda::device_guard guard(context_->device);
  // Portable: pinned for every device's copies, whichever holds the result.
  if (cudaHostRegister(p, bytes, cudaHostRegisterPortable) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return true;
}

void cuda_backend::unpin_host(void* p) {
  cuda::device_guard guard(context_->device);
  if (cudaHostUnregister(p) != cudaSuccess) (void)cudaGetLastError();
}

void cuda_backend::fetch_into_pinned(const stored_matrix& m, const host_csr_targets& to) {
  const cuda_stored_matrix& s = own(m, "matrix to copy out");
  cuda::device_guard guard(context_->device);
  auto stream = context_->streams.acquire();
  std::visit(
      [&](const auto& d) {
        using T = typename std::decay_t<decltype(d)>::value;
        const auto rows = static_cast<std::size_t>(d.rows), nnz = static_cast<std::size_t>(d.nnz);
        copy_out(to.row_offsets, d.row_offsets.data(), (rows + 1) * sizeof(offset_t), "row_offsets", stream.get());
        copy_out(to.col_indices, d.col_indices.data(), nnz * sizeof(index_t), "col_indices", stream.get());
        copy_out(to.values, d.values.data(), nnz * sizeof(T), "values", stream.get());
      },
      s.matrix());
  SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
}

std::shared_ptr<stored_matrix> cuda_backend::store_from_pinned(const matrix_info& info, const host_csr_arrays& arrays) {
  return store_checked(info, [&](const arrays_to_fill& to, cudaStream_t stream) {
    copy_in(to.row_offsets, arrays.row_offsets, to.offset_bytes, "row_offsets", stream);
    copy_in(to.col_indices, arrays.col_indices, to.column_bytes, "col_indices", stream);
    copy_in(to.values, arrays.values, to.value_bytes, "values", stream);
  });
}

}  // namespace spgemm::gpu
