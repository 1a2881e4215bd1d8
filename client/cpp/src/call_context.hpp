// The context of one call of a Client that its connection's cancellation
// (connection_options::cancel) may end: in the cancellation from construction
// to destruction. Private to the client library.
#pragma once

#include <memory>

#include <grpcpp/grpcpp.h>

#include "spgemm/client/client.hpp"

namespace spgemm::client::detail {

struct channel;

class call_context {
 public:
  // A context of `c` (client.cpp).
  explicit call_context(const channel& c);
  // `ctx`, ended by `cancel` where it is set (throws Error(CANCELLED) where it ran already).
  call_context(std::unique_ptr<grpc::ClientContext> ctx, std::shared_ptr<cancellation> cancel)
      : ctx_(std::move(ctx)), cancel_(std::move(cancel)) {
    if (cancel_) cancel_->add(ctx_.get());
  }
  call_context(const call_context&) = delete;
  call_context& operator=(const call_context&) = delete;
  ~call_context() {
    if (cancel_) cancel_->remove(ctx_.get());
  }
  grpc::ClientContext* get() const { return ctx_.get(); }
  grpc::ClientContext& operator*() const { return *ctx_; }

 private:
  std::unique_ptr<grpc::ClientContext> ctx_;
  std::shared_ptr<cancellation> cancel_;
};

}  // namespace spgemm::client::detail
