// The spgemm.v1.Spgemm service on gRPC's callback API: requests checked,
// jobs built by the core's recipes, one reactor per streaming call (uploads
// read chunks: upload_reactor; products, transposes and downloads write them:
// result_reactor), unary calls on the default reactor (unary_calls.cpp).
#pragma once

#include "rpc/service_state.hpp"
#include "spgemm/v1/spgemm.grpc.pb.h"

namespace spgemmd {

// The streaming methods are raw (byte buffers): their chunks are encoded and
// decoded by hand (proto/wire/chunk_frame.hpp), their other messages with the
// generated classes. The unary methods take the generated classes.
using spgemm_service_base = spgemm::v1::Spgemm::WithRawCallbackMethod_Upload<
    spgemm::v1::Spgemm::WithRawCallbackMethod_Multiply<spgemm::v1::Spgemm::WithRawCallbackMethod_Galerkin<
        spgemm::v1::Spgemm::WithRawCallbackMethod_Transpose<spgemm::v1::Spgemm::WithRawCallbackMethod_Download<
            spgemm::v1::Spgemm::WithCallbackMethod_Delete<spgemm::v1::Spgemm::WithCallbackMethod_List<
                spgemm::v1::Spgemm::WithCallbackMethod_Describe<
                    spgemm::v1::Spgemm::WithCallbackMethod_Status<spgemm::v1::Spgemm::Service>>>>>>>>>;

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
