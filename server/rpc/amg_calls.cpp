// The unary calls of spgemm.v1.Amg: Setup and Resetup answer when their job
// ends (a reactor of their own: a client gone cancels the job), Describe and
// Delete at once.
#include <chrono>
#include <memory>
#include <string>

#include "core/matrices.hpp"
#include "core/recipes/amg.hpp"
#include "ops/log.hpp"
#include "rpc/amg_service.hpp"
#include "rpc/messages.hpp"
#include "rpc/status_map.hpp"

namespace spgemmd {

namespace v1 = spgemm::v1;
namespace amg = spgemm::amg;

namespace {

double ms(double seconds) { return 1000.0 * seconds; }

// A call answered when its job ends; a client gone cancels the job.
class job_call final : public grpc::ServerUnaryReactor {
 public:
  job_call(service_state& s, std::string kind) : s_(s), kind_(std::move(kind)) {}

  // A call of `kind` whose job `build` makes, handed the answer that fills
  // `response`; it answers at once where the job cannot be built or queued.
  template <typename Build>
  static job_call* open(service_state& s, std::string kind, v1::AmgHierarchy* response, Build build);

  // Submits `j`; answers at once where the scheduler refuses it.
  void start(std::shared_ptr<core::job> j) {
    job_ = j;
    const core::outcome submitted = s_.sched.submit(std::move(j));
    if (!submitted.ok()) end(to_grpc_status(submitted));
  }
  // Ends the call (once).
  void end(grpc::Status status) {
    s_.metrics.call_ended(kind_, code_name(status.error_code()));
    s_.metrics.phase(kind_, "request", std::chrono::duration<double>(core::steady::now() - started_).count());
    Finish(std::move(status));
  }
  double call_seconds() const { return std::chrono::duration<double>(core::steady::now() - started_).count(); }
  const std::shared_ptr<core::job>& job() const { return job_; }

  void OnCancel() override {
    if (job_) job_->cancel.cancel();
    s_.sched.poke();
  }
  void OnDone() override { delete this; }

 private:
  service_state& s_;
  std::string kind_;
  core::steady::time_point started_ = core::steady::now();
  std::shared_ptr<core::job> job_;
};

grpc::Status setup_options_from(const v1::AmgSetupOptions& o, amg::setup_options* out) {
  amg::setup_options d;
  d.strength_theta = o.strength_theta();
  if (o.has_coarse_strength_theta()) d.coarse_strength_theta = o.coarse_strength_theta();
  if (o.max_coarse() > 0) d.max_coarse = o.max_coarse();
  if (o.max_levels() > 0) d.max_levels = o.max_levels();
  if (o.prolongator_omega() > 0) d.prolongator_omega = o.prolongator_omega();
  if (o.spectral_steps() > 0) d.spectral_steps = o.spectral_steps();
  d.block_size = o.block_size();
  v1::MultiplyOptions products;
  products.set_algorithm(o.algorithm());
  if (grpc::Status st = options_from(products, &d.products); !st.ok()) return st;
  if (d.strength_theta < 0 || d.strength_theta > 1 || d.coarse_strength_theta < 0 || d.coarse_strength_theta > 1 ||
      d.max_coarse < 1 || d.max_levels < 1 ||
      d.block_size < 0 || d.block_size > 6) {
    return {grpc::StatusCode::INVALID_ARGUMENT,
            "options: strength_theta and coarse_strength_theta in [0, 1], max_coarse and max_levels positive, "
            "block_size 0 to 6"};
  }
  *out = std::move(d);
  return grpc::Status::OK;
}

// Answers a setup or re-setup: the hierarchy, its times and the queue's.
core::amg_done answer(service_state& s, job_call* call, v1::AmgHierarchy* response, std::string kind) {
  return [&s, call, response, kind = std::move(kind)](core::outcome result, std::shared_ptr<core::amg_record> r) {
    if (!result.ok()) {
      log_event("warning", kind, {{"outcome", result.message}});
      call->end(to_grpc_status(result));
      return;
    }
    to_proto(*r, s.cache, response);
    v1::AmgSetupTimes* t = response->mutable_setup();
    t->set_queue_ms(ms(call->job()->times.queue));
    t->set_call_ms(ms(call->call_seconds()));
    log_event("info", kind,
              {{"hierarchy", r->handle},
               {"levels", static_cast<int64_t>(response->levels_size())},
               {"operator_complexity", response->operator_complexity()},
               {"setup_ms", t->total_ms()},
               {"device", response->device()}});
    call->end(grpc::Status::OK);
  };
}

grpc::Status no_hierarchy(const std::string& handle) {
  return {grpc::StatusCode::NOT_FOUND, "no hierarchy with handle " + handle};
}

// Opens a call on the caller's hierarchy `handle`: the status to end it
// with where the caller or the hierarchy is not found.
grpc::Status open_hierarchy_call(service_state& s, grpc::CallbackServerContext& ctx, const std::string& handle,
                                 core::caller* who, std::shared_ptr<core::amg_record>* record) {
  if (grpc::Status st = open_call(s, ctx, grpc::Status::OK, who); !st.ok()) return st;
  *record = s.hierarchies.find(who->tenant, handle);
  return *record ? grpc::Status::OK : no_hierarchy(handle);
}

template <typename Build>
job_call* job_call::open(service_state& s, std::string kind, v1::AmgHierarchy* response, Build build) {
  auto* call = new job_call(s, kind);
  std::shared_ptr<core::job> j;
  const core::outcome built = build(answer(s, call, response, std::move(kind)), &j);
  if (built.ok()) {
    call->start(std::move(j));
  } else {
    call->end(to_grpc_status(built));
  }
  return call;
}

}  // namespace

void to_proto(core::amg_record& r, const core::matrix_cache& cache, v1::AmgHierarchy* out) {
  std::shared_ptr<amg::hierarchy> h;
  std::vector<core::amg_level_entries> levels;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    h = r.hierarchy;
    levels = r.levels;
  }
  const amg::setup_report& report = h->report();
  out->set_handle(r.handle);
  out->set_name(r.name);
  for (std::size_t k = 0; k < levels.size(); ++k) {
    v1::AmgLevel* l = out->add_levels();
    l->set_a(levels[k].a->entry().handle);
    if (levels[k].p) l->set_p(levels[k].p->entry().handle);
    if (levels[k].r) l->set_r(levels[k].r->entry().handle);
    l->set_rows(report.levels[k].rows);
    l->set_nnz(report.levels[k].nnz);
    l->set_block_size(report.levels[k].block_size);
  }
  out->set_operator_complexity(report.operator_complexity);
  out->set_grid_complexity(report.grid_complexity);
  const amg::setup_times& t = report.seconds;
  v1::AmgSetupTimes* o = out->mutable_setup();
  o->set_strength_ms(ms(t.strength));
  o->set_aggregation_ms(ms(t.aggregation));
  o->set_tentative_ms(ms(t.tentative));
  o->set_spectral_radius_ms(ms(t.spectral_radius));
  o->set_smoothing_ms(ms(t.smoothing));
  o->set_transpose_ms(ms(t.transpose));
  o->set_galerkin_ms(ms(t.galerkin));
  o->set_coarse_solver_ms(ms(t.coarse_solver));
  o->set_total_ms(ms(t.total()));
  out->set_numeric_only(report.numeric_only);
  out->set_device(cache.backends()[static_cast<std::size_t>(r.device)]->name());
  out->set_methods(report.methods);
  out->set_mis_rounds(report.mis_rounds);
  out->set_bytes(static_cast<int64_t>(h->own_bytes()));
}

