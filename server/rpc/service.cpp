#include "rpc/service.hpp"

#include <memory>
#include <string>

#include "core/matrices.hpp"
#include "core/recipes/galerkin.hpp"
#include "core/recipes/multiply.hpp"
#include "core/recipes/transpose.hpp"
#include "rpc/local_service.hpp"
#include "rpc/messages.hpp"
#include "rpc/product_call.hpp"
#include "rpc/request_operands.hpp"
#include "rpc/result_reactor.hpp"
#include "rpc/status_map.hpp"
#include "rpc/upload_reactor.hpp"

namespace spgemmd {

namespace v1 = spgemm::v1;

grpc::ServerReadReactor<grpc::ByteBuffer>* spgemm_service::Upload(grpc::CallbackServerContext* ctx,
                                                                 grpc::ByteBuffer* response) {
  return new upload_reactor(state_, ctx, response);
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* spgemm_service::Multiply(grpc::CallbackServerContext* ctx,
                                                                     const grpc::ByteBuffer* raw) {
  v1::MultiplyRequest request;
  const grpc::Status parsed = parse(*raw, &request);
  return run_product(state_, ctx, "multiply", parsed, request.output(), [&](const core::caller& who, auto* out) {
    core::pin a, b;
    request_operands operands(state_, ctx, who);
    std::string a_handle;
    const operand_source from_a{present(request.has_a_region(), request.a_region()),
                                present(request.has_a_device(), request.a_device())};
    const operand_source from_b{present(request.has_b_region(), request.b_region()),
                                present(request.has_b_device(), request.b_device())};
    grpc::Status st = operands.pin("a", request.a(), from_a, &a, &a_handle);
    // With A from a region or the device and no B, B is A.
    const bool b_is_a = from_a.given() && !from_b.given() && request.b().empty();
    if (st.ok()) st = operands.pin("b", b_is_a ? a_handle : request.b(), from_b, &b);
    spgemm::multiply_options options;
    if (st.ok()) st = options_from(request.options(), &options);
    if (!st.ok()) return st;
    return to_grpc_status(core::multiply_job(state_.estimates, std::move(a), std::move(b), options,
                                             request.options().priority(), out));
  });
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* spgemm_service::Galerkin(grpc::CallbackServerContext* ctx,
                                                                     const grpc::ByteBuffer* raw) {
  v1::GalerkinRequest request;
  const grpc::Status parsed = parse(*raw, &request);
  return run_product(state_, ctx, "galerkin", parsed, request.output(), [&](const core::caller& who, auto* out) {
    core::pin p, a;
    request_operands operands(state_, ctx, who);
    grpc::Status st = operands.pin("p", request.p(),
                                   {present(request.has_p_region(), request.p_region()),
                                    present(request.has_p_device(), request.p_device())},
                                   &p);
    if (st.ok()) {
      st = operands.pin("a", request.a(),
                        {present(request.has_a_region(), request.a_region()),
                         present(request.has_a_device(), request.a_device())},
                        &a);
    }
    spgemm::multiply_options options;
    if (st.ok()) st = options_from(request.options(), &options);
    if (!st.ok()) return st;
    if (request.form() != v1::PT_A_P && request.form() != v1::P_A_PT) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "form must be PT_A_P or P_A_PT");
    }
    const core::galerkin_form form = request.form() == v1::PT_A_P ? core::galerkin_form::pt_a_p
                                                                  : core::galerkin_form::p_a_pt;
    return to_grpc_status(core::galerkin_job(state_.estimates, form, std::move(p), std::move(a), options,
                                             request.options().priority(), out));
  });
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* spgemm_service::Transpose(grpc::CallbackServerContext* ctx,
                                                                     const grpc::ByteBuffer* raw) {
  v1::TransposeRequest request;
  const grpc::Status parsed = parse(*raw, &request);
  return run_product(state_, ctx, "transpose", parsed, request.output(), [&](const core::caller& who, auto* out) {
    core::pin a;
    request_operands operands(state_, ctx, who);
    const grpc::Status st = operands.pin("a", request.a(),
                                         {present(request.has_a_region(), request.a_region()),
                                          present(request.has_a_device(), request.a_device())},
                                         &a);
    if (!st.ok()) return st;
    *out = core::transpose_job(std::move(a));
    return grpc::Status::OK;
  });
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* spgemm_service::Download(grpc::CallbackServerContext* ctx,
                                                                     const grpc::ByteBuffer* raw) {
  v1::DownloadRequest request;
  const grpc::Status parsed = parse(*raw, &request);
  auto* r = new result_reactor(state_, ctx, "download", request.chunk_bytes());
  core::caller who;
  core::pin e;
  grpc::Status st = open_call(state_, *ctx, parsed, &who);
  if (st.ok() && request.has_region() && request.has_device()) {
    st = {grpc::StatusCode::INVALID_ARGUMENT, "download into a region or into device arrays, not both"};
  }
  if (st.ok() && request.has_region()) st = region_target(state_, ctx, who, request.region(), r);
  spgemm::ipc_csr_arrays into;
  if (st.ok() && request.has_device()) st = local_gate(state_, ctx, local_feature::cuda_ipc);
  if (st.ok() && request.has_device()) st = device_arrays_of(state_, who, request.device(), &into);
  if (st.ok()) st = pin_matrix(state_, who, "handle", request.handle(), &e);
  if (st.ok() && request.then_delete()) {  // pinned, it lives on until the download ends
    std::size_t freed = 0;
    st = to_grpc_status(core::delete_matrix(state_.cache, who, request.handle(), &freed));
  }
  if (!st.ok()) {
    r->fail(st);
    return r;
  }
  if (request.has_device()) {
    r->start_device_download(std::move(e), into);
  } else {
    r->start_download(std::move(e));
  }
  return r;
}

}  // namespace spgemmd
