// The solve phase (spgemm/amg.hpp): a V-cycle with Jacobi or Chebyshev
// smoothing and the coarsest level solved directly, as the preconditioner of
// CG (or alone, cycle after cycle). Every vector lives on the hierarchy's
// backend; only the dot products come back.
#include <chrono>
#include <cmath>
#include <string>

#include "amg/chebyshev.hpp"
#include "amg/levels.hpp"
#include "spgemm/errors.hpp"

namespace spgemm::amg {
namespace {

// The Chebyshev smoother's interval as a fraction of rho (pyamg's bounds).
constexpr double chebyshev_lower = 1.0 / 30.0, chebyshev_upper = 1.1;
// Vectors of a level in a cycle (x, b, r, h, z, t), and of CG at the finest (x, r, z, p, q).
constexpr std::size_t cycle_vectors = 6, cg_vectors = 5;
constexpr std::size_t reduction_allowance = 64 << 10;

class v_cycle {
 public:
  v_cycle(const levels_hierarchy& h, operations& ops, const solve_options& o) : h_(h), ops_(ops), o_(o) {
    if (o.presweeps < 0 || o.postsweeps < 0) throw_bad_input("sweeps must not be negative");
    if (o.smoothing == smoother::chebyshev && o.chebyshev_degree < 1) throw_bad_input("chebyshev_degree must be >= 1");
    for (const level& l : h.levels_) {
      const std::int64_t n = l.a->info().rows;
      level_vectors v;
      for (auto* p : {&v.x, &v.b, &v.r, &v.h, &v.z, &v.t}) *p = ops.zeros(n);
      vectors_.push_back(std::move(v));
    }
  }

  // x = M^-1 b on the finest level (x overwritten).
  void apply(const vector& b, vector& x) {
    ops_.copy(b, *vectors_[0].b);
    run(0);
    ops_.copy(*vectors_[0].x, x);
  }

 private:
  struct level_vectors {
    std::unique_ptr<vector> x, b, r, h, z, t;
  };

  void run(std::size_t k) {
    level_vectors& v = vectors_[k];
    const level& l = h_.levels_[k];
    if (k + 1 == h_.levels_.size()) {
      ops_.solve(*h_.coarse_, *v.b, *v.x);
      return;
    }
    ops_.axpby(0.0, *v.x, 0.0, *v.x);
    for (int s = 0; s < o_.presweeps; ++s) smooth(l, v, s == 0);
    residual(l, v, o_.presweeps == 0);
    ops_.spmv(*l.r, *v.r, 1.0, 0.0, *vectors_[k + 1].b);
    run(k + 1);
    ops_.spmv(*l.p, *vectors_[k + 1].x, 1.0, 1.0, *v.x);
    for (int s = 0; s < o_.postsweeps; ++s) smooth(l, v, false);
  }

  // r = b - A x (x zero: r = b).
  void residual(const level& l, level_vectors& v, bool zero_x) {
    ops_.copy(*v.b, *v.r);
    if (!zero_x) ops_.spmv(*l.a, *v.x, -1.0, 1.0, *v.r);
  }

  void smooth(const level& l, level_vectors& v, bool zero_x) {
    residual(l, v, zero_x);
    if (o_.smoothing == smoother::jacobi) {
      ops_.scaled_axpby(o_.jacobi_omega / l.rho, *l.dinv, *v.r, 1.0, *v.x);
      return;
    }
    // h = p(D^-1 A) D^-1 r by Horner's rule; x += h.
    const std::vector<double> c =
        chebyshev_coefficients(chebyshev_lower * l.rho, chebyshev_upper * l.rho, o_.chebyshev_degree);
    ops_.scaled_axpby(1.0, *l.dinv, *v.r, 0.0, *v.z);
    ops_.axpby(c[0], *v.z, 0.0, *v.h);
    for (std::size_t i = 1; i < c.size(); ++i) {
      ops_.spmv(*l.a, *v.h, 1.0, 0.0, *v.t);
      ops_.scaled_axpby(1.0, *l.dinv, *v.t, 0.0, *v.h);
      ops_.axpby(c[i], *v.z, 1.0, *v.h);
    }
    ops_.axpby(1.0, *v.h, 1.0, *v.x);
  }

