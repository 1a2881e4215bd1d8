// A product's operands named by handle or, for clients on the server's host,
// read from the caller's shared-memory regions for the call alone
// (MultiplyRequest.a_region, b_region): stored as an upload from the regions
// is, pinned for the job, and deleted at once, so that they live on unlisted
// until the job's pins go. One round trip instead of an upload, the product
// and a delete.
#pragma once

#include <grpcpp/grpcpp.h>

#include "core/caller.hpp"
#include "core/matrix_cache.hpp"
#include "rpc/service_state.hpp"
#include "spgemm/v1/spgemm.pb.h"

namespace spgemmd {

// Pins A and B of `request` (B = A where a_region is given and B is not).
grpc::Status multiply_operands(service_state& s, const grpc::CallbackServerContext* ctx, const core::caller& who,
                               const spgemm::v1::MultiplyRequest& request, core::pin* a, core::pin* b);

}  // namespace spgemmd
