#include "rpc/messages.hpp"

#include <chrono>

#include "rpc/status_map.hpp"

namespace spgemmd {

namespace v1 = spgemm::v1;

namespace {

void set_time(google::protobuf::Timestamp* ts, core::wall::time_point t) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  ts->set_seconds(ns / 1000000000);
  ts->set_nanos(static_cast<int32_t>(ns % 1000000000));
}

}  // namespace

std::string tenant_of(const grpc::CallbackServerContext* /*ctx*/) { return ""; }

grpc::Status unavailable() {
  return to_grpc_status({core::status::shutting_down, "the server is shutting down; retry elsewhere"});
}

grpc::ServerUnaryReactor* finished(grpc::CallbackServerContext* ctx, grpc::Status status) {
  auto* r = ctx->DefaultReactor();
  r->Finish(std::move(status));
  return r;
}

v1::ValueType to_proto(spgemm::value_type t) { return t == spgemm::value_type::f32 ? v1::FLOAT32 : v1::FLOAT64; }

void to_proto(const core::entry_info& e, v1::MatrixInfo* out) {
  out->set_handle(e.handle);
  out->set_name(e.name);
  out->set_rows(e.info.rows);
  out->set_cols(e.info.cols);
  out->set_nnz(e.info.nnz);
  out->set_value_type(to_proto(e.info.type));
  out->set_index_type(v1::INT32);
  out->set_bytes(static_cast<int64_t>(e.bytes));
  out->set_residency(e.on_device ? v1::DEVICE : v1::HOST);
  out->set_device(e.device);
  set_time(out->mutable_created(), e.created);
  set_time(out->mutable_last_used(), e.last_used);
  out->set_ttl_seconds(e.ttl_seconds);
}

grpc::Status options_from(const v1::MultiplyOptions& o, spgemm::multiply_options* out) {
  try {
    out->algo = spgemm::parse_algorithm(o.algorithm().empty() ? "auto" : o.algorithm());
  } catch (...) {
    return to_grpc_status(std::current_exception());
  }
  switch (o.output_type()) {
    case v1::VALUE_TYPE_UNSPECIFIED: break;
    case v1::FLOAT32: out->output_type = spgemm::value_type::f32; break;
    case v1::FLOAT64: out->output_type = spgemm::value_type::f64; break;
    default:
      return {grpc::StatusCode::INVALID_ARGUMENT, "options.output_type must be FLOAT32, FLOAT64 or unspecified"};
  }
  return grpc::Status::OK;
}

}  // namespace spgemmd
