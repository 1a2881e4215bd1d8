#include "core/upload.hpp"

#include <algorithm>

#include "core/matrices.hpp"
#include "spgemm/errors.hpp"

namespace spgemmd::core {

outcome upload::check(const matrix_cache& cache, const caller& who, const spgemm::matrix_info& info) {
  // Larger than every device, it stays in host memory: products read it in row panels.
  const std::size_t budget = std::max(cache.largest_budget(), cache.host_budget());
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
                                    std::to_string(info.bytes()) + " bytes; the largest device budget and the host "
                                    "budget are " + std::to_string(cache.largest_budget()) + " and " +
                                    std::to_string(cache.host_budget()) + " bytes, so it can never be stored here"};
}

upload::upload(matrix_cache& cache, scheduler& sched, caller who, const spgemm::matrix_info& info, std::string name,
               const spgemm::host_csr_arrays& arrays)
    : cache_(cache), sched_(sched), caller_(std::move(who)), name_(std::move(name)) {
  const std::size_t bytes = entry_bytes(info, name_);
  if (cache.make_quota_room(caller_, bytes)) pipeline_ = upload_pipeline::open(cache, info, bytes, arrays);
  if (pipeline_) return;
  host_room_ = reservation(&cache, matrix_cache::host);
  if (!host_room_.try_grow(bytes)) {
    throw spgemm::error(spgemm::error_kind::does_not_fit,
                        "no room for a matrix of " + std::to_string(bytes) +
                            " bytes: every device budget and the host budget are in use; delete matrices or retry "
                            "later");
  }
}

void upload::arrived(int64_t rows, int64_t nnz) {
  if (pipeline_) pipeline_->arrived(rows, nnz);
}

entry_info upload::store(spgemm::any_csr& m, int64_t ttl_seconds) {
  if (!pipeline_) {
    entry_info e = cache_.insert_host(caller_, m, name_, ttl_seconds, &host_room_);
    host_room_.release();  // what the entry did not take (all of it, where it went to a device)
    return e;
  }
  // Most of it is on the device already.
  const int64_t rows = spgemm::info_of(m).rows;
  entry_info e = cache_.insert_stored(caller_, pipeline_->room(), pipeline_->finish(rows), name_, ttl_seconds);
  pipeline_.reset();
  sched_.poke();  // its room, held while it arrived, is now a cached matrix that a queued job may spill
  return e;
}

}  // namespace spgemmd::core
