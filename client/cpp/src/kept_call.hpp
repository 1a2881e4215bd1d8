// What the Graph calls (graph.cpp) take from the client's internals
// (client.cpp): a server-streaming call whose result is kept on the server.
#pragma once

#include <grpcpp/grpcpp.h>
#include <google/protobuf/message.h>

#include <memory>

#include "spgemm/client/client.hpp"

namespace spgemm::client::detail {

struct channel;

// The gRPC channel of a connection.
const std::shared_ptr<grpc::Channel>& grpc_channel_of(const channel& c);

// Calls the server-streaming `method` with `request` (ProductOutput.keep
// set) and reads the reply: the kept matrix's handle and the job's stats.
kept_result call_kept(const std::shared_ptr<channel>& c, const grpc::internal::RpcMethod& method,
                      const google::protobuf::Message& request, const progress_callback& on_progress);

}  // namespace spgemm::client::detail
