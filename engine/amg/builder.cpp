// The setup of a smoothed-aggregation hierarchy as a course of steps
// (spgemm/amg.hpp), each sized before it runs. A full setup runs, per level:
// strength, aggregate, tentative, spectral radius, A T, prolongator,
// transpose, the Galerkin product's first and second products; then the
// coarsest level's factorization. A re-setup runs the same course from the
// spectral radius on, its products numeric only on the structures the
// previous hierarchy kept.
#include <algorithm>
#include <chrono>
#include <string>

#include "amg/levels.hpp"
#include "amg/operations.hpp"
#include "amg/spectral_radius.hpp"
#include "spgemm/errors.hpp"

namespace spgemm::amg {
namespace {

enum class phase {
  strength,
  aggregate,
  tentative,
  spectral_radius,
  at,
  prolongator,
  transpose,
  galerkin_first,
  galerkin_second,
  coarse,
  done,
};

const char* name_of(phase p) {
  switch (p) {
    case phase::strength: return "strength";
    case phase::aggregate: return "aggregate";
    case phase::tentative: return "tentative";
    case phase::spectral_radius: return "spectral radius";
    case phase::at: return "A T";
    case phase::prolongator: return "prolongator";
    case phase::transpose: return "transpose";
    case phase::galerkin_first: return "galerkin first";
    case phase::galerkin_second: return "galerkin second";
    case phase::coarse: return "coarse";
    case phase::done: return "done";
  }
  return "?";
}

std::size_t bytes_of(const std::shared_ptr<stored_matrix>& m) { return m ? m->info().bytes() : 0; }
std::size_t bytes_of(const std::unique_ptr<vector>& v) { return v ? v->bytes() : 0; }

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Room for the partial sums of a device's dot products.
constexpr std::size_t reduction_allowance = 64 << 10;

void check_options(const setup_options& o, const matrix_info& a) {
  if (a.rows != a.cols) {
    throw_bad_input("algebraic multigrid needs a square matrix; got " + std::to_string(a.rows) + " x " +
                    std::to_string(a.cols));
  }
  if (a.type != value_type::f64) throw_bad_input("algebraic multigrid takes f64 matrices");
  if (o.strength_theta < 0 || o.strength_theta > 1 || o.coarse_strength_theta < 0 || o.coarse_strength_theta > 1) {
    throw_bad_input("strength thetas must be in [0, 1]");
  }
  if (o.max_coarse < 1 || o.max_levels < 1 || o.spectral_steps < 1) {
    throw_bad_input("max_coarse, max_levels and spectral_steps must be at least 1");
  }
  if (o.block_size < 0 || o.block_size > 6) throw_bad_input("block_size must be 0 (find it) to 6");
  if (o.prolongator_omega <= 0) throw_bad_input("the prolongator's omega must be positive");
  if (!o.near_nullspace.empty()) {
    const int m = o.near_nullspace_columns;
    if (m < 1 || static_cast<std::int64_t>(o.near_nullspace.size()) != a.rows * m) {
      throw_bad_input("the near null space has " + std::to_string(o.near_nullspace.size()) + " values; " +
                      std::to_string(a.rows) + " rows x " + std::to_string(m) + " columns expected");
    }
  }
}

}  // namespace

struct builder::state {
  std::shared_ptr<backend> on;
  std::unique_ptr<operations> ops;
  std::shared_ptr<levels_hierarchy> h;
  const levels_hierarchy* previous = nullptr;  // a re-setup's
  phase next = phase::strength;
  std::size_t k = 0;  // the level in progress
  int columns = 1;    // of the near null space
  // Between the steps of level k:
  std::shared_ptr<stored_matrix> graph;
  aggregation agg;
  std::unique_ptr<vector> b;  // B_k, (rows of A_k) x columns
  // galerkin_first's operands, chosen by its estimate.
  bool estimated = false;
  memory_estimate estimate;

  level& current() { return h->levels_[k]; }
  const setup_options& options() const { return h->options_; }
  double strength_theta() const {
    const setup_options& o = options();
    return k == 0 ? o.strength_theta : std::max(o.strength_theta, o.coarse_strength_theta);
  }
  multiply_options products() const {
    multiply_options o = options().products;
    o.output_type = value_type::f64;
    return o;
  }
  bool numeric() const { return previous != nullptr; }
  const level& before() const { return previous->levels_[k]; }

