// The spgemm.v1.Spgemm service on gRPC's callback API: one reactor per
// streaming call (uploads read chunks; products, transposes and downloads
// write them), unary calls on the default reactor. The service knows the
// engine only through its public API, the cache and the scheduler.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "cache/matrix_cache.hpp"
#include "ops/config.hpp"
#include "ops/metrics.hpp"
#include "scheduler/scheduler.hpp"
#include "spgemm/v1/spgemm.grpc.pb.h"

namespace spgemmd {

struct service_state {
  matrix_cache& cache;
  scheduler& sched;
  metrics_registry& metrics;
  const config& cfg;
  std::string version;
  steady::time_point started = steady::now();
  std::atomic<bool> shutting_down{false};

  service_state(matrix_cache& c, scheduler& s, metrics_registry& m, const config& cf, std::string v)
      : cache(c), sched(s), metrics(m), cfg(cf), version(std::move(v)) {}
};

// Declares the service's metrics and installs the scrape-time gauges.
void register_metrics(service_state& state);

class spgemm_service final : public spgemm::v1::Spgemm::CallbackService {
 public:
  explicit spgemm_service(service_state& state) : state_(state) {}

  grpc::ServerReadReactor<spgemm::v1::UploadPart>* Upload(grpc::CallbackServerContext* ctx,
                                                         spgemm::v1::MatrixInfo* response) override;
  grpc::ServerWriteReactor<spgemm::v1::ResultPart>* Multiply(grpc::CallbackServerContext* ctx,
                                                             const spgemm::v1::MultiplyRequest* request) override;
  grpc::ServerWriteReactor<spgemm::v1::ResultPart>* Galerkin(grpc::CallbackServerContext* ctx,
                                                             const spgemm::v1::GalerkinRequest* request) override;
  grpc::ServerWriteReactor<spgemm::v1::ResultPart>* Transpose(grpc::CallbackServerContext* ctx,
                                                              const spgemm::v1::TransposeRequest* request) override;
  grpc::ServerWriteReactor<spgemm::v1::ResultPart>* Download(grpc::CallbackServerContext* ctx,
                                                             const spgemm::v1::DownloadRequest* request) override;
  grpc::ServerUnaryReactor* Delete(grpc::CallbackServerContext* ctx, const spgemm::v1::DeleteRequest* request,
                                   spgemm::v1::DeleteResponse* response) override;
  grpc::ServerUnaryReactor* List(grpc::CallbackServerContext* ctx, const spgemm::v1::ListRequest* request,
                                 spgemm::v1::ListResponse* response) override;
  grpc::ServerUnaryReactor* Describe(grpc::CallbackServerContext* ctx, const spgemm::v1::DescribeRequest* request,
                                     spgemm::v1::MatrixInfo* response) override;
  grpc::ServerUnaryReactor* Status(grpc::CallbackServerContext* ctx, const spgemm::v1::StatusRequest* request,
                                   spgemm::v1::ServerStatus* response) override;

 private:
  service_state& state_;
};

}  // namespace spgemmd
