// The one place engine failures become gRPC status codes.
#pragma once

#include <exception>

#include <grpcpp/support/status.h>

#include "spgemm/errors.hpp"

namespace spgemmd {

// bad_input -> INVALID_ARGUMENT, does_not_fit -> RESOURCE_EXHAUSTED,
// device_failure -> INTERNAL, cancelled -> CANCELLED; std::bad_alloc ->
// RESOURCE_EXHAUSTED; anything else -> INTERNAL. The message is the error's.
grpc::Status to_grpc_status(const spgemm::error& e);
// Maps the exception `e` (call from a catch block with std::current_exception()).
grpc::Status to_grpc_status(std::exception_ptr e);

// Lower-case name of a status code for metrics and logs ("ok", "not_found").
const char* code_name(grpc::StatusCode code);

}  // namespace spgemmd
