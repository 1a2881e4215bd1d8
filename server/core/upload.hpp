// An uploaded matrix on its way into the cache. Where a device has room at the
// header, that room is held and the rows are copied there as they arrive
// (upload_pipeline); otherwise the matrix is stored whole at the end, on a
// device with room then, or in host memory. A failed or abandoned upload
// frees its room when destroyed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/caller.hpp"
#include "core/matrix_cache.hpp"
#include "core/outcome.hpp"
#include "core/scheduler.hpp"
#include "core/upload_pipeline.hpp"
#include "spgemm/backend.hpp"

namespace spgemmd::core {

class upload {
 public:
  // does_not_fit where a matrix of `info` is larger than every device budget:
  // it could never be used here; over_quota where it is larger than both of
  // `who`'s byte quotas: it could never be kept.
  static outcome check(const matrix_cache& cache, const caller& who, const spgemm::matrix_info& info);

  // A matrix of `info` arriving into `arrays` (reserved for all of it), for
  // `who`'s tenant. Throws what the backend throws.
  upload(matrix_cache& cache, scheduler& sched, caller who, const spgemm::matrix_info& info,
         const spgemm::host_csr_arrays& arrays);

  // Rows [0, rows) and `nnz` entries have arrived. Rethrows what a copy threw.
  void arrived(int64_t rows, int64_t nnz);
  // Every row arrived, in `m` (the arrays given at the start): adds it to the
  // cache (`m` is moved from where it goes to host memory). Throws
  // quota_exceeded where the tenant's quotas hold it nowhere.
  entry_info store(spgemm::any_csr& m, const std::string& name, int64_t ttl_seconds);

 private:
  matrix_cache& cache_;
  scheduler& sched_;
  const caller caller_;
  // Where a device, and the tenant's device quota, had room at the header.
  std::unique_ptr<upload_pipeline> pipeline_;
};

}  // namespace spgemmd::core
