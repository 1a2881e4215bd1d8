#include "core/upload.hpp"

#include <algorithm>

#include "core/matrices.hpp"

namespace spgemmd::core {

outcome upload::check(const matrix_cache& cache, const spgemm::matrix_info& info) {
  // Larger than every device, it stays in host memory: products read it in row panels.
  const std::size_t budget = std::max(cache.largest_budget(), cache.host_budget());
  if (info.bytes() <= budget) return {};
  return {status::does_not_fit, "a " + shape(info) + " matrix with nnz=" + std::to_string(info.nnz) + " takes " +
                                    std::to_string(info.bytes()) + " bytes; the largest device budget and the host "
                                    "budget are " + std::to_string(cache.largest_budget()) + " and " +
                                    std::to_string(cache.host_budget()) + " bytes, so it can never be stored here"};
}

upload::upload(matrix_cache& cache, scheduler& sched, const spgemm::matrix_info& info,
               const spgemm::host_csr_arrays& arrays)
    : cache_(cache), sched_(sched), pipeline_(upload_pipeline::open(cache, info, arrays)) {}

void upload::arrived(int64_t rows, int64_t nnz) {
  if (pipeline_) pipeline_->arrived(rows, nnz);
}

entry_info upload::store(const std::string& tenant, spgemm::any_csr& m, const std::string& name,
                         int64_t ttl_seconds) {
  if (!pipeline_) return cache_.insert_host(tenant, m, name, ttl_seconds);
  // Most of it is on the device already.
  const int64_t rows = spgemm::info_of(m).rows;
  entry_info e = cache_.insert_stored(tenant, pipeline_->room(), pipeline_->finish(rows), name, ttl_seconds);
  pipeline_.reset();
  sched_.poke();  // its room, held while it arrived, is now a cached matrix that a queued job may spill
  return e;
}

}  // namespace spgemmd::core