grpc::ServerUnaryReactor* amg_service::Setup(grpc::CallbackServerContext* ctx, const v1::AmgSetupRequest* request,
                                             v1::AmgHierarchy* response) {
  core::caller who;
  if (grpc::Status st = open_call(state_, *ctx, grpc::Status::OK, &who); !st.ok()) return finished(ctx, st);
  core::amg_setup_request r;
  r.who = who;
  r.name = request->name();
  r.priority = request->priority();
  if (grpc::Status st = setup_options_from(request->options(), &r.options); !st.ok()) return finished(ctx, st);
  core::outcome pinned = core::pin_matrix(state_.cache, who, "matrix", request->matrix(), &r.a);
  if (pinned.ok() && !request->options().near_nullspace().empty()) {
    pinned = core::pin_matrix(state_.cache, who, "options.near_nullspace", request->options().near_nullspace(),
                              &r.near_nullspace);
  }
  if (!pinned.ok()) return finished(ctx, to_grpc_status(pinned));
  return job_call::open(state_, "amg setup", response, [&](core::amg_done done, std::shared_ptr<core::job>* j) {
    return core::amg_setup_job(state_.hierarchies, std::move(r), std::move(done), j);
  });
}

grpc::ServerUnaryReactor* amg_service::Resetup(grpc::CallbackServerContext* ctx,
                                               const v1::AmgHierarchyRequest* request, v1::AmgHierarchy* response) {
  core::caller who;
  std::shared_ptr<core::amg_record> record;
  if (grpc::Status st = open_hierarchy_call(state_, *ctx, request->hierarchy(), &who, &record); !st.ok()) {
    return finished(ctx, st);
  }
  return job_call::open(state_, "amg resetup", response, [&](core::amg_done done, std::shared_ptr<core::job>* j) {
    return core::amg_resetup_job(state_.hierarchies, record, request->priority(), std::move(done), j);
  });
}

grpc::ServerUnaryReactor* amg_service::Describe(grpc::CallbackServerContext* ctx,
                                                const v1::AmgHierarchyRequest* request, v1::AmgHierarchy* response) {
  core::caller who;
  std::shared_ptr<core::amg_record> record;
  if (grpc::Status st = open_hierarchy_call(state_, *ctx, request->hierarchy(), &who, &record); !st.ok()) {
    return finished(ctx, st);
  }
  to_proto(*record, state_.cache, response);
  return finished(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor* amg_service::Delete(grpc::CallbackServerContext* ctx,
                                              const v1::AmgHierarchyRequest* request, v1::DeleteResponse* response) {
  core::caller who;
  std::shared_ptr<core::amg_record> record;
  grpc::Status st = open_hierarchy_call(state_, *ctx, request->hierarchy(), &who, &record);
  if (st.ok() && !state_.hierarchies.erase(who.tenant, request->hierarchy())) st = no_hierarchy(request->hierarchy());
  if (!st.ok()) return finished(ctx, st);
  // Its own bytes and its levels' matrices (A_0 is the caller's): freed now,
  // or when the last job using them ends.
  std::size_t freed = record->own.bytes();
  for (std::size_t k = 0; k < record->levels.size(); ++k) {
    const core::amg_level_entries& l = record->levels[k];
    for (const auto* e : {&l.a, &l.p, &l.r}) {
      if (*e && !(k == 0 && e == &l.a)) freed += (*e)->entry().bytes;
    }
  }
  response->set_freed_bytes(static_cast<int64_t>(freed));
  log_event("info", "amg delete", {{"hierarchy", request->hierarchy()}});
  return finished(ctx, grpc::Status::OK);
}

}  // namespace spgemmd