  // Where level k goes after its matrix exists: on, or to the coarse solve.
  void start_level() {
    level& l = current();
    // A re-setup keeps the tentative prolongators: they depend on the
    // patterns and the near null space alone.
    if (numeric()) l.t = before().t;
    const bool last = numeric() ? k + 1 == previous->levels_.size()
                                : l.a->info().rows <= options().max_coarse ||
                                      static_cast<int>(k) + 1 >= options().max_levels;
    next = last ? phase::coarse : numeric() ? phase::spectral_radius : phase::strength;
  }

  memory_estimate sized() {
    memory_estimate e;
    const level& l = current();
    const matrix_info a = l.a->info();
    switch (next) {
      case phase::strength: e.workspace_bytes = strength_bytes(a, l.block_size); break;
      case phase::aggregate: e.workspace_bytes = aggregate_bytes(graph->info()); break;
      case phase::tentative:
        e.workspace_bytes = tentative_bytes(agg.aggregates->info(), agg.count, l.block_size, columns) +
                            (b ? 0 : static_cast<std::size_t>(a.rows) * columns * sizeof(double));
        break;
      case phase::spectral_radius:
        // The inverse diagonal (kept), its square root and Lanczos' four vectors.
        e.workspace_bytes = 6 * static_cast<std::size_t>(a.rows) * sizeof(double) + reduction_allowance;
        break;
      case phase::at:
        return numeric() ? on->estimate_multiply_numeric(*l.a, *l.t, *before().at, products())
                         : on->estimate_multiply(*l.a, *l.t, products());
      case phase::prolongator: e.workspace_bytes = prolongator_bytes(l.t->info(), l.at->info()); break;
      case phase::transpose: return on->estimate_transpose(*l.p);
      case phase::galerkin_first: return first_product();
      case phase::galerkin_second: {
        const bool right = l.order == galerkin_order::right_first;
        const stored_matrix& x = right ? *l.r : *l.first;
        const stored_matrix& y = right ? *l.first : *l.p;
        return numeric() ? on->estimate_multiply_numeric(x, y, *previous->levels_[k + 1].a, products())
                         : on->estimate_multiply(x, y, products());
      }
      case phase::coarse: e.workspace_bytes = factor_bytes(a); break;
      case phase::done: break;
    }
    e.method = name_of(next);
    return e;
  }

  // The estimate of the first product of A_{k+1} = R A P, its order chosen
  // here (kept from the previous hierarchy in a re-setup).
  memory_estimate first_product() {
    level& l = current();
    if (numeric()) {
      l.order = before().order;
      return l.order == galerkin_order::right_first
                 ? on->estimate_multiply_numeric(*l.a, *l.p, *before().first, products())
                 : on->estimate_multiply_numeric(*l.r, *l.a, *before().first, products());
    }
    const memory_estimate a_p = on->estimate_multiply(*l.a, *l.p, products());
    const memory_estimate r_a = on->estimate_multiply(*l.r, *l.a, products());
    l.order = plan_galerkin(l.r->info(), l.p->info(), a_p, r_a).order;
    return l.order == galerkin_order::right_first ? a_p : r_a;
  }

  void note_method(const std::string& method) {
    std::string& m = h->report_.methods;
    if (m.find(method) == std::string::npos) m += (m.empty() ? "" : ", ") + method;
  }

