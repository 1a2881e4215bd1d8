// The one place the core's outcomes become gRPC status codes.
#pragma once

#include <exception>

#include <grpcpp/support/status.h>

#include "core/outcome.hpp"

namespace spgemmd {

// invalid_argument -> INVALID_ARGUMENT, not_found -> NOT_FOUND, does_not_fit,
// queue_full and over_quota -> RESOURCE_EXHAUSTED, shutting_down -> UNAVAILABLE,
// cancelled -> CANCELLED, device_failure and internal -> INTERNAL. The
// message is the outcome's.
grpc::Status to_grpc_status(const core::outcome& o);
// The status of the exception `e` (from a catch block: std::current_exception()).
grpc::Status to_grpc_status(std::exception_ptr e);

// Lower-case name of a status code for metrics and logs ("ok", "not_found").
const char* code_name(grpc::StatusCode code);

}  // namespace spgemmd
