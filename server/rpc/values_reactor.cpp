#include "rpc/values_reactor.hpp"

#include <chrono>
#include <cstring>

#include "core/matrices.hpp"
#include "ops/log.hpp"
#include "rpc/amg_service.hpp"
#include "rpc/messages.hpp"
#include "rpc/status_map.hpp"

namespace spgemmd {

namespace v1 = spgemm::v1;

namespace {

grpc::Status invalid(const std::string& message) { return {grpc::StatusCode::INVALID_ARGUMENT, message}; }

}  // namespace

values_reactor::values_reactor(service_state& s, grpc::CallbackServerContext* ctx, v1::MatrixInfo* response)
    : s_(s), response_(response) {
  if (grpc::Status st = open_call(s_, *ctx, grpc::Status::OK, &caller_); !st.ok()) {
    finish(std::move(st));
    return;
  }
  StartRead(&in_);
}

grpc::Status values_reactor::on_part() {
  if (in_.has_header()) {
    if (have_header_) return invalid("a second header");
    have_header_ = true;
    const v1::ValuesHeader& h = in_.header();
    if (h.value_type() != v1::FLOAT32 && h.value_type() != v1::FLOAT64) return invalid("value_type: FLOAT32 or FLOAT64");
    core::entry_info e;
    if (core::outcome o = core::describe_matrix(s_.cache, caller_, h.handle(), &e); !o.ok()) return to_grpc_status(o);
    handle_ = h.handle();
    type_ = h.value_type() == v1::FLOAT32 ? spgemm::value_type::f32 : spgemm::value_type::f64;
    nnz_ = h.nnz();
    if (type_ != e.info.type || nnz_ != e.info.nnz) {
      return invalid("matrix " + handle_ + " holds " + std::to_string(e.info.nnz) + " " +
                     std::string(spgemm::to_string(e.info.type)) + " values; the header says " +
                     std::to_string(nnz_) + " " + std::string(spgemm::to_string(type_)));
    }
    values_.resize(static_cast<std::size_t>(nnz_) * spgemm::size_of(type_));
    return grpc::Status::OK;
  }
  if (!have_header_) return invalid("the header must come first");
  if (!in_.has_chunk()) return invalid("an empty part");
  const v1::ValuesChunk& c = in_.chunk();
  const std::size_t width = spgemm::size_of(type_);
  if (c.first() != received_ || c.values().size() % width != 0 ||
      received_ + static_cast<std::int64_t>(c.values().size() / width) > nnz_) {
    return invalid("a chunk at " + std::to_string(c.first()) + " of " + std::to_string(c.values().size()) +
                   " bytes after " + std::to_string(received_) + " of " + std::to_string(nnz_) + " values");
  }
  std::memcpy(values_.data() + static_cast<std::size_t>(received_) * width, c.values().data(), c.values().size());
  received_ += static_cast<std::int64_t>(c.values().size() / width);
  s_.metrics.bytes_in(static_cast<int64_t>(c.values().size()));
  return grpc::Status::OK;
}

void values_reactor::OnReadDone(bool ok) {
  if (ok) {
    if (grpc::Status st = on_part(); !st.ok()) return finish(st);
    StartRead(&in_);
    return;
  }
  complete();
}

void values_reactor::complete() {
  if (!have_header_) return finish(invalid("no header"));
  if (received_ != nnz_) {
    return finish(invalid("the values ended after " + std::to_string(received_) + " of " + std::to_string(nnz_)));
  }
  core::entry_info e;
  const core::outcome o = core::update_values(s_.cache, caller_, handle_, type_, nnz_, values_.data(), &e);
  if (!o.ok()) return finish(to_grpc_status(o));
  to_proto(e, response_);
  finish(grpc::Status::OK);
}

void values_reactor::finish(grpc::Status status) {
  code_ = status.error_code();
  Finish(std::move(status));
}

void values_reactor::OnDone() {
  const std::string outcome = code_name(code_);
  s_.metrics.call_ended("update values", outcome);
  log_event(code_ == grpc::StatusCode::OK ? "info" : "warn", "update values",
            {{"code", outcome},
             {"handle", handle_},
             {"values", received_},
             {"total_ms", 1000.0 * std::chrono::duration<double>(core::steady::now() - created_).count()}});
  delete this;
}

grpc::ServerReadReactor<v1::ValuesPart>* values_service::UpdateValues(grpc::CallbackServerContext* ctx,
                                                                      v1::MatrixInfo* response) {
  return new values_reactor(state_, ctx, response);
}

}  // namespace spgemmd