  void run(std::size_t limit, const cancel_token& cancel) {
    level& l = current();
    setup_times& t = h->report_.seconds;
    const auto started = std::chrono::steady_clock::now();
    switch (next) {
      case phase::strength:
        graph = ops->strength(*l.a, l.block_size, strength_theta(), limit);
        t.strength += seconds_since(started);
        next = phase::aggregate;
        return;
      case phase::aggregate: {
        agg = ops->aggregate(*graph, limit);
        graph.reset();
        t.aggregation += seconds_since(started);
        h->report_.mis_rounds += agg.rounds;
        // Nothing to coarsen (no node has a strong neighbour), or no fewer unknowns.
        next = agg.count == 0 || agg.count * columns >= l.a->info().rows ? phase::coarse : phase::tentative;
        if (next == phase::coarse) agg = {};
        return;
      }
      case phase::tentative: {
        if (!b) {
          const std::vector<double> ones(static_cast<std::size_t>(l.a->info().rows), 1.0);
          b = options().near_nullspace.empty()
                  ? ops->upload(ones.data(), l.a->info().rows)
                  : ops->upload(options().near_nullspace.data(),
                                static_cast<std::int64_t>(options().near_nullspace.size()));
        }
        tentative_prolongator tp = ops->tentative(*agg.aggregates, agg.count, *b, l.block_size, columns, limit);
        l.t = std::move(tp.t);
        b = std::move(tp.coarse);
        agg = {};
        t.tentative += seconds_since(started);
        next = phase::spectral_radius;
        return;
      }
      case phase::spectral_radius: {
        operations::diagonal_inverses d = ops->inverse_diagonals(*l.a);
        l.dinv = std::move(d.inverse);
        l.rho = spectral_radius(*ops, *l.a, *d.inverse_sqrt, options().spectral_steps);
        if (!(l.rho > 0)) throw_bad_input("rho(D^-1 A) of level " + std::to_string(k) + " is not positive");
        t.spectral_radius += seconds_since(started);
        next = phase::at;
        return;
      }
      case phase::at: {
        l.at = numeric() ? on->multiply_numeric(*l.a, *l.t, *before().at, products(), limit, cancel)
                         : on->multiply(*l.a, *l.t, products(), limit, cancel);
        t.smoothing += seconds_since(started);
        next = phase::prolongator;
        return;
      }
      case phase::prolongator:
        l.p = ops->smooth_prolongator(*l.t, *l.at, *l.dinv, options().prolongator_omega / l.rho, limit);
        t.smoothing += seconds_since(started);
        next = phase::transpose;
        return;
      case phase::transpose:
        l.r = on->transpose(*l.p, cancel);
        t.transpose += seconds_since(started);
        next = phase::galerkin_first;
        return;
      case phase::galerkin_first: {
        if (!estimated) estimate = sized();
        note_method(std::string(to_string(l.order)) + " " + estimate.method);
        const bool right = l.order == galerkin_order::right_first;
        const stored_matrix& x = right ? *l.a : *l.r;
        const stored_matrix& y = right ? *l.p : *l.a;
        l.first = numeric() ? on->multiply_numeric(x, y, *before().first, products(), limit, cancel)
                            : on->multiply(x, y, products(), limit, cancel);
        t.galerkin += seconds_since(started);
        next = phase::galerkin_second;
        return;
      }
      case phase::galerkin_second: {
        const bool right = l.order == galerkin_order::right_first;
        const stored_matrix& x = right ? *l.r : *l.first;
        const stored_matrix& y = right ? *l.first : *l.p;
        level coarser;
        coarser.a = numeric() ? on->multiply_numeric(x, y, *previous->levels_[k + 1].a, products(), limit, cancel)
                              : on->multiply(x, y, products(), limit, cancel);
        coarser.block_size = numeric() ? previous->levels_[k + 1].block_size : columns;
        t.galerkin += seconds_since(started);
        h->levels_.push_back(std::move(coarser));
        ++k;
        start_level();
        return;
      }
      case phase::coarse:
        b.reset();
        h->coarse_ = ops->factor(*l.a, limit);
        t.coarse_solver += seconds_since(started);
        next = phase::done;
        summarize();
        return;
      case phase::done: return;
    }
  }

