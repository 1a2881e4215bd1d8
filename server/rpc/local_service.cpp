#include "rpc/local_service.hpp"

#include <chrono>

#include "core/device_transfer.hpp"
#include "core/region_ref.hpp"
#include "core/shm_object.hpp"
#include "ops/log.hpp"
#include "rpc/local_peer.hpp"
#include "rpc/messages.hpp"
#include "rpc/region_upload.hpp"
#include "rpc/session_reactor.hpp"
#include "rpc/status_map.hpp"
#include "wire/chunk_codec.hpp"

namespace spgemmd {

namespace v1 = spgemm::v1;

namespace {

grpc::Status not_permitted(const std::string& message) {
  return to_grpc_status({core::status::not_permitted, message});
}

void to_proto(const core::region_info& r, v1::RegionInfo* out) {
  out->set_name(r.name);
  out->set_tenant(r.tenant);
  out->set_key(r.key);
  out->set_offset(r.offset);
  out->set_byte_size(r.byte_size);
  out->set_session(r.session);
  out->set_device(r.device);
}

// Ends an upload of `kind` with `status`: counted and logged as Upload's are.
grpc::ServerUnaryReactor* uploaded(service_state& s, grpc::CallbackServerContext* ctx, const char* kind,
                                   grpc::Status status, const v1::MatrixInfo& info, core::steady::time_point started) {
  const std::string outcome = code_name(status.error_code());
  s.metrics.call_ended(kind, outcome);
  log_event(status.ok() ? "info" : "warn", kind,
            {{"code", outcome}, {"handle", info.handle()}, {"bytes", info.bytes()},
             {"total_ms", std::chrono::duration<double, std::milli>(core::steady::now() - started).count()},
             {"message", status.error_message()}});
  return finished(ctx, std::move(status));
}

grpc::Status device_array_of(const service_state& s, const core::caller& who, const v1::DeviceArrayRef& a,
                             const std::string& what, spgemm::ipc_array* out) {
  if (a.region().empty()) {
    // Negative sizes become huge ones, which the backend's checks refuse.
    *out = {a.ipc_handle(), static_cast<std::size_t>(a.offset()), static_cast<std::size_t>(a.length()), nullptr};
    return grpc::Status::OK;
  }
  if (!a.ipc_handle().empty()) {
    return {grpc::StatusCode::INVALID_ARGUMENT, what + ": an IPC handle or a device region, not both"};
  }
  return to_grpc_status(s.regions.resolve_device(who, a.region(), a.offset(), a.length(), what, out));
}

}  // namespace

grpc::Status local_gate(service_state& s, const grpc::CallbackServerContext* ctx, local_feature what) {
  const std::string peer = ctx->peer();
  if (!is_local_peer(peer)) {
    return not_permitted("shared memory and CUDA IPC are for callers on the server's host (a Unix socket or a "
                         "loopback address); this call came from " + peer + ": send the bytes instead");
  }
  if (what == local_feature::shared_memory && !s.cfg.shared_memory) {
    return not_permitted("this server has shared memory turned off (--shared_memory=false): send the bytes instead");
  }
  if (what == local_feature::cuda_ipc && !s.cfg.cuda_ipc) {
    return not_permitted("this server has CUDA IPC turned off (--cuda_ipc=false): send the bytes instead");
  }
  if (what == local_feature::cuda_ipc && !core::has_gpu(s.cache)) {
    return not_permitted("CUDA IPC needs a GPU backend; this server keeps matrices in host memory");
  }
  return grpc::Status::OK;
}

grpc::Status open_local_call(service_state& s, grpc::CallbackServerContext* ctx, local_feature what,
                             core::caller* who) {
  if (grpc::Status st = open_call(s, *ctx, grpc::Status::OK, who); !st.ok()) return st;
  return local_gate(s, ctx, what);
}

grpc::Status device_arrays_of(const service_state& s, const core::caller& who, const v1::DeviceCsr& d,
                              spgemm::ipc_csr_arrays* out) {
  grpc::Status st = device_array_of(s, who, d.row_offsets(), "row_offsets", &out->row_offsets);
  if (st.ok()) st = device_array_of(s, who, d.col_indices(), "col_indices", &out->col_indices);
  if (st.ok()) st = device_array_of(s, who, d.values(), "values", &out->values);
  return st;
}

grpc::ServerWriteReactor<v1::SessionEvent>* local_service::OpenSession(grpc::CallbackServerContext* ctx,
                                                                      const v1::OpenSessionRequest*) {
  core::caller who;
  grpc::Status opened = open_local_call(state_, ctx, local_feature::any, &who);
  return new session_reactor(state_.regions, state_.sessions, std::move(who), std::move(opened));
}

grpc::ServerUnaryReactor* local_service::ProveLocal(grpc::CallbackServerContext* ctx,
                                                    const v1::ProveLocalRequest* request,
                                                    v1::ProveLocalResponse* response) {
  core::caller who;
  if (grpc::Status st = open_local_call(state_, ctx, local_feature::any, &who); !st.ok()) return finished(ctx, st);
  bool same = false;
  if (const core::outcome o = core::holds_token(request->key(), request->token(), &same); !o.ok()) {
    return finished(ctx, to_grpc_status(o));
  }
  response->set_same_host(same);
  response->set_shared_memory(same && state_.cfg.shared_memory);
  response->set_cuda_ipc(same && state_.cfg.cuda_ipc && core::has_gpu(state_.cache));
  return finished(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor* local_service::RegisterRegion(grpc::CallbackServerContext* ctx,
                                                        const v1::RegisterRegionRequest* request,
                                                        v1::RegionInfo* response) {
  core::caller who;
  const bool device = !request->cuda_ipc_handle().empty();
  if (grpc::Status st = open_local_call(state_, ctx, device ? local_feature::cuda_ipc : local_feature::shared_memory,
                                        &who);
      !st.ok()) {
    return finished(ctx, st);
  }
  core::region_info r;
  r.session = request->session();
  r.name = request->name();
  r.key = request->key();
  r.offset = request->offset();
  r.byte_size = request->byte_size();
  core::outcome o;
  if (!device) {
    o = state_.regions.add(who, r);
  } else if (!r.key.empty()) {
    o = {core::status::invalid_argument, "region '" + r.name + "': a key or a CUDA IPC handle, not both"};
  } else {
    std::shared_ptr<const spgemm::ipc_mapping> mapping;
    o = core::open_device_allocation(state_.cache, request->cuda_ipc_handle(), &mapping);
    if (o.ok()) o = state_.regions.add_device(who, r, std::move(mapping));
  }
  if (!o.ok()) return finished(ctx, to_grpc_status(o));
  r.tenant = who.tenant;
  r.device = device;
  to_proto(r, response);
  log_event("info", "region_registered",
            {{"region", r.name}, {"tenant", who.tenant}, {"key", r.key}, {"device", device}, {"bytes", r.byte_size}});
  return finished(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor* local_service::UnregisterRegion(grpc::CallbackServerContext* ctx,
                                                          const v1::UnregisterRegionRequest* request,
                                                          v1::UnregisterRegionResponse*) {
  core::caller who;
  if (grpc::Status st = open_local_call(state_, ctx, local_feature::any, &who); !st.ok()) return finished(ctx, st);
  return finished(ctx, to_grpc_status(state_.regions.remove(who, request->name())));
}

grpc::ServerUnaryReactor* local_service::ListRegions(grpc::CallbackServerContext* ctx, const v1::ListRegionsRequest*,
                                                     v1::ListRegionsResponse* response) {
  core::caller who;
  if (grpc::Status st = open_local_call(state_, ctx, local_feature::any, &who); !st.ok()) return finished(ctx, st);
  for (const core::region_info& r : state_.regions.list(who)) to_proto(r, response->add_regions());
  return finished(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor* local_service::UploadFromRegion(grpc::CallbackServerContext* ctx,
                                                          const v1::RegionUploadRequest* request,
                                                          v1::MatrixInfo* response) {
  const core::steady::time_point started = core::steady::now();
  core::caller who;
  grpc::Status st = open_local_call(state_, ctx, local_feature::shared_memory, &who);
  if (st.ok()) st = upload_from_region(state_, who, *request, response);
  return uploaded(state_, ctx, "upload_from_region", std::move(st), *response, started);
}

grpc::ServerUnaryReactor* local_service::UploadFromDevice(grpc::CallbackServerContext* ctx,
                                                          const v1::DeviceUploadRequest* request,
                                                          v1::MatrixInfo* response) {
  const core::steady::time_point started = core::steady::now();
  core::caller who;
  grpc::Status st = open_local_call(state_, ctx, local_feature::cuda_ipc, &who);
  if (st.ok()) st = upload_from_device(state_, who, *request, response);
  return uploaded(state_, ctx, "upload_from_device", std::move(st), *response, started);
}

grpc::Status upload_from_device(service_state& s, const core::caller& who, const v1::DeviceUploadRequest& request,
                                v1::MatrixInfo* out) {
  const v1::MatrixHeader& h = request.header();
  grpc::Status st = spgemm::wire::chunk_assembler::check_header(h);
  core::csr_layout sizes;  // where the sizes below cannot overflow
  if (st.ok()) st = to_grpc_status(core::layout_csr(h.rows(), h.nnz(), 8, &sizes));
  if (!st.ok()) return st;
  const spgemm::matrix_info info{h.rows(), h.cols(), h.nnz(),
                                 h.value_type() == v1::FLOAT32 ? spgemm::value_type::f32 : spgemm::value_type::f64};
  spgemm::ipc_csr_arrays arrays;
  if (st = device_arrays_of(s, who, request.arrays(), &arrays); !st.ok()) return st;
  core::entry_info e;
  st = to_grpc_status(
      core::store_from_device(s.cache, s.sched, who, info, arrays, h.name(), h.ttl_seconds(), &e));
  if (st.ok()) to_proto(e, out);
  return st;
}

}  // namespace spgemmd
