// The shared course of the calls that run a job and stream, keep or write
// into a region its result (Multiply, Galerkin, Transpose; the Graph
// service's calls): open the call (open_call: the server up, the caller
// authenticated, the request parsed), check it and build its job with a
// recipe, then run it on a result_reactor as the request's output asks.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "core/caller.hpp"
#include "core/job.hpp"
#include "rpc/result_reactor.hpp"
#include "rpc/service_state.hpp"
#include "spgemm/v1/spgemm.pb.h"

namespace spgemmd {

// Checks a request and builds its job with a recipe.
using job_builder = std::function<grpc::Status(const core::caller& who, std::shared_ptr<core::job>* out)>;

// The reactor of such a call, for the service method to return.
grpc::ServerWriteReactor<grpc::ByteBuffer>* run_product(service_state& s, grpc::CallbackServerContext* ctx,
                                                        const char* kind, const grpc::Status& parsed,
                                                        const spgemm::v1::ProductOutput& output,
                                                        const job_builder& build);

// Where the request named a region to write a result into: the caller
// (`who`, past open_call) may (local_gate), and the range is one of the
// regions it sees (8-byte aligned); `r` then writes there.
grpc::Status region_target(service_state& s, const grpc::CallbackServerContext* ctx, const core::caller& who,
                           const spgemm::v1::RegionRef& ref, result_reactor* r);

// Pins the matrix that request field `field` names.
grpc::Status pin_matrix(service_state& s, const core::caller& who, const char* field, const std::string& handle,
                        core::pin* out);

}  // namespace spgemmd
