#include "rpc/status_map.hpp"

#include <new>
#include <stdexcept>
#include <string>

namespace spgemmd {

grpc::Status to_grpc_status(const spgemm::error& e) {
  switch (e.kind()) {
    case spgemm::error_kind::bad_input: return {grpc::StatusCode::INVALID_ARGUMENT, e.what()};
    case spgemm::error_kind::does_not_fit: return {grpc::StatusCode::RESOURCE_EXHAUSTED, e.what()};
    case spgemm::error_kind::device_failure:
      return {grpc::StatusCode::INTERNAL, std::string("device failure: ") + e.what()};
    case spgemm::error_kind::cancelled: return {grpc::StatusCode::CANCELLED, e.what()};
  }
  return {grpc::StatusCode::INTERNAL, e.what()};
}

grpc::Status to_grpc_status(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const spgemm::error& err) {
    return to_grpc_status(err);
  } catch (const std::bad_alloc&) {
    return {grpc::StatusCode::RESOURCE_EXHAUSTED, "out of host memory"};
  } catch (const std::exception& err) {
    return {grpc::StatusCode::INTERNAL, std::string("internal error: ") + err.what()};
  } catch (...) {
    return {grpc::StatusCode::INTERNAL, "internal error"};
  }
}

const char* code_name(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return "ok";
    case grpc::StatusCode::CANCELLED: return "cancelled";
    case grpc::StatusCode::UNKNOWN: return "unknown";
    case grpc::StatusCode::INVALID_ARGUMENT: return "invalid_argument";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "deadline_exceeded";
    case grpc::StatusCode::NOT_FOUND: return "not_found";
    case grpc::StatusCode::ALREADY_EXISTS: return "already_exists";
    case grpc::StatusCode::PERMISSION_DENIED: return "permission_denied";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "resource_exhausted";
    case grpc::StatusCode::FAILED_PRECONDITION: return "failed_precondition";
    case grpc::StatusCode::ABORTED: return "aborted";
    case grpc::StatusCode::OUT_OF_RANGE: return "out_of_range";
    case grpc::StatusCode::UNIMPLEMENTED: return "unimplemented";
    case grpc::StatusCode::INTERNAL: return "internal";
    case grpc::StatusCode::UNAVAILABLE: return "unavailable";
    case grpc::StatusCode::DATA_LOSS: return "data_loss";
    case grpc::StatusCode::UNAUTHENTICATED: return "unauthenticated";
    default: return "other";
  }
}

}  // namespace spgemmd
