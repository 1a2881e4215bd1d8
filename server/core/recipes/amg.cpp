#include "core/recipes/amg.hpp"

#include <chrono>
#include <type_traits>
#include <variant>

#include "core/matrices.hpp"
#include "core/recipes/steps.hpp"
#include "spgemm/errors.hpp"

namespace spgemmd::core {

namespace {

namespace amg = spgemm::amg;

// The most steps a setup takes: nine a level and the coarse solve's. A job's
// steps are reserved for them, so that a step adds the next without moving
// the one that runs.
std::size_t most_steps(const amg::setup_options& o) { return 9 * static_cast<std::size_t>(o.max_levels) + 2; }

// A setup's course: the engine's builder, made at the first step's estimate
// (on the job's device, its inputs resident).
struct setup_course {
  std::function<std::unique_ptr<amg::builder>(job&, spgemm::backend&)> start;
  std::unique_ptr<amg::builder> builder;
};

// Runs the builder's next step; adds the one after while the setup goes on.
job_step builder_step(const std::shared_ptr<setup_course>& course) {
  job_step s;
  s.what = "amg setup";
  s.estimate = [course](job& j, spgemm::backend& b) {
    if (!course->builder) course->builder = course->start(j, b);
    j.steps[j.next_step].what = "amg " + course->builder->next_step();
    return course->builder->estimate();
  };
  s.run = [course](job& j, spgemm::backend&) {
    const steady::time_point started = steady::now();
    course->builder->run(j.step_estimate, j.cancel);
    note_engine(j, started);
    if (!course->builder->done()) {
      if (j.steps.size() == j.steps.capacity()) {
        throw spgemm::error(spgemm::error_kind::bad_input, "the setup took more steps than its levels allow");
      }
      j.steps.push_back(builder_step(course));
    }
    return course->builder->held_bytes();
  };
  return s;
}

std::shared_ptr<job> setup_job_of(const char* kind, const amg::setup_options& options, int priority,
                                  std::vector<pin> inputs, const std::shared_ptr<setup_course>& course) {
  auto j = std::make_shared<job>();
  j->kind = kind;
  j->algorithm = std::string(spgemm::to_string(options.products.algo));
  j->priority = priority;
  j->inputs = std::move(inputs);
  j->steps.reserve(most_steps(options));
  j->steps.push_back(builder_step(course));
  return j;
}

// The near null space from a dense matrix (every entry of its rows stored).
std::vector<double> dense_rows(const spgemm::any_csr& m) {
  return std::visit(
      [](const auto& c) {
        if (c.nnz() != c.rows * c.cols) {
          throw spgemm::error(spgemm::error_kind::bad_input,
                              "the near null space must store every entry of its rows (a dense matrix); it has " +
                                  std::to_string(c.nnz()) + " of " + std::to_string(c.rows * c.cols));
        }
        return std::vector<double>(c.values.begin(), c.values.end());
      },
      m);
}

std::string level_name(const std::string& name, const char* what, std::size_t k) {
  return (name.empty() ? std::string("amg") : name) + "/" + what + std::to_string(k);
}

// The entries of a new hierarchy's matrices (A_0 the caller's `a0`), kept
// resident on the job's device; their bytes move from the job's reservation.
std::shared_ptr<amg_record> keep_hierarchy(amg_hierarchies& hierarchies, job& j, const caller& who,
                                           const std::string& name, const std::string& a0,
                                           std::shared_ptr<amg::hierarchy> h, const amg::setup_options& options) {
  matrix_cache& cache = hierarchies.cache();
  auto record = std::make_shared<amg_record>();
  record->owner = who;
  record->tenant = who.tenant;
  record->handle = amg_hierarchies::new_handle();
  record->name = name;
  record->device = j.device;
  record->options = options;
  auto keep = [&](const std::shared_ptr<spgemm::stored_matrix>& m, const char* what, std::size_t k) {
    const std::string level = level_name(name, what, k);
    // Its name counts in the budget beside its bytes (the job's reservation holds the matrices').
    if (!j.res.try_grow(level.size())) {
      throw spgemm::error(spgemm::error_kind::does_not_fit,
                          "no room left on the device for the names of the hierarchy's matrices; retry later");
    }
    const entry_info e = cache.insert_stored(who, j.res, m, level, 0);
    return std::make_shared<resident_pin>(cache, cache.acquire(who, e.handle), j.device);
  };
  try {
    for (std::size_t k = 0; k < h->levels(); ++k) {
      amg_level_entries l;
      if (k == 0) {
        pin p = cache.acquire(who, a0);
        if (!p) throw spgemm::error(spgemm::error_kind::bad_input, "matrix " + a0 + " was deleted during the setup");
        l.a = std::make_shared<resident_pin>(cache, std::move(p), j.device);
      } else {
        l.a = keep(h->a(k), "A", k);
      }
      if (k + 1 < h->levels()) {
        l.p = keep(h->p(k), "P", k);
        l.r = keep(h->r(k), "R", k);
      }
      record->levels.push_back(std::move(l));
    }
  } catch (...) {
    for (std::size_t k = 0; k < record->levels.size(); ++k) {
      const amg_level_entries& l = record->levels[k];
      for (const auto* e : {&l.a, &l.p, &l.r}) {
        if (*e && !(k == 0 && e == &l.a)) cache.erase(who, (*e)->entry().handle);
      }
    }
    throw;
  }
  record->hierarchy = std::move(h);
  record->own.take(j.res);
  hierarchies.add(record);
  return record;
}

}  // namespace

outcome amg_setup_job(amg_hierarchies& hierarchies, amg_setup_request request, amg_done done,
                      std::shared_ptr<job>* out) {
  const spgemm::matrix_info a = request.a->info;
  if (a.rows != a.cols) {
    return {status::invalid_argument, "algebraic multigrid needs a square matrix; got " + shape(a)};
  }
  const bool with_near_nullspace = static_cast<bool>(request.near_nullspace);
  if (with_near_nullspace && request.near_nullspace->info.rows != a.rows) {
    return {status::invalid_argument, "the near null space has " + std::to_string(request.near_nullspace->info.rows) +
                                          " rows; A has " + std::to_string(a.rows)};
  }
  auto course = std::make_shared<setup_course>();
  const amg::setup_options options = request.options;
  course->start = [options, with_near_nullspace](job& j, spgemm::backend& b) {
    amg::setup_options o = options;
    if (with_near_nullspace) {
      const spgemm::any_csr m = b.fetch(*j.resident[1]);
      o.near_nullspace = dense_rows(m);
      o.near_nullspace_columns = static_cast<int>(spgemm::info_of(m).cols);
    }
    const std::shared_ptr<spgemm::backend> on = j.res.cache()->backends()[static_cast<std::size_t>(j.device)];
    return std::make_unique<amg::builder>(on, j.resident[0], std::move(o));
  };
  std::vector<pin> inputs;
  const std::string a0 = request.a->handle;
  inputs.push_back(std::move(request.a));
  if (with_near_nullspace) inputs.push_back(std::move(request.near_nullspace));
  auto j = setup_job_of("amg setup", options, request.priority, std::move(inputs), course);
  j->done = [&hierarchies, course, who = request.who, name = request.name, a0, options,
             done = std::move(done)](job& jj, outcome result) {
    std::shared_ptr<amg_record> record;
    if (result.ok()) {
      try {
        record = keep_hierarchy(hierarchies, jj, who, name, a0, course->builder->finish(), options);
      } catch (...) {
        result = outcome_of(std::current_exception());
      }
    }
    course->builder.reset();
    done(std::move(result), std::move(record));
  };
  *out = std::move(j);
  return {};
}

outcome amg_resetup_job(amg_hierarchies& hierarchies, std::shared_ptr<amg_record> record, int priority,
                        amg_done done, std::shared_ptr<job>* out) {
  if (record->resetting.exchange(true)) {
    return {status::invalid_argument, "hierarchy " + record->handle + " is being set up again already; wait for it"};
  }
  matrix_cache& cache = hierarchies.cache();
  std::shared_ptr<amg::hierarchy> previous;
  std::string a0;
  {
    std::lock_guard<std::mutex> lock(record->mutex);
    previous = record->hierarchy;
    a0 = record->levels[0].a->entry().handle;
  }
  pin a = cache.acquire(record->owner, a0);
  if (!a) {
    record->resetting = false;
    return {status::not_found, "matrix " + a0 + " (the hierarchy's A_0) was deleted"};
  }
  auto course = std::make_shared<setup_course>();
  course->start = [previous](job& j, spgemm::backend&) {
    const std::shared_ptr<spgemm::backend> on = j.res.cache()->backends()[static_cast<std::size_t>(j.device)];
    return std::make_unique<amg::builder>(on, *previous, j.resident[0]);
  };
  std::vector<pin> inputs;
  inputs.push_back(std::move(a));
  auto j = setup_job_of("amg resetup", record->options, priority, std::move(inputs), course);
  j->device = record->device;  // its hierarchy's device, where A_0 stays
  j->res = reservation(&cache, record->device);
  j->done = [&cache, course, record, done = std::move(done)](job& jj, outcome result) {
    if (result.ok()) {
      try {
        std::shared_ptr<amg::hierarchy> h = course->builder->finish();
        // The old hierarchy goes first, with the builder that read it and the
        // start that held it for the builder (the job's last reference may
        // drop later, on another thread): then only the cache holds the
        // versions replaced, and replace_stored frees them at once instead of
        // counting them as reserved until then.
        course->builder.reset();
        course->start = nullptr;
        std::lock_guard<std::mutex> lock(record->mutex);
        std::shared_ptr<amg::hierarchy> old = std::move(record->hierarchy);
        record->hierarchy = h;
        old.reset();
        for (std::size_t k = 0; k < record->levels.size(); ++k) {
          const amg_level_entries& l = record->levels[k];
          if (k > 0) cache.replace_stored(l.a->entry(), h->a(k), jj.res);
          if (l.p) cache.replace_stored(l.p->entry(), h->p(k), jj.res);
          if (l.r) cache.replace_stored(l.r->entry(), h->r(k), jj.res);
        }
        // What is left of the job's reservation is the new hierarchy's own
        // bytes but the tentative prolongators it shares with the old.
        record->own.shrink_to(h->own_bytes() - std::min(h->own_bytes(), jj.res.bytes()));
        record->own.take(jj.res);
      } catch (...) {
        result = outcome_of(std::current_exception());
      }
    }
    course->builder.reset();
    record->resetting = false;
    done(std::move(result), record);
  };
  *out = std::move(j);
  return {};
}

outcome amg_solve_job(amg_hierarchies& hierarchies, std::shared_ptr<amg_record> record, amg_solve_request request,
                      amg_solved done, std::shared_ptr<job>* out) {
  matrix_cache& cache = hierarchies.cache();
  std::shared_ptr<amg::hierarchy> h;
  std::vector<pin> inputs;
  {
    std::lock_guard<std::mutex> lock(record->mutex);
    h = record->hierarchy;
    for (const amg_level_entries& l : record->levels) {
      for (const auto* e : {&l.a, &l.p, &l.r}) {
        if (!*e) continue;
        pin p = cache.acquire(record->owner, (*e)->entry().handle);
        if (!p) return {status::not_found, "matrix " + (*e)->entry().handle + " of hierarchy " + record->handle +
                                               " was deleted; delete the hierarchy and set it up again"};
        inputs.push_back(std::move(p));
      }
    }
  }
  const std::int64_t n = record->levels[0].a->entry().info.rows;
  if (static_cast<std::int64_t>(request.b.size()) != n ||
      (!request.x.empty() && static_cast<std::int64_t>(request.x.size()) != n)) {
    return {status::invalid_argument, "b (and x, where given) must have " + std::to_string(n) + " values; got " +
                                          std::to_string(request.b.size()) + " (and " +
                                          std::to_string(request.x.size()) + ")"};
  }
  struct solve_state {
    amg_solve_request request;
    amg::solve_report report;
  };
  auto state = std::make_shared<solve_state>();
  state->request = std::move(request);
  job_step s;
  s.what = state->request.one_cycle ? "amg cycle" : "amg solve";
  s.estimate = [h, state](job&, spgemm::backend&) {
    spgemm::memory_estimate e;
    e.workspace_bytes = h->solve_bytes();
    e.method = state->request.one_cycle ? "amg cycle" : "amg pcg";
    return e;
  };
  s.run = [h, state](job& j, spgemm::backend&) -> std::size_t {
    const steady::time_point started = steady::now();
    amg_solve_request& r = state->request;
    if (r.one_cycle) {
      h->precondition(r.b, r.x, r.options);
    } else {
      state->report = h->solve(r.b, r.x, r.options, j.cancel);
    }
    note_engine(j, started);
    return 0;
  };
  auto j = std::make_shared<job>();
  j->kind = state->request.one_cycle ? "amg cycle" : "amg solve";
  j->algorithm = std::string(amg::to_string(state->request.options.smoothing));
  j->priority = state->request.priority;
  j->inputs = std::move(inputs);
  j->steps.push_back(std::move(s));
  j->done = [state, done = std::move(done)](job&, outcome result) {
    done(std::move(result), state->report, std::move(state->request.x));
  };
  *out = std::move(j);
  return {};
}

}  // namespace spgemmd::core
