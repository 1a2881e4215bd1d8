#include "rpc/graph_service.hpp"

#include <string>
#include <utility>
#include <vector>

#include "core/recipes/graph.hpp"
#include "rpc/messages.hpp"
#include "rpc/product_call.hpp"
#include "rpc/status_map.hpp"
#include "spgemm/matrix_ops.hpp"
#include "spgemm/semiring.hpp"

namespace spgemmd {

namespace v1 = spgemm::v1;

namespace {

// The operands of a request, by field name.
using operand_fields = std::vector<std::pair<const char*, const v1::Operand*>>;

grpc::Status pin_operands(service_state& s, const core::caller& who, const operand_fields& fields,
                          std::vector<core::graph_operand>* out) {
  for (const auto& [field, operand] : fields) {
    core::graph_operand o;
    o.transposed = operand->transpose();
    if (grpc::Status st = pin_matrix(s, who, field, operand->handle(), &o.matrix); !st.ok()) return st;
    out->push_back(std::move(o));
  }
  return grpc::Status::OK;
}

// A name the engine parses: its value, or INVALID_ARGUMENT listing the known ones.
template <typename Parse>
grpc::Status parsed(Parse parse) {
  try {
    parse();
    return grpc::Status::OK;
  } catch (...) {
    return to_grpc_status(std::current_exception());
  }
}

// The course of a step between products: the request parsed, its op made
// (op_of may throw the engine's bad_input for a name), its operands pinned,
// the job built by core::op_job.
template <typename Request, typename OpOf>
graph_service::reactor* op_call(service_state& s, grpc::CallbackServerContext* ctx, const grpc::ByteBuffer& raw,
                                const char* kind, OpOf op_of) {
  Request request;
  const grpc::Status parse_status = parse(raw, &request);
  return run_product(s, ctx, kind, parse_status, request.output(), [&](const core::caller& who, auto* out) {
    spgemm::matrix_op op;
    operand_fields fields;
    if (grpc::Status st = parsed([&] { op = op_of(request, &fields); }); !st.ok()) return st;
    std::vector<core::graph_operand> operands;
    if (grpc::Status st = pin_operands(s, who, fields, &operands); !st.ok()) return st;
    return to_grpc_status(core::op_job(op, std::move(operands), request.priority(), out));
  });
}

// An operator name, or `fallback` where it is empty.
spgemm::binary_op binary_or(const std::string& name, spgemm::binary_op fallback) {
  return name.empty() ? fallback : spgemm::parse_binary_op(name);
}

}  // namespace

graph_service::reactor* graph_service::Mxm(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* raw) {
  v1::MxmRequest request;
  const grpc::Status parse_status = parse(*raw, &request);
  return run_product(state_, ctx, "mxm", parse_status, request.output(), [&](const core::caller& who, auto* out) {
    spgemm::multiply_options options;
    if (grpc::Status st = options_from(request.options(), &options); !st.ok()) return st;
    if (grpc::Status st = parsed([&] { options.semiring = spgemm::parse_semiring(request.semiring()); }); !st.ok()) {
      return st;
    }
    operand_fields fields = {{"a", &request.a()}, {"b", &request.b()}};
    if (request.has_mask()) fields.push_back({"mask.matrix", &request.mask().matrix()});
    std::vector<core::graph_operand> operands;
    if (grpc::Status st = pin_operands(state_, who, fields, &operands); !st.ok()) return st;
    std::optional<core::graph_operand> mask;
    if (request.has_mask()) mask = std::move(operands[2]);
    const spgemm::mask_options how{request.mask().complement(), !request.mask().values()};
    return to_grpc_status(core::mxm_job(state_.estimates, std::move(operands[0]), std::move(operands[1]),
                                        std::move(mask), how, options, request.options().priority(), out));
  });
}

graph_service::reactor* graph_service::EwiseAdd(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* raw) {
  return op_call<v1::EwiseRequest>(state_, ctx, *raw, "ewise_add", [](const v1::EwiseRequest& r, operand_fields* f) {
    *f = {{"a", &r.a()}, {"b", &r.b()}};
    return spgemm::matrix_op{spgemm::ewise_add{binary_or(r.op(), spgemm::binary_op::plus)}};
  });
}

graph_service::reactor* graph_service::EwiseMult(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* raw) {
  return op_call<v1::EwiseRequest>(state_, ctx, *raw, "ewise_mult", [](const v1::EwiseRequest& r, operand_fields* f) {
    *f = {{"a", &r.a()}, {"b", &r.b()}};
    return spgemm::matrix_op{spgemm::ewise_mult{binary_or(r.op(), spgemm::binary_op::times)}};
  });
}

graph_service::reactor* graph_service::Apply(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* raw) {
  return op_call<v1::ApplyRequest>(state_, ctx, *raw, "apply", [](const v1::ApplyRequest& r, operand_fields* f) {
    *f = {{"a", &r.a()}};
    if (!r.has_scalar()) return spgemm::matrix_op{spgemm::apply_unary{spgemm::parse_unary_op(r.op())}};
    return spgemm::matrix_op{spgemm::apply_scalar{spgemm::parse_binary_op(r.op()), r.scalar(), r.scalar_first()}};
  });
}

graph_service::reactor* graph_service::Select(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* raw) {
  return op_call<v1::SelectRequest>(state_, ctx, *raw, "select", [](const v1::SelectRequest& r, operand_fields* f) {
    *f = {{"a", &r.a()}};
    return spgemm::matrix_op{spgemm::select_entries{spgemm::parse_selector(r.selector()), r.thunk()}};
  });
}

graph_service::reactor* graph_service::TopK(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* raw) {
  return op_call<v1::TopKRequest>(state_, ctx, *raw, "top_k", [](const v1::TopKRequest& r, operand_fields* f) {
    *f = {{"a", &r.a()}};
    return spgemm::matrix_op{spgemm::top_k{r.k(), r.columns()}};
  });
}

graph_service::reactor* graph_service::Reduce(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* raw) {
  return op_call<v1::ReduceRequest>(state_, ctx, *raw, "reduce", [](const v1::ReduceRequest& r, operand_fields* f) {
    *f = {{"a", &r.a()}};
    spgemm::reduce o;
    o.axis = r.axis() == v1::COLUMNS ? spgemm::reduce_axis::columns
             : r.axis() == v1::ALL   ? spgemm::reduce_axis::all
                                     : spgemm::reduce_axis::rows;
    o.count = r.monoid() == "count";
    if (!o.count && !r.monoid().empty()) o.add = spgemm::parse_monoid(r.monoid());
    return spgemm::matrix_op{o};
  });
}

graph_service::reactor* graph_service::Scale(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* raw) {
  return op_call<v1::ScaleRequest>(state_, ctx, *raw, "scale", [](const v1::ScaleRequest& r, operand_fields* f) {
    *f = {{"a", &r.a()}, {"v", &r.v()}};
    return spgemm::matrix_op{spgemm::scale{r.columns(), binary_or(r.op(), spgemm::binary_op::times)}};
  });
}

graph_service::reactor* graph_service::ExtractRows(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* raw) {
  return op_call<v1::ExtractRowsRequest>(state_, ctx, *raw, "extract_rows",
                                         [](const v1::ExtractRowsRequest& r, operand_fields* f) {
                                           *f = {{"a", &r.a()}};
                                           return spgemm::matrix_op{
                                               spgemm::extract_rows{{r.rows().begin(), r.rows().end()}}};
                                         });
}

}  // namespace spgemmd
