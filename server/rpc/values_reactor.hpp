// The reactor of Values.UpdateValues: reads the header (the matrix, its
// value type and nnz), then the values' chunks in order into a host array,
// then replaces the matrix's values in the cache (core/matrices.hpp:
// update_values) and answers with what the matrix is now.
#pragma once

#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "rpc/service_state.hpp"
#include "spgemm/v1/values.grpc.pb.h"

namespace spgemmd {

class values_reactor final : public grpc::ServerReadReactor<spgemm::v1::ValuesPart> {
 public:
  values_reactor(service_state& s, grpc::CallbackServerContext* ctx, spgemm::v1::MatrixInfo* response);

  void OnReadDone(bool ok) override;
  void OnDone() override;

 private:
  grpc::Status on_part();
  void complete();
  void finish(grpc::Status status);

  service_state& s_;
  core::caller caller_;  // past open_call
  spgemm::v1::MatrixInfo* response_;
  spgemm::v1::ValuesPart in_;
  core::steady::time_point created_ = core::steady::now();
  bool have_header_ = false;
  std::string handle_;
  spgemm::value_type type_ = spgemm::value_type::f64;
  std::int64_t nnz_ = 0;
  std::vector<unsigned char> values_;
  std::int64_t received_ = 0;  // values
  grpc::StatusCode code_ = grpc::StatusCode::OK;
};

}  // namespace spgemmd
