#include "core/device_transfer.hpp"

#include "core/matrices.hpp"
#include "core/upload.hpp"

namespace spgemmd::core {

namespace {

// The GPU with the most room, or -1.
int roomiest_gpu(matrix_cache& cache) {
  const int device = cache.roomiest_device();
  return device >= 0 && cache.backends()[static_cast<std::size_t>(device)]->is_gpu() ? device : -1;
}

outcome no_gpu() {
  return {status::not_permitted, "CUDA IPC needs a GPU backend; this server keeps matrices in host memory"};
}

}  // namespace

std::shared_ptr<spgemm::backend> any_gpu(const matrix_cache& cache) {
  for (const auto& b : cache.backends()) {
    if (b->is_gpu()) return b;
  }
  return nullptr;
}

bool has_gpu(const matrix_cache& cache) { return any_gpu(cache) != nullptr; }

outcome open_device_allocation(const matrix_cache& cache, const std::string& handle,
                               std::shared_ptr<const spgemm::ipc_mapping>* out) {
  const std::shared_ptr<spgemm::backend> gpu = any_gpu(cache);
  if (gpu == nullptr) return no_gpu();
  try {
    *out = gpu->open_ipc(handle);
  } catch (...) {
    return outcome_of(std::current_exception());
  }
  return {};
}

namespace {

// Stores the matrix `info` with `store(backend)` on the GPU with most room, as
// an upload: within its budget and `who`'s tenant's device quota.
template <typename Store>
outcome store_on_gpu(matrix_cache& cache, scheduler& sched, const caller& who, const spgemm::matrix_info& info,
                     const std::string& name, int64_t ttl_seconds, entry_info* out, const Store& store) {
  if (outcome fits = upload::check(cache, who, info); !fits.ok()) return fits;
  const int device = roomiest_gpu(cache);
  if (device < 0) return no_gpu();
  const std::size_t bytes = entry_bytes(info, name);
  if (!cache.make_quota_room(who, bytes)) {
    return {status::over_quota, "a " + shape(info) + " matrix of " + std::to_string(info.bytes()) +
                                    " bytes does not fit tenant '" + who.tenant +
                                    "''s device_bytes quota, even with its other matrices moved to host memory; "
                                    "delete some of its matrices"};
  }
  reservation room(&cache, device);
  if (!room.try_grow(bytes)) {
    return {status::does_not_fit, "no room on " + cache.backends()[static_cast<std::size_t>(device)]->name() +
                                      " for a " + shape(info) + " matrix of " + std::to_string(info.bytes()) +
                                      " bytes now; retry once jobs or matrices free some"};
  }
  try {
    auto stored = store(*cache.backends()[static_cast<std::size_t>(device)]);
    *out = cache.insert_stored(who, room, std::move(stored), name, ttl_seconds);
  } catch (...) {
    return outcome_of(std::current_exception());
  }
  sched.poke();  // a queued job may spill it
  return {};
}

}  // namespace

outcome store_from_device(matrix_cache& cache, scheduler& sched, const caller& who,
                          const spgemm::matrix_info& info, const spgemm::ipc_csr_arrays& arrays,
                          const std::string& name, int64_t ttl_seconds, entry_info* out) {
  return store_on_gpu(cache, sched, who, info, name, ttl_seconds, out,
                      [&](spgemm::backend& b) { return b.store_from_ipc(info, arrays); });
}

outcome store_from_pinned(matrix_cache& cache, scheduler& sched, const caller& who, const spgemm::matrix_info& info,
                          const spgemm::host_csr_arrays& arrays, const std::string& name, int64_t ttl_seconds,
                          entry_info* out) {
  return store_on_gpu(cache, sched, who, info, name, ttl_seconds, out,
                      [&](spgemm::backend& b) { return b.store_from_pinned(info, arrays); });
}

outcome copy_to_device(matrix_cache& cache, cache_entry& e, const spgemm::ipc_csr_arrays& arrays) {
  int device = -1;
  std::shared_ptr<spgemm::stored_matrix> stored;
  std::shared_ptr<const host_matrix> host;
  cache.locate(e, &device, &stored, &host);
  try {
    if (stored && cache.backends()[static_cast<std::size_t>(device)]->is_gpu()) {
      cache.backends()[static_cast<std::size_t>(device)]->fetch_into_ipc(*stored, arrays);
      return {};
    }
    const int gpu = roomiest_gpu(cache);
    if (gpu < 0) return no_gpu();
    stored = cache.make_resident(e, gpu);
    if (!stored) {
      return {status::does_not_fit, "matrix " + e.handle + " is in host memory and no GPU has room to bring it back "
                                    "for the copy now; retry once jobs or matrices free some"};
    }
    struct release {
      matrix_cache& cache;
      cache_entry& e;
      ~release() { cache.release_resident(e); }
    } resident{cache, e};
    cache.backends()[static_cast<std::size_t>(gpu)]->fetch_into_ipc(*stored, arrays);
  } catch (...) {
    return outcome_of(std::current_exception());
  }
  return {};
}

bool fits_arrays(const spgemm::matrix_info& info, const spgemm::ipc_csr_arrays& arrays) {
  const auto rows = static_cast<std::size_t>(info.rows), nnz = static_cast<std::size_t>(info.nnz);
  return arrays.row_offsets.length >= (rows + 1) * sizeof(spgemm::offset_t) &&
         arrays.col_indices.length >= nnz * sizeof(spgemm::index_t) &&
         arrays.values.length >= nnz * spgemm::size_of(info.type);
}

outcome copy_result_to_device(spgemm::backend& made_on, const spgemm::stored_matrix& m,
                              const spgemm::ipc_csr_arrays& arrays) {
  try {
    made_on.fetch_into_ipc(m, arrays);
  } catch (...) {
    return outcome_of(std::current_exception());
  }
  return {};
}

}  // namespace spgemmd::core
