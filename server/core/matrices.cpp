#include "core/matrices.hpp"

namespace spgemmd::core {

namespace {

outcome not_found(const std::string& handle) {
  return {status::not_found, "no matrix with handle " + handle + "; it may have expired or been deleted"};
}

outcome empty_handle() { return {status::invalid_argument, "request field 'handle' is empty"}; }

}  // namespace

std::string shape(const spgemm::matrix_info& m) { return std::to_string(m.rows) + " x " + std::to_string(m.cols); }

outcome check_name(const char* field, const std::string& name) {
  if (name.size() <= max_name_bytes) return {};
  return {status::invalid_argument, std::string("request field '") + field + "' holds a name of " +
                                        std::to_string(name.size()) + " bytes; names are at most " +
                                        std::to_string(max_name_bytes) + " bytes"};
}

outcome pin_matrix(matrix_cache& cache, const caller& who, const char* field, const std::string& handle, pin* out) {
  if (handle.empty()) {
    return {status::invalid_argument,
            std::string("request field '") + field +
                "' is empty: give the handle of a stored matrix (from Upload or a kept result)"};
  }
  *out = cache.acquire(who, handle);
  if (!*out) return not_found(handle);
  return {};
}

outcome describe_matrix(matrix_cache& cache, const caller& who, const std::string& handle, entry_info* out) {
  if (handle.empty()) return empty_handle();
  auto e = cache.describe(who, handle);
  if (!e) return not_found(handle);
  *out = std::move(*e);
  return {};
}

outcome update_values(matrix_cache& cache, const caller& who, const std::string& handle, spgemm::value_type type,
                      int64_t count, const void* values, entry_info* out) {
  pin e;
  if (outcome o = pin_matrix(cache, who, "handle", handle, &e); !o.ok()) return o;
  if (type != e->info.type || count != e->info.nnz) {
    return {status::invalid_argument, "matrix " + handle + " holds " + std::to_string(e->info.nnz) + " " +
                                          std::string(spgemm::to_string(e->info.type)) + " values; got " +
                                          std::to_string(count) + " " + std::string(spgemm::to_string(type))};
  }
  try {
    cache.write_values(*e, values);
  } catch (...) {
    return outcome_of(std::current_exception());
  }
  auto described = cache.describe(who, handle);
  if (!described) return not_found(handle);
  *out = std::move(*described);
  return {};
}

outcome delete_matrix(matrix_cache& cache, const caller& who, const std::string& handle, std::size_t* freed) {
  if (handle.empty()) return empty_handle();
  auto bytes = cache.erase(who, handle);
  if (!bytes) return not_found(handle);
  *freed = *bytes;
  return {};
}

}  // namespace spgemmd::core
