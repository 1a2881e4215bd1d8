#include "core/outcome.hpp"

#include <new>
#include <stdexcept>

namespace spgemmd::core {

outcome outcome_of(const spgemm::error& e) {
  switch (e.kind()) {
    case spgemm::error_kind::bad_input: return {status::invalid_argument, e.what()};
    case spgemm::error_kind::does_not_fit: return {status::does_not_fit, e.what()};
    case spgemm::error_kind::device_failure:
      return {status::device_failure, std::string("device failure: ") + e.what()};
    case spgemm::error_kind::cancelled: return {status::cancelled, e.what()};
  }
  return {status::internal, e.what()};
}

outcome outcome_of(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const spgemm::error& err) {
    return outcome_of(err);
  } catch (const quota_exceeded& err) {
    return {status::over_quota, err.what()};
  } catch (const std::bad_alloc&) {
    return {status::does_not_fit, "out of host memory"};
  } catch (const std::exception& err) {
    return {status::internal, std::string("internal error: ") + err.what()};
  } catch (...) {
    return {status::internal, "internal error"};
  }
}

}  // namespace spgemmd::core
