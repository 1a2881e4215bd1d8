// Matrices that cross device to device with a client on the server's host
// (CUDA IPC): stored from the client's device arrays onto the GPU with most
// room, or copied from the cache into the client's arrays. The backend opens
// the client's memory and checks every range (spgemm::backend::store_from_ipc).
// Uploads from a client's shared memory pinned for the GPUs take the same way
// onto a GPU (store_from_pinned).
#pragma once

#include <string>

#include "core/caller.hpp"
#include "core/matrix_cache.hpp"
#include "core/outcome.hpp"
#include "core/scheduler.hpp"
#include "spgemm/backend.hpp"

namespace spgemmd::core {

// Whether any device is a GPU (CUDA IPC needs one).
bool has_gpu(const matrix_cache& cache);

// Stores the matrix `info` whose arrays are `arrays` as `who`'s tenant's, as
// an upload: within a GPU's budget (does_not_fit where none has room now) and
// the tenant's device quota (over_quota where its own cold matrices can not
// make room), checked on the device.
outcome store_from_device(matrix_cache& cache, scheduler& sched, const caller& who,
                          const spgemm::matrix_info& info, const spgemm::ipc_csr_arrays& arrays,
                          const std::string& name, int64_t ttl_seconds, entry_info* out);

// The same from arrays in host memory pinned for the GPUs (a client's
// shared-memory regions, shm_object::pinned_for): host to device by the
// copy engines alone, checked on the device.
outcome store_from_pinned(matrix_cache& cache, scheduler& sched, const caller& who, const spgemm::matrix_info& info,
                          const spgemm::host_csr_arrays& arrays, const std::string& name, int64_t ttl_seconds,
                          entry_info* out);

// Opens the client's device allocation of CUDA IPC handle `handle` (on the
// first GPU) for a device region, kept open while `out` lives.
outcome open_device_allocation(const matrix_cache& cache, const std::string& handle,
                               std::shared_ptr<const spgemm::ipc_mapping>* out);

// A GPU backend of the cache's (the first), or none.
std::shared_ptr<spgemm::backend> any_gpu(const matrix_cache& cache);

// Copies the pinned entry `e` into `arrays` (a spilled entry comes back to a
// GPU for it: does_not_fit where none has room now).
outcome copy_to_device(matrix_cache& cache, cache_entry& e, const spgemm::ipc_csr_arrays& arrays);

// Whether a matrix of `info` fits `arrays` (each at least its array's bytes).
bool fits_arrays(const spgemm::matrix_info& info, const spgemm::ipc_csr_arrays& arrays);

// Copies a job's result `m`, on `made_on` (a GPU backend), into `arrays`.
outcome copy_result_to_device(spgemm::backend& made_on, const spgemm::stored_matrix& m,
                              const spgemm::ipc_csr_arrays& arrays);

}  // namespace spgemmd::core
