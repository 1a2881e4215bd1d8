// The services beside spgemm.v1.Spgemm: spgemm.v1.Values (new values for a
// stored matrix: values_reactor) and spgemm.v1.Amg (multigrid hierarchies:
// the unary calls in amg_calls.cpp answer when their job ends; Solve streams
// through amg_solve_reactor), on gRPC's callback API over the same state.
#pragma once

#include "rpc/service_state.hpp"
#include "spgemm/v1/amg.grpc.pb.h"
#include "spgemm/v1/values.grpc.pb.h"

namespace spgemmd {

class values_service final : public spgemm::v1::Values::CallbackService {
 public:
  explicit values_service(service_state& state) : state_(state) {}
  grpc::ServerReadReactor<spgemm::v1::ValuesPart>* UpdateValues(grpc::CallbackServerContext* ctx,
                                                                spgemm::v1::MatrixInfo* response) override;

 private:
  service_state& state_;
};

class amg_service final : public spgemm::v1::Amg::CallbackService {
 public:
  explicit amg_service(service_state& state) : state_(state) {}
  grpc::ServerUnaryReactor* Setup(grpc::CallbackServerContext* ctx, const spgemm::v1::AmgSetupRequest* request,
                                  spgemm::v1::AmgHierarchy* response) override;
  grpc::ServerUnaryReactor* Resetup(grpc::CallbackServerContext* ctx, const spgemm::v1::AmgHierarchyRequest* request,
                                    spgemm::v1::AmgHierarchy* response) override;
  grpc::ServerBidiReactor<spgemm::v1::AmgSolvePart, spgemm::v1::AmgSolveReply>* Solve(
      grpc::CallbackServerContext* ctx) override;
  grpc::ServerUnaryReactor* Describe(grpc::CallbackServerContext* ctx, const spgemm::v1::AmgHierarchyRequest* request,
                                     spgemm::v1::AmgHierarchy* response) override;
  grpc::ServerUnaryReactor* Delete(grpc::CallbackServerContext* ctx, const spgemm::v1::AmgHierarchyRequest* request,
                                   spgemm::v1::DeleteResponse* response) override;

 private:
  service_state& state_;
};

// What AmgHierarchy says of a kept hierarchy.
void to_proto(core::amg_record& r, const core::matrix_cache& cache, spgemm::v1::AmgHierarchy* out);

}  // namespace spgemmd
