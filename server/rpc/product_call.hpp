// The shared course of the calls that run a job and stream or keep its
// result (Multiply, Galerkin, Transpose; the Graph service's calls): refuse
// while shutting down or when the request did not parse, check it and build
// its job with a recipe, then run it on a result_reactor.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "core/job.hpp"
#include "rpc/service_state.hpp"
#include "spgemm/v1/spgemm.pb.h"

namespace spgemmd {

// Checks a request and builds its job with a recipe.
using job_builder = std::function<grpc::Status(const std::string& tenant, std::shared_ptr<core::job>* out)>;

// The reactor of such a call, for the service method to return.
grpc::ServerWriteReactor<grpc::ByteBuffer>* run_product(service_state& s, grpc::CallbackServerContext* ctx,
                                                        const char* kind, const grpc::Status& parsed,
                                                        const spgemm::v1::ProductOutput& output,
                                                        const job_builder& build);

// Pins the matrix that request field `field` names.
grpc::Status pin_matrix(service_state& s, const std::string& tenant, const char* field, const std::string& handle,
                        core::pin* out);

}  // namespace spgemmd
