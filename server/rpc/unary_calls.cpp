// The unary calls of spgemm.v1.Spgemm: Delete, List, Describe, Status, each
// answered at once on gRPC's default reactor.
#include "rpc/service.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <optional>

#include "core/matrices.hpp"
#include "core/server_status.hpp"
#include "ops/log.hpp"
#include "rpc/messages.hpp"
#include "rpc/status_map.hpp"

namespace spgemmd {

namespace v1 = spgemm::v1;

namespace {

// The most matrices a List page holds: a page stays far below gRPC's
// message limits (a MatrixInfo with the longest name is under 400 bytes).
constexpr int max_page_size = 1000;

// Parses the raw request as a `Request`, answers it with `answer(parsed,
// request, response)` (a Status, filling a `Response`; `parsed` is whether
// the request decoded, for open_call to report in its turn) and ends the call.
template <typename Request, typename Response, typename Answer>
grpc::ServerUnaryReactor* unary(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* raw, grpc::ByteBuffer* out,
                                Answer answer) {
  Request request;
  Response response;
  grpc::Status status = answer(parse(*raw, &request), request, &response);
  if (status.ok()) {
    bool own = false;
    out->Clear();
    status = grpc::SerializationTraits<Response>::Serialize(response, out, &own);
  }
  return finished(ctx, std::move(status));
}

// A page token: where the page before ended (creation time in ns, handle).
std::string page_token(const core::entry_info& last) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(last.created.time_since_epoch()).count();
  return std::to_string(ns) + ":" + last.handle;
}

std::optional<core::list_cursor> parse_page_token(const std::string& token) {
  const auto colon = token.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == token.size()) return std::nullopt;
  int64_t ns = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + colon, ns);
  if (ec != std::errc() || end != token.data() + colon) return std::nullopt;
  return core::list_cursor{core::wall::time_point(std::chrono::duration_cast<core::wall::duration>(
                               std::chrono::nanoseconds(ns))),
                           token.substr(colon + 1)};
}

}  // namespace

grpc::ServerUnaryReactor* spgemm_service::Delete(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* raw,
                                                 grpc::ByteBuffer* out) {
  return unary<v1::DeleteRequest, v1::DeleteResponse>(
      ctx, raw, out, [&](const grpc::Status& parsed, const auto& request, auto* response) {
        core::caller who;
        if (grpc::Status st = open_call(state_, *ctx, parsed, &who); !st.ok()) return st;
        std::size_t freed = 0;
        const core::outcome deleted = core::delete_matrix(state_.cache, who, request.handle(), &freed);
        if (!deleted.ok()) return to_grpc_status(deleted);
        response->set_freed_bytes(static_cast<int64_t>(freed));
        log_event("info", "delete",
                  {{"handle", request.handle()}, {"tenant", who.tenant}, {"freed_bytes", static_cast<int64_t>(freed)}});
        return grpc::Status::OK;
      });
}

grpc::ServerUnaryReactor* spgemm_service::List(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* raw,
                                               grpc::ByteBuffer* out) {
  return unary<v1::ListRequest, v1::ListResponse>(
      ctx, raw, out, [&](const grpc::Status& parsed, const auto& request, auto* response) {
        core::caller who;
        if (grpc::Status st = open_call(state_, *ctx, parsed, &who); !st.ok()) return st;
        if (request.page_size() < 0) {
          return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "page_size must not be negative");
        }
        std::optional<core::list_cursor> after;
        if (!request.page_token().empty()) {
          after = parse_page_token(request.page_token());
          if (!after) {
            return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                "page_token is not one that List returned; send the next_page_token of the page "
                                "before, or none for the first page");
          }
        }
        const int size = request.page_size() == 0 ? max_page_size : std::min(request.page_size(), max_page_size);
        const core::list_page page = state_.cache.list(who, after, static_cast<std::size_t>(size));
        for (const auto& e : page.entries) to_proto(e, response->add_matrices());
        if (page.more) response->set_next_page_token(page_token(page.entries.back()));
        return grpc::Status::OK;
      });
}

grpc::ServerUnaryReactor* spgemm_service::Describe(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* raw,
                                                   grpc::ByteBuffer* out) {
  return unary<v1::DescribeRequest, v1::MatrixInfo>(
      ctx, raw, out, [&](const grpc::Status& parsed, const auto& request, auto* response) {
        core::caller who;
        if (grpc::Status st = open_call(state_, *ctx, parsed, &who); !st.ok()) return st;
        core::entry_info e;
        const core::outcome described = core::describe_matrix(state_.cache, who, request.handle(), &e);
        if (!described.ok()) return to_grpc_status(described);
        to_proto(e, response);
        return grpc::Status::OK;
      });
}

grpc::ServerUnaryReactor* spgemm_service::Status(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* raw,
                                                 grpc::ByteBuffer* out) {
  return unary<v1::StatusRequest, v1::ServerStatus>(
      ctx, raw, out, [&](const grpc::Status& parsed, const auto&, v1::ServerStatus* response) {
        // Status answers while the server shuts down too; only its caller (then its request) is checked.
        core::caller who;
        if (grpc::Status st = state_.auth.authenticate(*ctx, &who); !st.ok()) return st;
        if (!parsed.ok()) return parsed;
        const core::server_status s = core::status_of(state_.cache, state_.sched, who);
        to_proto(who, response);
        response->set_version(state_.version);
        for (const core::device_status& d : s.devices) {
          v1::DeviceStatus* dev = response->add_devices();
          dev->set_name(d.name);
          dev->set_description(d.description);
          dev->set_is_gpu(d.is_gpu);
          dev->set_total_bytes(static_cast<int64_t>(d.memory.total_bytes));
          dev->set_free_bytes(static_cast<int64_t>(d.memory.free_bytes));
          dev->set_budget_bytes(static_cast<int64_t>(d.cache.budget));
          dev->set_cached_bytes(static_cast<int64_t>(d.cache.cached));
          dev->set_reserved_bytes(static_cast<int64_t>(d.cache.reserved));
          dev->set_jobs_running(d.jobs_running);
          dev->set_peak_bytes(static_cast<int64_t>(d.memory.peak_bytes));
          dev->set_jobs_queued(d.jobs_queued);
          dev->set_panels_in_flight(d.cache.panels_in_flight);
          dev->set_bytes_to_device(d.cache.bytes_to_device);
          dev->set_bytes_to_host(d.cache.bytes_to_host);
          dev->set_bytes_from_peer(d.cache.bytes_from_peer);
        }
        response->set_queue_depth(s.jobs.queue_depth);
        response->set_jobs_running(s.jobs.running);
        response->set_matrices(s.matrices);
        response->set_host_cached_bytes(static_cast<int64_t>(s.host_bytes));
        response->set_host_budget_bytes(static_cast<int64_t>(s.host_budget));
        response->set_spill_bytes(static_cast<int64_t>(s.spill_bytes));
        response->set_spill_budget_bytes(static_cast<int64_t>(s.spill_budget));
        response->set_uptime_seconds(std::chrono::duration<double>(core::steady::now() - state_.started).count());
        response->set_jobs_completed(s.jobs.completed);
        response->set_jobs_failed(s.jobs.failed);
        return grpc::Status::OK;
      });
}

}  // namespace spgemmd
