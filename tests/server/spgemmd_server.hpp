// A spgemmd child process (spgemmd_process.hpp) and a plaintext channel and
// stub to it, for the suites that speak to it through the generated stub.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "spgemm/v1/spgemm.grpc.pb.h"
#include "spgemmd_process.hpp"

namespace spgemmd::testing {

class spgemmd_server : public spgemmd_process {
 public:
  explicit spgemmd_server(const std::vector<std::string>& flags, const spgemmd_options& options = {})
      : spgemmd_process(flags, options) {
    if (!serving()) return;
    channel_ = grpc::CreateChannel(address(), grpc::InsecureChannelCredentials());
    stub_ = spgemm::v1::Spgemm::NewStub(channel_);
  }

  // It served once started: its channel and stub exist.
  bool ok() const { return stub_ != nullptr; }
  std::shared_ptr<grpc::Channel> channel() const { return channel_; }
  spgemm::v1::Spgemm::Stub& stub() { return *stub_; }

 private:
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<spgemm::v1::Spgemm::Stub> stub_;
};

}  // namespace spgemmd::testing
