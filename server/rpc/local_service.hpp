// The spgemm.v1.Local service (proto/spgemm/v1/local.proto): sessions,
// the proof that a caller shares the host, shared-memory regions, and uploads
// from regions or CUDA device memory. Every call opens as Spgemm's do
// (open_call: the server up, the caller authenticated) and is scoped to its
// caller's tenant; it is refused to callers that are not on the server's
// host, and regions and CUDA IPC also where disabled.
#pragma once

#include <string>

#include <grpcpp/grpcpp.h>

#include "rpc/service_state.hpp"
#include "spgemm/v1/local.grpc.pb.h"

namespace spgemmd {

class local_service final : public spgemm::v1::Local::CallbackService {
 public:
  explicit local_service(service_state& state) : state_(state) {}

  grpc::ServerWriteReactor<spgemm::v1::SessionEvent>* OpenSession(grpc::CallbackServerContext* ctx,
                                                                 const spgemm::v1::OpenSessionRequest*) override;
  grpc::ServerUnaryReactor* ProveLocal(grpc::CallbackServerContext* ctx, const spgemm::v1::ProveLocalRequest* request,
                                       spgemm::v1::ProveLocalResponse* response) override;
  grpc::ServerUnaryReactor* RegisterRegion(grpc::CallbackServerContext* ctx,
                                           const spgemm::v1::RegisterRegionRequest* request,
                                           spgemm::v1::RegionInfo* response) override;
  grpc::ServerUnaryReactor* UnregisterRegion(grpc::CallbackServerContext* ctx,
                                             const spgemm::v1::UnregisterRegionRequest* request,
                                             spgemm::v1::UnregisterRegionResponse* response) override;
  grpc::ServerUnaryReactor* ListRegions(grpc::CallbackServerContext* ctx, const spgemm::v1::ListRegionsRequest* request,
                                        spgemm::v1::ListRegionsResponse* response) override;
  grpc::ServerUnaryReactor* UploadFromRegion(grpc::CallbackServerContext* ctx,
                                             const spgemm::v1::RegionUploadRequest* request,
                                             spgemm::v1::MatrixInfo* response) override;
  grpc::ServerUnaryReactor* UploadFromDevice(grpc::CallbackServerContext* ctx,
                                             const spgemm::v1::DeviceUploadRequest* request,
                                             spgemm::v1::MatrixInfo* response) override;

 private:
  service_state& state_;
};

// OK where a caller that passed open_call may use the Local service's `what`
// (shared memory, CUDA IPC, or either): on this host, the feature enabled
// (CUDA IPC: and a GPU backend).
enum class local_feature { any, shared_memory, cuda_ipc };
grpc::Status local_gate(service_state& s, const grpc::CallbackServerContext* ctx, local_feature what);

// open_call, then local_gate: how every Local call opens. `who` is the
// caller once both pass.
grpc::Status open_local_call(service_state& s, grpc::CallbackServerContext* ctx, local_feature what,
                             core::caller* who);

// The engine's form of a request's device arrays, those in device regions
// resolved as `who` sees them (NOT_FOUND, INVALID_ARGUMENT as region_registry's).
grpc::Status device_arrays_of(const service_state& s, const core::caller& who, const spgemm::v1::DeviceCsr& d,
                              spgemm::ipc_csr_arrays* out);

// Stores the matrix in the device arrays `request` names (CUDA IPC, copied
// device to device) as `who`'s tenant's; its info in `out`. The caller has
// passed local_gate for CUDA IPC.
grpc::Status upload_from_device(service_state& s, const core::caller& who,
                                const spgemm::v1::DeviceUploadRequest& request, spgemm::v1::MatrixInfo* out);

}  // namespace spgemmd
