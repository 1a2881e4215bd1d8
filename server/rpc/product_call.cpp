#include "rpc/product_call.hpp"

#include "core/matrices.hpp"
#include "rpc/messages.hpp"
#include "rpc/result_reactor.hpp"
#include "rpc/status_map.hpp"

namespace spgemmd {

grpc::ServerWriteReactor<grpc::ByteBuffer>* run_product(service_state& s, grpc::CallbackServerContext* ctx,
                                                        const char* kind, const grpc::Status& parsed,
                                                        const spgemm::v1::ProductOutput& output,
                                                        const job_builder& build) {
  auto* r = new result_reactor(s, ctx, kind, output.chunk_bytes());
  if (s.shutting_down || !parsed.ok()) {
    r->fail(s.shutting_down ? unavailable() : parsed);
    return r;
  }
  std::shared_ptr<core::job> j;
  if (grpc::Status st = build(tenant_of(ctx), &j); !st.ok()) {
    r->fail(st);
    return r;
  }
  r->start_job(std::move(j), output.keep(), output.name());
  return r;
}

grpc::Status pin_matrix(service_state& s, const std::string& tenant, const char* field, const std::string& handle,
                        core::pin* out) {
  return to_grpc_status(core::pin_matrix(s.cache, tenant, field, handle, out));
}

}  // namespace spgemmd
