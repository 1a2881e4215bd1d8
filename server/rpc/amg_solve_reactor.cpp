#include "rpc/amg_solve_reactor.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "ops/log.hpp"
#include "rpc/amg_service.hpp"
#include "rpc/messages.hpp"
#include "rpc/status_map.hpp"

namespace spgemmd {

namespace v1 = spgemm::v1;
namespace amg = spgemm::amg;

namespace {

// Values a reply chunk holds: 1 MiB, well under a client's 4 MiB.
constexpr std::int64_t chunk_values = (1 << 20) / sizeof(double);

double ms_since(core::steady::time_point t) {
  return 1000.0 * std::chrono::duration<double>(core::steady::now() - t).count();
}

grpc::Status invalid(const std::string& message) { return {grpc::StatusCode::INVALID_ARGUMENT, message}; }

grpc::Status solve_options_from(const v1::AmgSolveOptions& o, amg::solve_options* out) {
  amg::solve_options d;
  if (o.tolerance() > 0) d.tolerance = o.tolerance();
  if (o.max_iterations() > 0) d.max_iterations = o.max_iterations();
  d.conjugate_gradient = !o.stationary();
  try {
    d.smoothing = amg::parse_smoother(o.smoother());
  } catch (...) {
    return to_grpc_status(std::current_exception());
  }
  if (o.chebyshev_degree() > 0) d.chebyshev_degree = o.chebyshev_degree();
  if (o.jacobi_omega() > 0) d.jacobi_omega = o.jacobi_omega();
  if (o.presweeps() > 0) d.presweeps = o.presweeps();
  if (o.postsweeps() > 0) d.postsweeps = o.postsweeps();
  *out = d;
  return grpc::Status::OK;
}

// Appends a chunk's values at `first` (they must come in order).
grpc::Status take_chunk(const v1::VectorChunk& c, std::vector<double>& into, std::int64_t& received, const char* what) {
  if (c.first() != received || c.values().size() % sizeof(double) != 0 ||
      received + static_cast<std::int64_t>(c.values().size() / sizeof(double)) > static_cast<std::int64_t>(into.size())) {
    return invalid(std::string(what) + ": a chunk at " + std::to_string(c.first()) + " of " +
                   std::to_string(c.values().size()) + " bytes after " + std::to_string(received) + " of " +
                   std::to_string(into.size()) + " values");
  }
  std::memcpy(into.data() + received, c.values().data(), c.values().size());
  received += static_cast<std::int64_t>(c.values().size() / sizeof(double));
  return grpc::Status::OK;
}

}  // namespace

amg_solve_reactor::amg_solve_reactor(service_state& s, grpc::CallbackServerContext* ctx)
    : s_(s) {
  core::caller who;
  if (grpc::Status st = open_call(s_, *ctx, grpc::Status::OK, &who); !st.ok()) {
    finish(std::move(st));
    return;
  }
  tenant_ = who.tenant;
  StartRead(&in_);
}

grpc::Status amg_solve_reactor::on_part() {
  if (in_.has_header()) {
    if (have_header_) return invalid("a second header");
    const v1::AmgSolveHeader& h = in_.header();
    have_header_ = true;
    record_ = s_.hierarchies.find(tenant_, h.hierarchy());
    if (!record_) return {grpc::StatusCode::NOT_FOUND, "no hierarchy with handle " + h.hierarchy()};
    if (grpc::Status st = solve_options_from(h.options(), &request_.options); !st.ok()) return st;
    request_.one_cycle = h.options().one_cycle();
    request_.priority = h.priority();
    rows_ = record_->levels[0].a->entry().info.rows;
    if (h.rows() != rows_) {
      return invalid("b has " + std::to_string(h.rows()) + " rows; the hierarchy's matrix " + std::to_string(rows_));
    }
    request_.b.assign(static_cast<std::size_t>(rows_), 0.0);
    initial_guess_ = h.initial_guess();
    if (initial_guess_) request_.x.assign(static_cast<std::size_t>(rows_), 0.0);
    return grpc::Status::OK;
  }
  if (!have_header_) return invalid("the header must come first");
  if (in_.has_b()) return take_chunk(in_.b(), request_.b, b_received_, "b");
  if (in_.has_x0()) {
    if (!initial_guess_ || b_received_ != rows_) return invalid("x0's chunks follow b's, where the header says so");
    return take_chunk(in_.x0(), request_.x, x_received_, "x0");
  }
  return invalid("an empty part");
}

void amg_solve_reactor::OnReadDone(bool ok) {
  if (ok) {
    if (grpc::Status st = on_part(); !st.ok()) {
      finish(st);
      return;
    }
    StartRead(&in_);
    return;
  }
  // The client has sent everything.
  if (!have_header_) return finish(invalid("no header"));
  if (b_received_ != rows_ || (initial_guess_ && x_received_ != rows_)) {
    return finish(invalid("b (or x0) ended after " + std::to_string(std::min(b_received_, x_received_)) + " of " +
                          std::to_string(rows_) + " values"));
  }
  submit();
}

void amg_solve_reactor::submit() {
  std::shared_ptr<core::job> j;
  const core::outcome built = core::amg_solve_job(
      s_.hierarchies, record_, std::move(request_), [this](core::outcome result, amg::solve_report report,
                                                           std::vector<double> x) {
        on_solved(std::move(result), std::move(report), std::move(x));
      },
      &j);
  if (!built.ok()) return finish(to_grpc_status(built));
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = j;
  }
  const core::outcome submitted = s_.sched.submit(std::move(j));
  if (!submitted.ok()) finish(to_grpc_status(submitted));
}

