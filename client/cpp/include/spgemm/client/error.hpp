// The one exception type of the client library.
#pragma once

#include <stdexcept>
#include <string>

#include <grpcpp/support/status.h>

namespace spgemm::client {

// A failed call, or bad local input. code() is the gRPC status code (the
// server's, or the client's own for local problems: NOT_FOUND for a missing
// file, INVALID_ARGUMENT for a malformed one); message() is the server's
// message unchanged; what() is "CODE_NAME: message".
class Error : public std::runtime_error {
 public:
  Error(grpc::StatusCode code, std::string message);
  explicit Error(const grpc::Status& status) : Error(status.error_code(), status.error_message()) {}

  grpc::StatusCode code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }

 private:
  grpc::StatusCode code_;
  std::string message_;
};

// "INVALID_ARGUMENT", "NOT_FOUND", ...
const char* status_code_name(grpc::StatusCode code);

}  // namespace spgemm::client
