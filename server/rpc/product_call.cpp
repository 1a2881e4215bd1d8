#include "rpc/product_call.hpp"

#include <utility>

#include "core/matrices.hpp"
#include "rpc/local_service.hpp"
#include "rpc/messages.hpp"
#include "rpc/status_map.hpp"

namespace spgemmd {

namespace v1 = spgemm::v1;

grpc::Status region_target(service_state& s, const grpc::CallbackServerContext* ctx, const core::caller& who,
                           const v1::RegionRef& ref, result_reactor* r) {
  if (grpc::Status st = local_gate(s, ctx, local_feature::shared_memory); !st.ok()) return st;
  core::region_span span;
  const core::outcome o =
      s.regions.resolve(who, ref.region(), ref.offset(), ref.length(), 8, "the result's range", &span);
  if (!o.ok()) return to_grpc_status(o);
  r->write_into(std::move(span), ref);
  return grpc::Status::OK;
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* run_product(service_state& s, grpc::CallbackServerContext* ctx,
                                                        const char* kind, const grpc::Status& parsed,
                                                        const v1::ProductOutput& output, const job_builder& build) {
  auto* r = new result_reactor(s, ctx, kind, output.chunk_bytes());
  core::caller who;
  std::shared_ptr<core::job> j;
  grpc::Status st = open_call(s, *ctx, parsed, &who);
  if (st.ok()) st = to_grpc_status(core::check_name("output.name", output.name()));
  if (st.ok() && (output.keep() + output.has_region() + output.has_device()) > 1) {
    st = {grpc::StatusCode::INVALID_ARGUMENT,
          "output: keep the result, write it into a region or copy it into device arrays: one of them"};
  }
  if (st.ok() && output.has_region()) st = region_target(s, ctx, who, output.region(), r);
  if (st.ok() && output.has_device()) {
    spgemm::ipc_csr_arrays into;
    st = local_gate(s, ctx, local_feature::cuda_ipc);
    if (st.ok()) st = device_arrays_of(s, who, output.device(), &into);
    if (st.ok()) r->copy_into(std::move(into));
  }
  if (st.ok()) st = build(who, &j);
  if (!st.ok()) {
    r->fail(st);
    return r;
  }
  r->start_job(std::move(j), std::move(who), output.keep(), output.name());
  return r;
}

grpc::Status pin_matrix(service_state& s, const core::caller& who, const char* field, const std::string& handle,
                        core::pin* out) {
  return to_grpc_status(core::pin_matrix(s.cache, who, field, handle, out));
}

}  // namespace spgemmd
