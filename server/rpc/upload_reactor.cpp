#include "rpc/upload_reactor.hpp"

#include <chrono>

#include "ops/log.hpp"
#include "rpc/messages.hpp"
#include "rpc/status_map.hpp"

namespace spgemmd {

namespace v1 = spgemm::v1;

namespace {

double seconds_since(core::steady::time_point t) {
  return std::chrono::duration<double>(core::steady::now() - t).count();
}

}  // namespace

upload_reactor::upload_reactor(service_state& s, grpc::CallbackServerContext* ctx, grpc::ByteBuffer* response)
    : s_(s), ctx_(ctx), response_(response), counted_(s.calls) {
  core::caller who;
  if (grpc::Status st = open_call(s_, *ctx_, grpc::Status::OK, &who); !st.ok()) {
    finish(std::move(st));
    return;
  }
  call_.emplace(s_.cache, s_.sched, s_.upload_arrays, std::move(who));
  StartRead(&in_);
}

void upload_reactor::OnReadDone(bool ok) {
  if (!ok) {
    complete();
    return;
  }
  bytes_in_ += static_cast<int64_t>(in_.Length());
  grpc::Status status = call_->receive(in_);
  in_.Clear();
  if (!status.ok()) {
    finish(std::move(status));
    return;
  }
  StartRead(&in_);
}

void upload_reactor::OnDone() {
  const std::string outcome = code_name(code_);
  s_.metrics.bytes_in(bytes_in_);
  s_.metrics.call_ended("upload", outcome);
  s_.metrics.phase("upload", "stream", seconds_since(created_));
  log_event(code_ == grpc::StatusCode::OK ? "info" : "warn", "upload",
            {{"code", outcome}, {"handle", handle_}, {"bytes_in", bytes_in_},
             {"total_ms", seconds_since(created_) * 1e3}, {"receive_ms", receive_ms_},
             {"store_ms", call_ ? call_->store_ms() : 0.0}, {"message", message_}});
  delete this;
}

void upload_reactor::complete() {
  if (ctx_->IsCancelled()) {
    finish({grpc::StatusCode::CANCELLED, "the upload was cancelled"});
    return;
  }
  receive_ms_ = seconds_since(created_) * 1e3;
  core::entry_info stored;
  grpc::Status status = call_->complete(&stored);
  if (status.ok()) {
    v1::MatrixInfo info;
    to_proto(stored, &info);
    handle_ = info.handle();
    bool own = false;
    response_->Clear();
    status = grpc::SerializationTraits<v1::MatrixInfo>::Serialize(info, response_, &own);
  }
  finish(std::move(status));
}

void upload_reactor::finish(grpc::Status status) {
  code_ = status.error_code();
  message_ = status.error_message();
  if (call_) call_->abandon();
  Finish(std::move(status));
}

}  // namespace spgemmd
