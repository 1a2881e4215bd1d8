// The reactor of Upload: reads the parts and hands them to the call's
// requests (upload_call: decoded, checked, assembled and stored as they
// arrive), answers with the stored matrix's MatrixInfo or the first problem.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <grpcpp/grpcpp.h>

#include "rpc/service_state.hpp"
#include "rpc/upload_call.hpp"

namespace spgemmd {

class upload_reactor final : public grpc::ServerReadReactor<grpc::ByteBuffer> {
 public:
  // Answers with a MatrixInfo in `response`.
  upload_reactor(service_state& s, grpc::CallbackServerContext* ctx, grpc::ByteBuffer* response);

  void OnReadDone(bool ok) override;
  void OnDone() override;

 private:
  void complete();
  void finish(grpc::Status status);

  service_state& s_;
  grpc::CallbackServerContext* ctx_;
  grpc::ByteBuffer* response_;  // a MatrixInfo
  call_count::in_flight counted_;
  grpc::ByteBuffer in_;
  std::optional<upload_call> call_;  // once the caller is known
  std::string handle_;
  int64_t bytes_in_ = 0;
  core::steady::time_point created_ = core::steady::now();
  double receive_ms_ = 0;  // of a complete upload (log)
  grpc::StatusCode code_ = grpc::StatusCode::OK;
  std::string message_;
};

}  // namespace spgemmd
