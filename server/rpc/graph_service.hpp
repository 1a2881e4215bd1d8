// The spgemm.v1.Graph service (proto/spgemm/v1/graph.proto): products over
// semirings, masked products and the steps between products, each a job of
// the core's graph recipes (core/recipes/graph.hpp), streamed or kept as
// Multiply's result is (rpc/product_call.hpp). Raw methods, as Multiply's:
// the result chunks are written by hand.
#pragma once

#include "rpc/service_state.hpp"
#include "spgemm/v1/graph.grpc.pb.h"

namespace spgemmd {

using graph_service_base = spgemm::v1::Graph::WithRawCallbackMethod_Mxm<
    spgemm::v1::Graph::WithRawCallbackMethod_EwiseAdd<spgemm::v1::Graph::WithRawCallbackMethod_EwiseMult<
        spgemm::v1::Graph::WithRawCallbackMethod_Apply<spgemm::v1::Graph::WithRawCallbackMethod_Select<
            spgemm::v1::Graph::WithRawCallbackMethod_TopK<spgemm::v1::Graph::WithRawCallbackMethod_Reduce<
                spgemm::v1::Graph::WithRawCallbackMethod_Scale<
                    spgemm::v1::Graph::WithRawCallbackMethod_ExtractRows<spgemm::v1::Graph::Service>>>>>>>>>;

class graph_service final : public graph_service_base {
 public:
  explicit graph_service(service_state& state) : state_(state) {}

  using reactor = grpc::ServerWriteReactor<grpc::ByteBuffer>;
  reactor* Mxm(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* request) override;
  reactor* EwiseAdd(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* request) override;
  reactor* EwiseMult(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* request) override;
  reactor* Apply(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* request) override;
  reactor* Select(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* request) override;
  reactor* TopK(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* request) override;
  reactor* Reduce(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* request) override;
  reactor* Scale(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* request) override;
  reactor* ExtractRows(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* request) override;

 private:
  service_state& state_;
};

}  // namespace spgemmd