  void summarize() {
    setup_report& r = h->report_;
    r.levels.clear();
    double nnz = 0, rows = 0;
    for (const level& l : h->levels_) {
      const matrix_info i = l.a->info();
      r.levels.push_back({i.rows, i.nnz, l.block_size});
      nnz += static_cast<double>(i.nnz);
      rows += static_cast<double>(i.rows);
    }
    const matrix_info fine = h->levels_[0].a->info();
    r.operator_complexity = fine.nnz > 0 ? nnz / static_cast<double>(fine.nnz) : 1;
    r.grid_complexity = fine.rows > 0 ? rows / static_cast<double>(fine.rows) : 1;
    r.numeric_only = numeric();
  }
};

builder::builder(std::shared_ptr<backend> on, std::shared_ptr<stored_matrix> a, setup_options options)
    : state_(std::make_unique<state>()) {
  check_options(options, a->info());
  state& s = *state_;
  s.on = std::move(on);
  s.ops = s.on->amg_operations();
  s.columns = options.near_nullspace.empty() ? 1 : options.near_nullspace_columns;
  int block_size = options.block_size;
  if (block_size == 0) block_size = s.ops->node_size(*a);
  if (a->info().rows % block_size != 0) {
    throw_bad_input("block_size " + std::to_string(block_size) + " does not divide the " +
                    std::to_string(a->info().rows) + " rows");
  }
  s.h = std::make_shared<levels_hierarchy>(s.on, std::move(options));
  level fine;
  fine.a = std::move(a);
  fine.block_size = block_size;
  s.h->levels_.push_back(std::move(fine));
  s.start_level();
}

builder::builder(std::shared_ptr<backend> on, const hierarchy& previous, std::shared_ptr<stored_matrix> a)
    : state_(std::make_unique<state>()) {
  const auto* p = dynamic_cast<const levels_hierarchy*>(&previous);
  if (p == nullptr) throw_bad_input("a re-setup needs a hierarchy this engine built");
  const matrix_info was = p->levels_[0].a->info(), now = a->info();
  if (was.rows != now.rows || was.cols != now.cols || was.nnz != now.nnz) {
    throw_bad_input("a re-setup needs new values of the same pattern; the matrix changed in shape or nnz");
  }
  check_options(p->options_, now);
  state& s = *state_;
  s.on = std::move(on);
  s.ops = s.on->amg_operations();
  s.previous = p;
  s.columns = p->options_.near_nullspace.empty() ? 1 : p->options_.near_nullspace_columns;
  s.h = std::make_shared<levels_hierarchy>(s.on, p->options_);
  level fine;
  fine.a = std::move(a);
  fine.block_size = p->levels_[0].block_size;
  s.h->levels_.push_back(std::move(fine));
  s.start_level();
}

builder::~builder() = default;

bool builder::done() const { return state_->next == phase::done; }

std::string builder::next_step() const {
  return std::string(name_of(state_->next)) + " " + std::to_string(state_->k);
}

memory_estimate builder::estimate() {
  state& s = *state_;
  s.estimate = s.sized();
  s.estimated = true;
  return s.estimate;
}

void builder::run(std::size_t memory_limit, const cancel_token& cancel) {
  state& s = *state_;
  if (done()) throw_bad_input("the setup is complete");
  cancel.throw_if_cancelled();
  s.run(memory_limit, cancel);
  s.estimated = false;
}

std::size_t builder::held_bytes() const {
  const state& s = *state_;
  std::size_t bytes = bytes_of(s.graph) + bytes_of(s.agg.aggregates) + bytes_of(s.b) +
                      (s.h->coarse_ ? s.h->coarse_->bytes() : 0);
  for (std::size_t k = 0; k < s.h->levels_.size(); ++k) {
    const level& l = s.h->levels_[k];
    if (k > 0) bytes += bytes_of(l.a);
    // A re-setup shares the tentative prolongators with the previous hierarchy.
    if (!s.numeric()) bytes += bytes_of(l.t);
    bytes += bytes_of(l.p) + bytes_of(l.r) + bytes_of(l.dinv) + bytes_of(l.at) + bytes_of(l.first);
  }
  return bytes;
}

std::shared_ptr<hierarchy> builder::finish() {
  if (!done()) throw_bad_input("the setup is not complete: next is " + next_step());
  return state_->h;
}

std::shared_ptr<hierarchy> builder::build(std::shared_ptr<backend> on, std::shared_ptr<stored_matrix> a,
                                          const setup_options& options, const cancel_token& cancel) {
  builder b(std::move(on), std::move(a), options);
  while (!b.done()) b.run(b.estimate().total(), cancel);
  return b.finish();
}

std::shared_ptr<hierarchy> builder::rebuild(std::shared_ptr<backend> on, const hierarchy& previous,
                                            std::shared_ptr<stored_matrix> a, const cancel_token& cancel) {
  builder b(std::move(on), previous, std::move(a));
  while (!b.done()) b.run(b.estimate().total(), cancel);
  return b.finish();
}

}  // namespace spgemm::amg
