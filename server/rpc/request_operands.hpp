// A product's operands named by handle or, for clients on the server's host,
// read from the caller's shared-memory regions or CUDA device arrays for the
// call alone (MultiplyRequest.a_region, a_device, GalerkinRequest.p_region,
// ...): stored as an upload from the regions or the device is, pinned for the
// job, and deleted when the request's operands are all pinned, so that they
// live on unlisted until the job's pins go. One round trip instead of an
// upload, the product and a delete.
#pragma once

#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "core/caller.hpp"
#include "core/matrix_cache.hpp"
#include "rpc/service_state.hpp"
#include "spgemm/v1/spgemm.pb.h"

namespace spgemmd {

// Where a request's operand lies besides a handle: a region, device arrays
// (each nullptr where the request has none).
struct operand_source {
  const spgemm::v1::RegionUploadRequest* region = nullptr;
  const spgemm::v1::DeviceUploadRequest* device = nullptr;
  bool given() const { return region != nullptr || device != nullptr; }
};

class request_operands {
 public:
  request_operands(service_state& s, const grpc::CallbackServerContext* ctx, const core::caller& who)
      : s_(s), ctx_(ctx), who_(who) {}
  // Deletes the matrices stored for the call (pinned, they live on).
  ~request_operands();
  request_operands(const request_operands&) = delete;
  request_operands& operator=(const request_operands&) = delete;

  // Pins operand `field`: the matrix `handle` names or, where `from` gives
  // one, the matrix in the caller's regions or device arrays, stored for the
  // call (invalid_argument for more than one). `pinned` (optional): the
  // handle pinned.
  grpc::Status pin(const std::string& field, const std::string& handle, const operand_source& from, core::pin* out,
                   std::string* pinned = nullptr);

 private:
  service_state& s_;
  const grpc::CallbackServerContext* ctx_;
  const core::caller& who_;
  std::vector<std::string> stored_;
};

// `m` where the request has it, else nullptr.
template <typename M>
const M* present(bool has, const M& m) {
  return has ? &m : nullptr;
}

}  // namespace spgemmd
