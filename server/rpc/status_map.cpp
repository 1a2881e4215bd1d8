#include "rpc/status_map.hpp"

namespace spgemmd {

grpc::Status to_grpc_status(const core::outcome& o) {
  switch (o.code) {
    case core::status::ok: return grpc::Status::OK;
    case core::status::invalid_argument: return {grpc::StatusCode::INVALID_ARGUMENT, o.message};
    case core::status::not_found: return {grpc::StatusCode::NOT_FOUND, o.message};
    case core::status::does_not_fit:
    case core::status::queue_full:
    case core::status::over_quota: return {grpc::StatusCode::RESOURCE_EXHAUSTED, o.message};
    case core::status::shutting_down: return {grpc::StatusCode::UNAVAILABLE, o.message};
    case core::status::cancelled: return {grpc::StatusCode::CANCELLED, o.message};
    case core::status::device_failure:
    case core::status::internal: return {grpc::StatusCode::INTERNAL, o.message};
  }
  return {grpc::StatusCode::INTERNAL, o.message};
}

grpc::Status to_grpc_status(std::exception_ptr e) { return to_grpc_status(core::outcome_of(e)); }

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
