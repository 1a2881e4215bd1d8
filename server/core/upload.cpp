#include "core/upload.hpp"

#include <algorithm>

#include "core/matrices.hpp"

namespace spgemmd::core {

outcome upload::check(const matrix_cache& cache, const caller& who, const spgemm::matrix_info& info) {
  const std::size_t budget = cache.largest_budget();
  const quotas& q = who.limits;
  if (q.device_bytes > 0 && q.host_bytes > 0 && info.bytes() > std::max(q.device_bytes, q.host_bytes)) {
    return {status::over_quota, "a " + shape(info) + " matrix with nnz=" + std::to_string(info.nnz) + " takes " +
                                    std::to_string(info.bytes()) + " bytes, more than tenant '" + who.tenant +
                                    "''s device_bytes quota (" + std::to_string(q.device_bytes) +
                                    ") and host_bytes quota (" + std::to_string(q.host_bytes) +
                                    "), so it can never be kept"};
  }
  if (info.bytes() <= budget) return {};
  return {status::does_not_fit, "a " + shape(info) + " matrix with nnz=" + std::to_string(info.nnz) + " takes " +
                                    std::to_string(info.bytes()) + " bytes; the largest device budget is " +
                                    std::to_string(budget) + " bytes, so it can never be used here"};
}

upload::upload(matrix_cache& cache, scheduler& sched, caller who, const spgemm::matrix_info& info,
               const spgemm::host_csr_arrays& arrays)
    : cache_(cache), sched_(sched), caller_(std::move(who)),
      pipeline_(cache.make_quota_room(caller_, info.bytes()) ? upload_pipeline::open(cache, info, arrays) : nullptr) {}

void upload::arrived(int64_t rows, int64_t nnz) {
  if (pipeline_) pipeline_->arrived(rows, nnz);
}

entry_info upload::store(spgemm::any_csr& m, const std::string& name, int64_t ttl_seconds) {
  if (!pipeline_) return cache_.insert_host(caller_, m, name, ttl_seconds);
  // Most of it is on the device already.
  const int64_t rows = spgemm::info_of(m).rows;
  entry_info e = cache_.insert_stored(caller_, pipeline_->room(), pipeline_->finish(rows), name, ttl_seconds);
  pipeline_.reset();
  sched_.poke();  // its room, held while it arrived, is now a cached matrix that a queued job may spill
  return e;
}

}  // namespace spgemmd::core
