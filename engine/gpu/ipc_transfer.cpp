// CUDA IPC for cuda_backend: another process's device arrays opened by their
// handles, copied from or into device to device. A handle is opened once in
// the device's context and stays open while a call or a registered device
// region uses it. A stored copy is drawn from the device's memory resource, as
// store()'s is. Every range is checked against the allocation it lies in (its
// real size, from the driver) before a byte is copied: a copy past an
// allocation would fault and end the device's context for every job.
#include <cudaTypedefs.h>

#include <cstring>
#include <map>
#include <mutex>
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

// An allocation's mapping as a caller holds it: one reference to the
// table's entry, closed with the last (under the table's lock, so that a
// handle is never opened again before it is closed).
struct ipc_reference final : ipc_mapping {
  std::shared_ptr<ipc_table> table;
  std::string handle;
  ~ipc_reference() override;
};

}  // namespace

struct ipc_table {
  struct opened {
    char* base = nullptr;
    std::size_t bytes = 0;
    int users = 0;
  };
  int device = 0;
  std::mutex mu;
  std::map<std::string, opened> open;
};

namespace {

ipc_reference::~ipc_reference() {
  std::lock_guard<std::mutex> lock(table->mu);
  auto it = table->open.find(handle);
  if (it == table->open.end() || --it->second.users > 0) return;
  cuda::device_guard guard(table->device);
  (void)cudaIpcCloseMemHandle(it->second.base);
  table->open.erase(it);
}

// The mappings of a call's arrays: the registered regions' given, the
// others' opened by handle; `stream`'s copies are done when it ends.
class ipc_openings {
 public:
  ipc_openings(cuda_backend& backend, cudaStream_t stream) : backend_(backend), stream_(stream) {}
  ~ipc_openings() { (void)cudaStreamSynchronize(stream_); }
  ipc_openings(const ipc_openings&) = delete;
  ipc_openings& operator=(const ipc_openings&) = delete;

  // The device address of `a`'s range, checked: `needed` bytes exactly (or
  // at least, unless `exact`), within its mapping; nullptr for an empty one.
  char* address(const ipc_array& a, std::size_t needed, bool exact, const std::string& what) {
    if (needed == 0 && a.length == 0) return nullptr;  // an empty array names no allocation
    if (exact ? a.length != needed : a.length < needed) {
      throw_bad_input(what + ": " + std::to_string(a.length) + " bytes given, " + (exact ? "" : "at least ") +
                      std::to_string(needed) + " needed");
    }
    const ipc_mapping* m = a.mapped != nullptr ? a.mapped.get() : open(a.handle, what);
    if (a.offset > m->bytes || a.length > m->bytes - a.offset) {
      throw_bad_input(what + ": bytes [" + std::to_string(a.offset) + ", +" + std::to_string(a.length) +
                      ") lie outside its allocation of " + std::to_string(m->bytes) + " bytes");
    }
    return m->base + a.offset;
  }

 private:
  const ipc_mapping* open(const std::string& handle, const std::string& what) {
    std::shared_ptr<const ipc_mapping>& held = opened_[handle];
    if (held == nullptr) {
      try {
        held = backend_.open_ipc(handle);
      } catch (const error& e) {
        opened_.erase(handle);
        if (e.kind() != error_kind::bad_input) throw;
        throw_bad_input(what + ": " + e.what());
      }
    }
    return held.get();
  }

  cuda_backend& backend_;
  cudaStream_t stream_;
  std::map<std::string, std::shared_ptr<const ipc_mapping>> opened_;
};

void copy_bytes(void* to, const void* from, std::size_t bytes, cudaStream_t stream) {
  if (bytes > 0) SPGEMM_CUDA_CHECK(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, stream));
}

}  // namespace

std::shared_ptr<stored_matrix> cuda_backend::store_from_ipc(const matrix_info& info, const ipc_csr_arrays& arrays) {
  return store_checked(info, [&](const arrays_to_fill& to, cudaStream_t stream) {
    ipc_openings opened(*this, stream);  // released once copied
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
  ipc_openings opened(*this, stream.get());
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

std::shared_ptr<const ipc_mapping> cuda_backend::open_ipc(const std::string& handle) {
  if (handle.size() != sizeof(cudaIpcMemHandle_t)) {
    throw_bad_input("a CUDA IPC handle has " + std::to_string(sizeof(cudaIpcMemHandle_t)) + " bytes, not " +
                    std::to_string(handle.size()));
  }
  std::call_once(ipc_once_, [this] {
    ipc_ = std::make_shared<ipc_table>();
    ipc_->device = context_->device;
  });
  std::lock_guard<std::mutex> lock(ipc_->mu);
  ipc_table::opened& entry = ipc_->open[handle];
  if (entry.users == 0) {
    cuda::device_guard guard(context_->device);
    cudaIpcMemHandle_t h;
    std::memcpy(&h, handle.data(), sizeof h);
    void* base = nullptr;
    const cudaError_t st = cudaIpcOpenMemHandle(&base, h, cudaIpcMemLazyEnablePeerAccess);
    if (st != cudaSuccess) {
      (void)cudaGetLastError();
      ipc_->open.erase(handle);
      throw_bad_input(std::string("cannot open a CUDA IPC handle (") + cudaGetErrorString(st) +
                      "): it must come from cudaIpcGetMemHandle in another process on this host");
    }
    CUdeviceptr range_base = 0;
    std::size_t range_bytes = 0;
    if (address_range_function()(&range_base, &range_bytes, reinterpret_cast<CUdeviceptr>(base)) != CUDA_SUCCESS) {
      (void)cudaIpcCloseMemHandle(base);
      ipc_->open.erase(handle);
      throw error(error_kind::device_failure, "the driver knows no allocation at an IPC address it opened");
    }
    entry.base = static_cast<char*>(base);
    entry.bytes = range_bytes - (reinterpret_cast<CUdeviceptr>(base) - range_base);
  }
  ++entry.users;
  auto ref = std::make_shared<ipc_reference>();
  ref->base = entry.base;
  ref->bytes = entry.bytes;
  ref->table = ipc_;
  ref->handle = handle;
  return ref;
}

}  // namespace spgemm::gpu
