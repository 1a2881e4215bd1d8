// The unary calls of spgemm.v1.Spgemm: Delete, List, Describe, Status, each
// answered at once on gRPC's default reactor.
#include "rpc/service.hpp"

#include <chrono>

#include "core/matrices.hpp"
#include "core/server_status.hpp"
#include "ops/log.hpp"
#include "rpc/messages.hpp"
#include "rpc/status_map.hpp"

namespace spgemmd {

namespace v1 = spgemm::v1;

namespace {

grpc::ServerUnaryReactor* finished(grpc::CallbackServerContext* ctx, grpc::Status status) {
  auto* r = ctx->DefaultReactor();
  r->Finish(std::move(status));
  return r;
}

}  // namespace

grpc::ServerUnaryReactor* spgemm_service::Delete(grpc::CallbackServerContext* ctx, const v1::DeleteRequest* request,
                                                 v1::DeleteResponse* response) {
  if (state_.shutting_down) return finished(ctx, unavailable());
  std::size_t freed = 0;
  const core::outcome deleted = core::delete_matrix(state_.cache, tenant_of(ctx), request->handle(), &freed);
  if (!deleted.ok()) return finished(ctx, to_grpc_status(deleted));
  response->set_freed_bytes(static_cast<int64_t>(freed));
  log_event("info", "delete", {{"handle", request->handle()}, {"freed_bytes", static_cast<int64_t>(freed)}});
  return finished(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor* spgemm_service::List(grpc::CallbackServerContext* ctx, const v1::ListRequest*,
                                               v1::ListResponse* response) {
  if (state_.shutting_down) return finished(ctx, unavailable());
  for (const auto& e : state_.cache.list(tenant_of(ctx))) to_proto(e, response->add_matrices());
  return finished(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor* spgemm_service::Describe(grpc::CallbackServerContext* ctx,
                                                   const v1::DescribeRequest* request, v1::MatrixInfo* response) {
  if (state_.shutting_down) return finished(ctx, unavailable());
  core::entry_info e;
  const core::outcome described = core::describe_matrix(state_.cache, tenant_of(ctx), request->handle(), &e);
  if (!described.ok()) return finished(ctx, to_grpc_status(described));
  to_proto(e, response);
  return finished(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor* spgemm_service::Status(grpc::CallbackServerContext* ctx, const v1::StatusRequest*,
                                                 v1::ServerStatus* response) {
  const core::server_status s = core::status_of(state_.cache, state_.sched);
  response->set_version(state_.version);
  for (const core::device_status& d : s.devices) {
    v1::DeviceStatus* out = response->add_devices();
    out->set_name(d.name);
    out->set_description(d.description);
    out->set_is_gpu(d.is_gpu);
    out->set_total_bytes(static_cast<int64_t>(d.memory.total_bytes));
    out->set_free_bytes(static_cast<int64_t>(d.memory.free_bytes));
    out->set_budget_bytes(static_cast<int64_t>(d.cache.budget));
    out->set_cached_bytes(static_cast<int64_t>(d.cache.cached));
    out->set_reserved_bytes(static_cast<int64_t>(d.cache.reserved));
    out->set_jobs_running(d.jobs_running);
    out->set_peak_bytes(static_cast<int64_t>(d.memory.peak_bytes));
    out->set_jobs_queued(d.jobs_queued);
    out->set_panels_in_flight(d.cache.panels_in_flight);
    out->set_bytes_to_device(d.cache.bytes_to_device);
    out->set_bytes_to_host(d.cache.bytes_to_host);
    out->set_bytes_from_peer(d.cache.bytes_from_peer);
  }
  response->set_queue_depth(s.jobs.queue_depth);
  response->set_jobs_running(s.jobs.running);
  response->set_matrices(s.matrices);
  response->set_host_cached_bytes(static_cast<int64_t>(s.host_bytes));
  response->set_host_budget_bytes(static_cast<int64_t>(s.host_budget));
  response->set_uptime_seconds(std::chrono::duration<double>(core::steady::now() - state_.started).count());
  response->set_jobs_completed(s.jobs.completed);
  response->set_jobs_failed(s.jobs.failed);
  return finished(ctx, grpc::Status::OK);
}

}  // namespace spgemmd
