// CUDA IPC for cuda_backend: another process's device arrays opened by their
// handles, copied from or into device to device, and closed before the call
// returns. A stored copy is drawn from the device's memory resource, as
// store()'s is. Every range is checked against the allocation it lies in (its
// real size, from the driver) before a byte is copied: a copy past an
// allocation would fault and end the device's context for every job.
#include <cudaTypedefs.h>

#include <cstring>
#include <map>
#include <string>
#include <type_traits>

#include "cuda/cuda_check.hpp"
#include "gpu/cuda_backend.hpp"
#include "spgemm/errors.hpp"

namespace spgemm::gpu {
namespace {

// The driver's cuMemGetAddressRange, found through the runtime (the engine
// does not link the driver library).
PFN_cuMemGetAddressRange_v3020 address_range_function() {
  static PFN_cuMemGetAddressRange_v3020 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &p, 3020, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      (void)cudaGetLastError();
      p = nullptr;
    }
    return reinterpret_cast<PFN_cuMemGetAddressRange_v3020>(p);
  }();
  if (fn == nullptr) throw error(error_kind::device_failure, "the CUDA driver has no cuMemGetAddressRange");
  return fn;
}

// The allocations a call opened, each handle once (a context opens a handle
// only once), closed when it ends, after `stream`'s copies.
class ipc_openings {
 public:
  explicit ipc_openings(cudaStream_t stream) : stream_(stream) {}
  ~ipc_openings() {
    (void)cudaStreamSynchronize(stream_);
    for (auto& [handle, base] : opened_) (void)cudaIpcCloseMemHandle(base);
  }
  ipc_openings(const ipc_openings&) = delete;
  ipc_openings& operator=(const ipc_openings&) = delete;

  // The device address of `a`'s range, checked: `needed` bytes exactly (or
  // at least, unless `exact`), within the allocation; nullptr for an empty one.
  char* address(const ipc_array& a, std::size_t needed, bool exact, const std::string& what) {
    if (needed == 0 && a.length == 0) return nullptr;  // an empty array names no allocation
    if (a.handle.size() != sizeof(cudaIpcMemHandle_t)) {
      throw_bad_input(what + ": a CUDA IPC handle has " + std::to_string(sizeof(cudaIpcMemHandle_t)) +
                      " bytes, not " + std::to_string(a.handle.size()));
    }
    if (exact ? a.length != needed : a.length < needed) {
      throw_bad_input(what + ": " + std::to_string(a.length) + " bytes given, " + (exact ? "" : "at least ") +
                      std::to_string(needed) + " needed");
    }
    char* base = open(a.handle, what);
    CUdeviceptr range_base = 0;
    std::size_t range_bytes = 0;
    if (address_range_function()(&range_base, &range_bytes, reinterpret_cast<CUdeviceptr>(base)) != CUDA_SUCCESS) {
      throw error(error_kind::device_failure, what + ": the driver knows no allocation at its IPC address");
    }
    const std::size_t from_base = reinterpret_cast<CUdeviceptr>(base) - range_base;
    if (a.offset > range_bytes - from_base || a.length > range_bytes - from_base - a.offset) {
      throw_bad_input(what + ": bytes [" + std::to_string(a.offset) + ", +" + std::to_string(a.length) +
                      ") lie outside its allocation of " + std::to_string(range_bytes - from_base) + " bytes");
    }
    return base + a.offset;
  }

 private:
  char* open(const std::string& handle, const std::string& what) {
    if (auto it = opened_.find(handle); it != opened_.end()) return static_cast<char*>(it->second);
    cudaIpcMemHandle_t h;
    std::memcpy(&h, handle.data(), sizeof h);
    void* base = nullptr;
    const cudaError_t st = cudaIpcOpenMemHandle(&base, h, cudaIpcMemLazyEnablePeerAccess);
    if (st != cudaSuccess) {
      (void)cudaGetLastError();
      throw_bad_input(what + ": cannot open its CUDA IPC handle (" + cudaGetErrorString(st) +
                      "): it must come from cudaIpcGetMemHandle in another process on this host");
    }
    opened_.emplace(handle, base);
    return static_cast<char*>(base);
  }

  cudaStream_t stream_;
  std::map<std::string, void*> opened_;
};

void copy_bytes(void* to, const void* from, std::size_t bytes, cudaStream_t stream) {
  if (bytes > 0) SPGEMM_CUDA_CHECK(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, stream));
}

}  // namespace

std::shared_ptr<stored_matrix> cuda_backend::store_from_ipc(const matrix_info& info, const ipc_csr_arrays& arrays) {
  return store_checked(info, [&](const arrays_to_fill& to, cudaStream_t stream) {
    ipc_openings opened(stream);  // closed again once copied
    copy_bytes(to.row_offsets, opened.address(arrays.row_offsets, to.offset_bytes, true, "row_offsets"), to.offset_bytes,
               stream);
    copy_bytes(to.col_indices, opened.address(arrays.col_indices, to.column_bytes, true, "col_indices"), to.column_bytes,
               stream);
    copy_bytes(to.values, opened.address(arrays.values, to.value_bytes, true, "values"), to.value_bytes, stream);
  });
}

void cuda_backend::fetch_into_ipc(const stored_matrix& m, const ipc_csr_arrays& arrays) {
  const cuda_stored_matrix& s = own(m, "matrix to copy out");
  cuda::device_guard guard(context_->device);
  auto stream = context_->streams.acquire();
  ipc_openings opened(stream.get());
  std::visit(
      [&](const auto& d) {
        using T = typename std::decay_t<decltype(d)>::value;
        const auto rows = static_cast<std::size_t>(d.rows), nnz = static_cast<std::size_t>(d.nnz);
        copy_bytes(opened.address(arrays.row_offsets, (rows + 1) * sizeof(offset_t), false, "row_offsets"),
             d.row_offsets.data(), (rows + 1) * sizeof(offset_t), stream.get());
        copy_bytes(opened.address(arrays.col_indices, nnz * sizeof(index_t), false, "col_indices"), d.col_indices.data(),
             nnz * sizeof(index_t), stream.get());
        copy_bytes(opened.address(arrays.values, nnz * sizeof(T), false, "values"), d.values.data(), nnz * sizeof(T),
             stream.get());
      },
      s.matrix());
  SPGEMM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
}

}  // namespace spgemm::gpu
