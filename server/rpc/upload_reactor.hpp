// The reactor of Upload: chunks are decoded from the received bytes straight
// into the assembler (proto/wire/chunk_frame.hpp), the header or a chunk in
// an unusual encoding through the generated class; the matrix goes into the
// cache as it arrives (core/upload.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "core/upload.hpp"
#include "rpc/service_state.hpp"
#include "wire/chunk_codec.hpp"
#include "wire/chunk_frame.hpp"

namespace spgemmd {

class upload_reactor final : public grpc::ServerReadReactor<grpc::ByteBuffer> {
 public:
  // Answers with a MatrixInfo in `response`.
  upload_reactor(service_state& s, grpc::CallbackServerContext* ctx, grpc::ByteBuffer* response);

  void OnReadDone(bool ok) override;
  void OnDone() override;

 private:
  grpc::Status on_part();
  grpc::Status on_header(const spgemm::v1::MatrixHeader& h);
  void complete();
  void finish(grpc::Status status);

  service_state& s_;
  grpc::CallbackServerContext* ctx_;
  grpc::ByteBuffer* response_;  // a MatrixInfo
  core::caller caller_;
  grpc::ByteBuffer in_;
  std::vector<grpc::Slice> slices_;  // of in_, while its chunk is added
  spgemm::wire::chunk_pieces pieces_;
  std::string handle_;
  std::optional<spgemm::wire::chunk_assembler> assembler_;
  std::optional<core::upload> upload_;  // copies from the assembler's arrays: goes before them
  int64_t bytes_in_ = 0;
  core::steady::time_point created_ = core::steady::now();
  double receive_ms_ = 0, store_ms_ = 0;  // phases of a complete upload (log)
  grpc::StatusCode code_ = grpc::StatusCode::OK;
  std::string message_;
};

}  // namespace spgemmd
