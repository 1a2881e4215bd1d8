// Uploads from a client's shared-memory regions (Local.UploadFromRegion): the
// arrays are read a block of rows at a time from the regions the request
// names into the upload's assembler, which checks each block as Upload checks
// a chunk (so the matrix is valid CSR), and into the cache as an upload goes
// (core::upload: copied to a device while the rest is read).
#pragma once

#include <string>

#include <grpcpp/grpcpp.h>

#include "core/caller.hpp"
#include "rpc/service_state.hpp"
#include "spgemm/v1/spgemm.pb.h"

namespace spgemmd {

// Stores the matrix `request` names, in regions `who` sees, as `who`'s
// tenant's; its info in `out`.
grpc::Status upload_from_region(service_state& s, const core::caller& who,
                                const spgemm::v1::RegionUploadRequest& request, spgemm::v1::MatrixInfo* out);

}  // namespace spgemmd
