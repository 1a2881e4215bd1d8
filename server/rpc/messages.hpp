// What the reactors share of spgemm.v1's messages: requests parsed from raw
// bytes, options and replies converted, the checks every call opens with.
#pragma once

#include <string>

#include <grpcpp/grpcpp.h>

#include "core/caller.hpp"
#include "core/matrix_cache.hpp"
#include "rpc/service_state.hpp"
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

// The status of a call that arrives while the server shuts down.
grpc::Status unavailable();

// What every call passes first, in this order: the server is not shutting
// down (UNAVAILABLE), the caller is who its token says (UNAUTHENTICATED: a
// caller without a valid token learns nothing of its request, not even
// whether it parsed), and its request parsed (`parsed`). `who` is the caller
// once they pass.
grpc::Status open_call(const service_state& s, const grpc::ServerContextBase& ctx, const grpc::Status& parsed,
                       core::caller* who);

spgemm::v1::ValueType to_proto(spgemm::value_type t);
void to_proto(const core::entry_info& e, spgemm::v1::MatrixInfo* out);
void to_proto(const core::caller& who, spgemm::v1::ServerStatus* out);
grpc::Status options_from(const spgemm::v1::MultiplyOptions& o, spgemm::multiply_options* out);

}  // namespace spgemmd
