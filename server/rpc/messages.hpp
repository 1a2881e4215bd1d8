// What the reactors share of spgemm.v1's messages: requests parsed from raw
// bytes, options and replies converted, the caller's tenant.
#pragma once

#include <string>

#include <grpcpp/grpcpp.h>

#include "core/matrix_cache.hpp"
#include "spgemm/multiply.hpp"
#include "spgemm/v1/spgemm.grpc.pb.h"

namespace spgemmd {

// Parses a message received as raw bytes.
template <typename M>
grpc::Status parse(const grpc::ByteBuffer& raw, M* out) {
  grpc::ByteBuffer copy(raw);  // shares the slices; Deserialize consumes its buffer
  if (grpc::SerializationTraits<M>::Deserialize(&copy, out).ok()) return grpc::Status::OK;
  return {grpc::StatusCode::INVALID_ARGUMENT, "the message does not parse as " + out->GetTypeName()};
}

// The caller's tenant. Empty until authentication arrives; it will read the
// call's auth metadata.
std::string tenant_of(const grpc::CallbackServerContext* ctx);

// The status of a call that arrives while the server shuts down.
grpc::Status unavailable();

// A unary call answered at once, on gRPC's default reactor.
grpc::ServerUnaryReactor* finished(grpc::CallbackServerContext* ctx, grpc::Status status);

spgemm::v1::ValueType to_proto(spgemm::value_type t);
void to_proto(const core::entry_info& e, spgemm::v1::MatrixInfo* out);
grpc::Status options_from(const spgemm::v1::MultiplyOptions& o, spgemm::multiply_options* out);

}  // namespace spgemmd