  const levels_hierarchy& h_;
  operations& ops_;
  const solve_options& o_;
  std::vector<level_vectors> vectors_;
};

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

std::size_t levels_hierarchy::own_bytes() const {
  std::size_t bytes = coarse_ ? coarse_->bytes() : 0;
  for (const level& l : levels_) {
    for (const auto* m : {&l.t, &l.at, &l.first}) bytes += *m ? (*m)->info().bytes() : 0;
    bytes += l.dinv ? l.dinv->bytes() : 0;
  }
  return bytes;
}

std::size_t levels_hierarchy::solve_bytes() const {
  std::size_t bytes = reduction_allowance;
  for (const level& l : levels_) bytes += cycle_vectors * static_cast<std::size_t>(l.a->info().rows) * sizeof(double);
  return bytes + cg_vectors * static_cast<std::size_t>(levels_[0].a->info().rows) * sizeof(double);
}

solve_report levels_hierarchy::solve(const std::vector<double>& b_host, std::vector<double>& x_host,
                                     const solve_options& o, const cancel_token& cancel) {
  const auto started = std::chrono::steady_clock::now();
  const std::int64_t n = levels_[0].a->info().rows;
  if (static_cast<std::int64_t>(b_host.size()) != n) {
    throw_bad_input("b has " + std::to_string(b_host.size()) + " values; A has " + std::to_string(n) + " rows");
  }
  if (static_cast<std::int64_t>(x_host.size()) != n) x_host.assign(static_cast<std::size_t>(n), 0.0);
  if (o.tolerance < 0 || o.max_iterations < 0) throw_bad_input("tolerance and max_iterations must not be negative");
  std::unique_ptr<operations> ops = on_->amg_operations();
  v_cycle cycle(*this, *ops, o);
  const stored_matrix& a = *levels_[0].a;
  auto b = ops->upload(b_host.data(), n);
  auto x = ops->upload(x_host.data(), n);
  auto r = ops->zeros(n), z = ops->zeros(n), p = ops->zeros(n), q = ops->zeros(n);

  solve_report report;
  const double norm_b = std::sqrt(ops->dot(*b, *b));
  auto relative = [&](const vector& v) { return norm_b > 0 ? std::sqrt(ops->dot(v, v)) / norm_b : 0.0; };
  ops->copy(*b, *r);
  ops->spmv(a, *x, -1.0, 1.0, *r);
  report.residuals.push_back(relative(*r));
  double rz = 0;
  while (report.residuals.back() > o.tolerance && report.iterations < o.max_iterations) {
    cancel.throw_if_cancelled();
    cycle.apply(*r, *z);
    if (o.conjugate_gradient) {
      const double rz_next = ops->dot(*r, *z);
      ops->axpby(1.0, *z, report.iterations == 0 ? 0.0 : rz_next / rz, *p);
      rz = rz_next;
      ops->spmv(a, *p, 1.0, 0.0, *q);
      const double alpha = rz / ops->dot(*p, *q);
      ops->axpby(alpha, *p, 1.0, *x);
      ops->axpby(-alpha, *q, 1.0, *r);
    } else {
      ops->axpby(1.0, *z, 1.0, *x);
      ops->copy(*b, *r);
      ops->spmv(a, *x, -1.0, 1.0, *r);
    }
    ++report.iterations;
    report.residuals.push_back(relative(*r));
    if (!std::isfinite(report.residuals.back())) break;
  }
  report.converged = report.residuals.back() <= o.tolerance;
  ops->download(*x, x_host.data());
  report.seconds = seconds_since(started);
  return report;
}

void levels_hierarchy::precondition(const std::vector<double>& r_host, std::vector<double>& z_host,
                                    const solve_options& o) {
  const std::int64_t n = levels_[0].a->info().rows;
  if (static_cast<std::int64_t>(r_host.size()) != n) {
    throw_bad_input("r has " + std::to_string(r_host.size()) + " values; A has " + std::to_string(n) + " rows");
  }
  std::unique_ptr<operations> ops = on_->amg_operations();
  v_cycle cycle(*this, *ops, o);
  auto r = ops->upload(r_host.data(), n);
  auto z = ops->zeros(n);
  cycle.apply(*r, *z);
  z_host.resize(static_cast<std::size_t>(n));
  ops->download(*z, z_host.data());
}

smoother parse_smoother(std::string_view name) {
  if (name == "jacobi") return smoother::jacobi;
  if (name == "chebyshev" || name.empty()) return smoother::chebyshev;
  throw_bad_input("unknown smoother '" + std::string(name) + "'; known: jacobi, chebyshev");
}

std::string_view to_string(smoother s) { return s == smoother::jacobi ? "jacobi" : "chebyshev"; }

}  // namespace spgemm::amg
