#include "spgemm/client/graph.hpp"

#include "kept_call.hpp"
#include "spgemm/v1/graph.grpc.pb.h"

namespace spgemm::client {

namespace v1 = spgemm::v1;

// The Graph service's methods on the client's channel (raw calls, as the
// Spgemm service's streamed results are read).
struct Graph::methods {
  using method = grpc::internal::RpcMethod;
  explicit methods(const std::shared_ptr<grpc::Channel>& c)
      : mxm("/spgemm.v1.Graph/Mxm", method::SERVER_STREAMING, c),
        ewise_add("/spgemm.v1.Graph/EwiseAdd", method::SERVER_STREAMING, c),
        ewise_mult("/spgemm.v1.Graph/EwiseMult", method::SERVER_STREAMING, c),
        apply("/spgemm.v1.Graph/Apply", method::SERVER_STREAMING, c),
        select("/spgemm.v1.Graph/Select", method::SERVER_STREAMING, c),
        top_k("/spgemm.v1.Graph/TopK", method::SERVER_STREAMING, c),
        reduce("/spgemm.v1.Graph/Reduce", method::SERVER_STREAMING, c),
        scale("/spgemm.v1.Graph/Scale", method::SERVER_STREAMING, c),
        extract_rows("/spgemm.v1.Graph/ExtractRows", method::SERVER_STREAMING, c) {}
  method mxm, ewise_add, ewise_mult, apply, select, top_k, reduce, scale, extract_rows;
};

namespace {

void set(v1::Operand* out, const operand& o) {
  out->set_handle(o.handle);
  out->set_transpose(o.transposed);
}

v1::ProductOutput kept_output(const std::string& name) {
  v1::ProductOutput out;
  out.set_keep(true);
  out.set_name(name);
  return out;
}

// The request of a step: its operand a, priority and output set.
template <typename Request>
Request step_request(const operand& a, const step_options& o) {
  Request r;
  set(r.mutable_a(), a);
  r.set_priority(o.priority);
  *r.mutable_output() = kept_output(o.name);
  return r;
}

}  // namespace

Graph::Graph(Client& client)
    : channel_(client.channel_), methods_(std::make_unique<methods>(detail::grpc_channel_of(*client.channel_))) {}

Graph::~Graph() = default;

kept_result Graph::mxm(const operand& a, const operand& b, const mxm_options& options) {
  v1::MxmRequest r;
  set(r.mutable_a(), a);
  set(r.mutable_b(), b);
  r.set_semiring(options.semiring);
  if (options.within) {
    set(r.mutable_mask()->mutable_matrix(), options.within->matrix);
    r.mutable_mask()->set_complement(options.within->complement);
    r.mutable_mask()->set_values(options.within->values);
  }
  const product_options& p = options.product;
  r.mutable_options()->set_algorithm(p.algorithm);
  r.mutable_options()->set_output_type(p.output_type);
  r.mutable_options()->set_priority(p.priority);
  *r.mutable_output() = kept_output(p.name);
  return detail::call_kept(channel_, methods_->mxm, r, p.on_progress);
}

kept_result Graph::ewise_add(const operand& a, const operand& b, const std::string& op, const step_options& o) {
  auto r = step_request<v1::EwiseRequest>(a, o);
  set(r.mutable_b(), b);
  r.set_op(op);
  return detail::call_kept(channel_, methods_->ewise_add, r, o.on_progress);
}

kept_result Graph::ewise_mult(const operand& a, const operand& b, const std::string& op, const step_options& o) {
  auto r = step_request<v1::EwiseRequest>(a, o);
  set(r.mutable_b(), b);
  r.set_op(op);
  return detail::call_kept(channel_, methods_->ewise_mult, r, o.on_progress);
}

kept_result Graph::apply(const operand& a, const std::string& op, const step_options& o) {
  auto r = step_request<v1::ApplyRequest>(a, o);
  r.set_op(op);
  return detail::call_kept(channel_, methods_->apply, r, o.on_progress);
}

kept_result Graph::apply(const operand& a, const std::string& op, double scalar, bool scalar_first,
                         const step_options& o) {
  auto r = step_request<v1::ApplyRequest>(a, o);
  r.set_op(op);
  r.set_scalar(scalar);
  r.set_scalar_first(scalar_first);
  return detail::call_kept(channel_, methods_->apply, r, o.on_progress);
}

kept_result Graph::select(const operand& a, const std::string& selector, double thunk, const step_options& o) {
  auto r = step_request<v1::SelectRequest>(a, o);
  r.set_selector(selector);
  r.set_thunk(thunk);
  return detail::call_kept(channel_, methods_->select, r, o.on_progress);
}

kept_result Graph::top_k(const operand& a, std::int64_t k, bool columns, const step_options& o) {
  auto r = step_request<v1::TopKRequest>(a, o);
  r.set_k(k);
  r.set_columns(columns);
  return detail::call_kept(channel_, methods_->top_k, r, o.on_progress);
}

namespace {

v1::ReduceRequest reduce_request(const operand& a, v1::ReduceAxis axis, const std::string& monoid,
                                 const step_options& o) {
  auto r = step_request<v1::ReduceRequest>(a, o);
  r.set_axis(axis);
  r.set_monoid(monoid);
  return r;
}

}  // namespace

kept_result Graph::reduce_rowwise(const operand& a, const std::string& monoid, const step_options& o) {
  return detail::call_kept(channel_, methods_->reduce, reduce_request(a, v1::ROWS, monoid, o), o.on_progress);
}

kept_result Graph::reduce_columnwise(const operand& a, const std::string& monoid, const step_options& o) {
  return detail::call_kept(channel_, methods_->reduce, reduce_request(a, v1::COLUMNS, monoid, o), o.on_progress);
}

kept_result Graph::reduce_scalar(const operand& a, const std::string& monoid, const step_options& o) {
  return detail::call_kept(channel_, methods_->reduce, reduce_request(a, v1::ALL, monoid, o), o.on_progress);
}

namespace {

v1::ScaleRequest scale_request(const operand& a, const operand& v, bool columns, const std::string& op,
                               const step_options& o) {
  auto r = step_request<v1::ScaleRequest>(a, o);
  set(r.mutable_v(), v);
  r.set_columns(columns);
  r.set_op(op);
  return r;
}

}  // namespace

kept_result Graph::scale_rows(const operand& a, const operand& v, const std::string& op, const step_options& o) {
  return detail::call_kept(channel_, methods_->scale, scale_request(a, v, false, op, o), o.on_progress);
}

kept_result Graph::scale_columns(const operand& a, const operand& v, const std::string& op, const step_options& o) {
  return detail::call_kept(channel_, methods_->scale, scale_request(a, v, true, op, o), o.on_progress);
}

kept_result Graph::extract_rows(const operand& a, const std::vector<std::int64_t>& rows, const step_options& o) {
  auto r = step_request<v1::ExtractRowsRequest>(a, o);
  r.mutable_rows()->Add(rows.begin(), rows.end());
  return detail::call_kept(channel_, methods_->extract_rows, r, o.on_progress);
}

}  // namespace spgemm::client