void amg_solve_reactor::on_solved(core::outcome result, amg::solve_report report, std::vector<double> x) {
  if (!result.ok()) return finish(to_grpc_status(result));
  x_ = std::move(x);
  stats_.set_iterations(report.iterations);
  for (double r : report.residuals) stats_.add_residuals(r);
  stats_.set_converged(report.converged || request_.one_cycle);
  stats_.set_solve_ms(1000.0 * report.seconds);
  stats_.set_queue_ms(1000.0 * job_->times.queue);
  stats_.set_device(s_.cache.backends()[static_cast<std::size_t>(record_->device)]->name());
  write_next();
}

void amg_solve_reactor::write_next() {
  out_.Clear();
  if (x_sent_ < static_cast<std::int64_t>(x_.size())) {
    const std::int64_t n = std::min<std::int64_t>(chunk_values, static_cast<std::int64_t>(x_.size()) - x_sent_);
    v1::VectorChunk* c = out_.mutable_x();
    c->set_first(x_sent_);
    c->set_values(reinterpret_cast<const char*>(x_.data() + x_sent_), static_cast<std::size_t>(n) * sizeof(double));
    x_sent_ += n;
    StartWrite(&out_);
    return;
  }
  stats_.set_call_ms(ms_since(created_));
  *out_.mutable_stats() = stats_;
  stats_sent_ = true;
  s_.metrics.call_ended(request_.one_cycle ? "amg cycle" : "amg solve", "ok");
  StartWriteAndFinish(&out_, grpc::WriteOptions(), grpc::Status::OK);
}

void amg_solve_reactor::OnWriteDone(bool ok) {
  if (!ok) return finish({grpc::StatusCode::CANCELLED, "the client went away while x streamed"});
  write_next();
}

void amg_solve_reactor::OnCancel() {
  std::lock_guard<std::mutex> lock(mu_);
  if (job_) job_->cancel.cancel();
  s_.sched.poke();
}

void amg_solve_reactor::finish(grpc::Status status) {
  code_ = status.error_code();
  s_.metrics.call_ended(request_.one_cycle ? "amg cycle" : "amg solve", code_name(code_));
  if (!status.ok()) log_event("warn", "amg solve", {{"code", code_name(code_)}, {"message", status.error_message()}});
  Finish(std::move(status));
}

void amg_solve_reactor::OnDone() {
  if (stats_sent_) {
    log_event("info", "amg solve",
              {{"iterations", static_cast<int64_t>(stats_.iterations())}, {"solve_ms", stats_.solve_ms()},
               {"call_ms", stats_.call_ms()}, {"device", stats_.device()}});
  }
  delete this;
}

grpc::ServerBidiReactor<v1::AmgSolvePart, v1::AmgSolveReply>* amg_service::Solve(grpc::CallbackServerContext* ctx) {
  return new amg_solve_reactor(state_, ctx);
}

}  // namespace spgemmd
