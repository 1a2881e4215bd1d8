// The spgemm.v1.Spgemm service on gRPC's callback API: requests checked,
// jobs built by the core's recipes, one reactor per streaming call (uploads
// read chunks: upload_reactor; products, transposes and downloads write them:
// result_reactor), unary calls on the default reactor (unary_calls.cpp).
#pragma once

#include "rpc/service_state.hpp"
#include "spgemm/v1/spgemm.grpc.pb.h"

namespace spgemmd {

// Every method is raw (byte buffers), so that a request that does not decode
// gets INVALID_ARGUMENT with a message (gRPC's own decoding answers
// UNIMPLEMENTED without one). The streaming methods' chunks are encoded and
// decoded by hand (proto/wire/chunk_frame.hpp), their other messages and the
// unary calls' with the generated classes.
using spgemm_service_base = spgemm::v1::Spgemm::WithRawCallbackMethod_Upload<
    spgemm::v1::Spgemm::WithRawCallbackMethod_Multiply<spgemm::v1::Spgemm::WithRawCallbackMethod_Galerkin<
        spgemm::v1::Spgemm::WithRawCallbackMethod_Transpose<spgemm::v1::Spgemm::WithRawCallbackMethod_Download<
            spgemm::v1::Spgemm::WithRawCallbackMethod_Delete<spgemm::v1::Spgemm::WithRawCallbackMethod_List<
                spgemm::v1::Spgemm::WithRawCallbackMethod_Describe<
                    spgemm::v1::Spgemm::WithRawCallbackMethod_Status<spgemm::v1::Spgemm::Service>>>>>>>>>;

class spgemm_service final : public spgemm_service_base {
 public:
  explicit spgemm_service(service_state& state) : state_(state) {}

  grpc::ServerReadReactor<grpc::ByteBuffer>* Upload(grpc::CallbackServerContext* ctx,
                                                    grpc::ByteBuffer* response) override;
  grpc::ServerWriteReactor<grpc::ByteBuffer>* Multiply(grpc::CallbackServerContext* ctx,
                                                       const grpc::ByteBuffer* request) override;
  grpc::ServerWriteReactor<grpc::ByteBuffer>* Galerkin(grpc::CallbackServerContext* ctx,
                                                       const grpc::ByteBuffer* request) override;
  grpc::ServerWriteReactor<grpc::ByteBuffer>* Transpose(grpc::CallbackServerContext* ctx,
                                                        const grpc::ByteBuffer* request) override;
  grpc::ServerWriteReactor<grpc::ByteBuffer>* Download(grpc::CallbackServerContext* ctx,
                                                       const grpc::ByteBuffer* request) override;
  grpc::ServerUnaryReactor* Delete(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* request,
                                   grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* List(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* request,
                                 grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* Describe(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* request,
                                     grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* Status(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* request,
                                   grpc::ByteBuffer* response) override;

 private:
  service_state& state_;
};

}  // namespace spgemmd
