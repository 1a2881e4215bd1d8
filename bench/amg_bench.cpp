// spgemm-amg-bench: smoothed-aggregation AMG with the engine (docs/amg.md) on
// the GPU (else the CPU) for generated or .mtx matrices: the setup by phase,
// the numeric-only re-setup with new values, the CG solve preconditioned by
// V-cycles, and the Galerkin pyramid of the hierarchy (R_k A_k P_k on every
// level) by our one-call Galerkin product against cuSPARSE's SpGEMM on the
// same P_k (its transpose by csr2csc, then A P and R (A P), the fastest ALG
// that runs). With --dump, each matrix (and its near null space) as raw
// arrays, for bench/amg_pyamg.py to time pyamg on the same matrices; with
// --dump-galerkin, the factors of every level's two Galerkin products (A_k
// and P_k, R_k and A_k P_k) as Matrix Market files, for spgemm-bench to time
// them by method.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "spgemm/amg.hpp"
#include "spgemm/backend.hpp"
#include "spgemm/errors.hpp"
#include "spgemm/galerkin.hpp"
#include "spgemm/generate.hpp"
#include "spgemm/io.hpp"
#include "spgemm/multiply.hpp"

#ifdef SPGEMM_BENCH_WITH_CUSPARSE
#include "cusparse_spgemm.hpp"
#endif

namespace {

namespace amg = spgemm::amg;
using csr = spgemm::csr_matrix<double>;
using clock_type = std::chrono::steady_clock;

struct options {
  std::vector<std::string> inputs;
  int repeats = 3;
  std::int64_t max_coarse = 1000;
  std::string smoother = "chebyshev";
  double tolerance = 1e-8;
  bool cusparse = true;
  std::string tsv, markdown, dump, dump_galerkin;
  bool galerkin_phases = false;
};

double ms_since(clock_type::time_point t) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t).count();
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// The median of `repeats` timed calls of f after one untimed.
double timed(int repeats, const std::function<void()>& f) {
  f();
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    const auto t = clock_type::now();
    f();
    ms.push_back(ms_since(t));
  }
  return median(ms);
}

// elasticity3d:N's rigid-body modes, node-major rows x 6 (tests/engine/amg_test.cpp's).
std::vector<double> rigid_body_modes(std::int64_t n) {
  std::vector<double> b(static_cast<std::size_t>(3 * n * n * n * 6), 0.0);
  for (std::int64_t node = 0; node < n * n * n; ++node) {
    const double x = static_cast<double>(node % n), y = static_cast<double>(node / n % n),
                 z = static_cast<double>(node / (n * n));
    double* r = &b[static_cast<std::size_t>(node * 18)];
    r[0] = r[6 + 1] = r[12 + 2] = 1;
    r[3] = -y, r[6 + 3] = x;
    r[6 + 4] = -z, r[12 + 4] = y;
    r[12 + 5] = -x, r[5] = z;
  }
  return b;
}

template <typename T>
void write_raw(const std::string& path, const std::vector<T>& v) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
  if (!f) throw std::runtime_error("cannot write " + path);
}

struct row {
  std::string problem, device, status = "ok";
  std::int64_t rows = 0, nnz = 0;
  amg::setup_report report;
  amg::setup_times resetup;  // the phases of the last re-setup
  double setup_ms = NAN, resetup_ms = NAN, solve_ms = NAN;
  int iterations = -1;
  double pyramid_ms = NAN, pyramid_numeric_ms = NAN, cusparse_pyramid_ms = NAN;
  std::string cusparse_alg = "NA";
};

std::string fmt(double v, int digits = 2) {
  if (std::isnan(v)) return "NA";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string rows_per_level(const amg::setup_report& r) {
  std::string s;
  for (const auto& l : r.levels) s += (s.empty() ? "" : ",") + std::to_string(l.rows);
  return s.empty() ? "NA" : s;
}

// --galerkin-phases: each level's Galerkin product R A P step by step as
// spgemm::galerkin takes them (the transpose, both orders' estimates, the
// first product, the second's estimate, the second product), then both
// products numeric only on their structures (as galerkin_numeric runs them,
// estimates included), medians of `repeats` in ms, one line a level.
std::string galerkin_phases(spgemm::backend& on, const amg::hierarchy& h, const std::string& problem, int repeats) {
  std::string out;
  for (std::size_t k = 0; k + 1 < h.levels(); ++k) {
    const spgemm::stored_matrix& a = *h.a(k);
    const spgemm::stored_matrix& p = *h.p(k);
    std::shared_ptr<spgemm::stored_matrix> r, first;
    spgemm::memory_estimate a_q, r_a, second;
    const double t = timed(repeats, [&] { r = on.transpose(p); });
    const double e_aq = timed(repeats, [&] { a_q = on.estimate_multiply(a, p, {}); });
    // Each call on a fresh transpose, as in a Galerkin product: nothing cached from the last.
    const double e_ra = timed(repeats, [&] {
      r = on.transpose(p);
      r_a = on.estimate_multiply(*r, a, {});
    }) - t;
    const bool right = spgemm::plan_galerkin(r->info(), p.info(), a_q, r_a).order == spgemm::galerkin_order::right_first;
    const double m1 = timed(repeats, [&] {
      first = right ? on.multiply(a, p, {}, a_q.total()) : on.multiply(*r, a, {}, r_a.total());
    });
    const double e2 = timed(repeats, [&] {
      first = right ? on.multiply(a, p, {}, a_q.total()) : on.multiply(*r, a, {}, r_a.total());
      second = on.estimate_multiply(right ? *r : *first, right ? *first : p, {});
    }) - m1;
    const spgemm::stored_matrix& x = right ? *r : *first;
    const spgemm::stored_matrix& y = right ? *first : p;
    std::shared_ptr<spgemm::stored_matrix> c;
    const double m2 = timed(repeats, [&] { c = on.multiply(x, y, {}, second.total()); });
    const spgemm::stored_matrix& u = right ? a : *r;
    const spgemm::stored_matrix& v = right ? p : a;
    spgemm::memory_estimate numeric_first, numeric_second;
    const double n1 = timed(repeats, [&] {
      numeric_first = on.estimate_multiply_numeric(u, v, *first, {});
      (void)on.multiply_numeric(u, v, *first, {}, numeric_first.total());
    });
    const double n2 = timed(repeats, [&] {
      numeric_second = on.estimate_multiply_numeric(x, y, *c, {});
      (void)on.multiply_numeric(x, y, *c, {}, numeric_second.total());
    });
    char line[512];
    std::snprintf(line, sizeof line,
                  "%s L%zu %s: transpose %.3f, estimate AQ %.3f, RA %.3f, first %.3f (%s), second's estimate "
                  "%.3f, second %.3f (%s); numeric first %.3f (%s), second %.3f (%s) ms\n",
                  problem.c_str(), k, right ? "R(AQ)" : "(RA)Q", t, e_aq, e_ra, m1,
                  (right ? a_q : r_a).method.c_str(), e2, m2, second.method.c_str(), n1,
                  numeric_first.method.c_str(), n2, numeric_second.method.c_str());
    out += line;
  }
  return out;
}

#ifdef SPGEMM_BENCH_WITH_CUSPARSE
// The pyramid by cuSPARSE: for every level, P^T by csr2csc, A P and R (A P),
// each the median of `repeats`; the fastest ALG whose every product ran.
void cusparse_pyramid(spgemm::backend& on, const amg::hierarchy& h, int repeats, row& out) {
  bench::cusparse_bench vendor(0);
  double best = NAN;
  for (int alg : {1, 2, 3}) {
    double total = 0;
    bool ok = true;
    for (std::size_t k = 0; ok && k + 1 < h.levels(); ++k) {
      const spgemm::any_csr a = on.fetch(*h.a(k)), p = on.fetch(*h.p(k)), r = on.fetch(*h.r(k));
      ok = vendor.set_operands(p, p, 0).empty();
      bench::cusparse_run t = ok ? vendor.transpose(1, repeats, false) : bench::cusparse_run{};
      ok = ok && t.status == "ok";
      const std::int64_t ap_bound = on.estimate_multiply(*h.a(k), *h.p(k), {}).nnz_bound;
      ok = ok && vendor.set_operands(a, p, ap_bound).empty();
      bench::cusparse_run ap = ok ? vendor.run(alg, 1, repeats, true) : bench::cusparse_run{};
      ok = ok && ap.status == "ok" && ap.result;
      if (ok) {
        const auto stored_ap = on.store(*ap.result);
        const std::int64_t rap_bound = on.estimate_multiply(*h.r(k), *stored_ap, {}).nnz_bound;
        ok = vendor.set_operands(r, *ap.result, rap_bound).empty();
        bench::cusparse_run rap = ok ? vendor.run(alg, 1, repeats, false) : bench::cusparse_run{};
        ok = ok && rap.status == "ok";
        if (ok) total += median(t.ms) + median(ap.ms) + median(rap.ms);
      }
      vendor.clear_operands();
    }
    if (ok && (std::isnan(best) || total < best)) {
      best = total;
      out.cusparse_alg = "alg" + std::to_string(alg);
    }
  }
  out.cusparse_pyramid_ms = best;
}
#endif

row run_problem(const std::shared_ptr<spgemm::backend>& on, const std::string& input, const options& o) {
  row out;
  out.problem = spgemm::matrix_name(input);
  out.device = on->description();
  const csr a = spgemm::load_matrix(input);
  out.rows = a.rows;
  out.nnz = a.nnz();
  amg::setup_options so;
  so.max_coarse = o.max_coarse;
  std::vector<double> modes;
  if (input.rfind("elasticity3d:", 0) == 0) {
    modes = rigid_body_modes(std::stoll(input.substr(13)));
    so.near_nullspace = modes;
    so.near_nullspace_columns = 6;
  }
  if (!o.dump.empty()) {
    const std::string base = o.dump + "/" + out.problem;
    write_raw(base + ".indptr", a.row_offsets);
    write_raw(base + ".indices", a.col_indices);
    write_raw(base + ".data", a.values);
    if (!modes.empty()) write_raw(base + ".modes", modes);
  }
  const auto sa = on->store(spgemm::any_csr(a));

  // Full setups: the report of the median one.
  std::shared_ptr<amg::hierarchy> h = amg::builder::build(on, sa, so);  // untimed
  std::vector<std::pair<double, std::shared_ptr<amg::hierarchy>>> setups;
  for (int r = 0; r < o.repeats; ++r) {
    const auto t = clock_type::now();
    auto built = amg::builder::build(on, sa, so);
    setups.emplace_back(ms_since(t), std::move(built));
  }
  std::sort(setups.begin(), setups.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  out.setup_ms = setups[setups.size() / 2].first;
  h = setups[setups.size() / 2].second;
  setups.clear();
  out.report = h->report();

  // Re-setups with new values of the same pattern (1.5 A: SPD still).
  std::vector<double> values(a.values);
  for (double& v : values) v *= 1.5;
  const auto sa2 = on->with_values(*sa, values.data());
  out.resetup_ms = timed(o.repeats, [&] { out.resetup = amg::builder::rebuild(on, *h, sa2)->report().seconds; });

  // The solve of A x = 1.
  amg::solve_options solve;
  solve.tolerance = o.tolerance;
  solve.smoothing = amg::parse_smoother(o.smoother);
  const std::vector<double> b(static_cast<std::size_t>(a.rows), 1.0);
  std::vector<double> x;
  amg::solve_report report;
  out.solve_ms = timed(o.repeats, [&] {
    x.clear();
    report = h->solve(b, x, solve);
  });
  out.iterations = report.converged ? report.iterations : -1;
  if (!report.converged) out.status = "not converged";

  // The Galerkin pyramid with our SpGEMM: one engine call per level, whole and numeric only.
  std::vector<spgemm::galerkin_result> last(h->levels());
  out.pyramid_ms = 0;
  out.pyramid_numeric_ms = 0;
  for (std::size_t k = 0; k + 1 < h->levels(); ++k) {
    out.pyramid_ms += timed(o.repeats, [&] {
      last[k] = spgemm::galerkin(*on, *h->p(k), *h->a(k), spgemm::galerkin_form::pt_a_p, {});
    });
    out.pyramid_numeric_ms += timed(o.repeats, [&] {
      spgemm::galerkin_numeric(*on, *h->p(k), *h->a(k), spgemm::galerkin_form::pt_a_p, last[k], {});
    });
  }
  last.clear();
  if (o.galerkin_phases) std::cout << galerkin_phases(*on, *h, out.problem, o.repeats) << std::flush;
  for (std::size_t k = 0; !o.dump_galerkin.empty() && k + 1 < h->levels(); ++k) {
    const auto ap = on->multiply(*h->a(k), *h->p(k), {}, on->estimate_multiply(*h->a(k), *h->p(k), {}).total());
    std::string name = out.problem;  // no ':' in the file name: spgemm-bench would read a generator spec
    std::replace(name.begin(), name.end(), ':', '_');
    const std::string base = o.dump_galerkin + "/" + name + "_L" + std::to_string(k);
    spgemm::write_matrix_market(base + "_A.mtx", on->fetch(*h->a(k)));
    spgemm::write_matrix_market(base + "_P.mtx", on->fetch(*h->p(k)));
    spgemm::write_matrix_market(base + "_R.mtx", on->fetch(*h->r(k)));
    spgemm::write_matrix_market(base + "_AP.mtx", on->fetch(*ap));
  }
#ifdef SPGEMM_BENCH_WITH_CUSPARSE
  if (o.cusparse && on->is_gpu()) cusparse_pyramid(*on, *h, o.repeats, out);
#endif
  return out;
}

// Writes the TSV and markdown files (after every problem: a run cut short
// keeps what it measured); returns the markdown table.
std::string write_tables(const std::vector<row>& rows, const options& o) {
  const char* header =
      "problem\tdevice\trows\tnnz\tlevels\trows_per_level\toperator_complexity\tgrid_complexity\tsetup_ms\t"
      "strength_ms\taggregation_ms\ttentative_ms\tspectral_radius_ms\tsmoothing_ms\ttranspose_ms\tgalerkin_ms\t"
      "coarse_solver_ms\tmis_rounds\tresetup_ms\tresetup_speedup\tsolve_ms\titerations\tpyramid_ms\t"
      "pyramid_numeric_ms\tcusparse_pyramid_ms\tcusparse_alg\tpyramid_speedup\tstatus\tresetup_spectral_radius_ms\t"
      "resetup_smoothing_ms\tresetup_transpose_ms\tresetup_galerkin_ms\tresetup_coarse_solver_ms\n";
  std::string tsv = header;
  for (const row& r : rows) {
    const amg::setup_times& t = r.report.seconds;
    tsv += r.problem + "\t" + r.device + "\t" + std::to_string(r.rows) + "\t" + std::to_string(r.nnz) + "\t" +
           std::to_string(r.report.levels.size()) + "\t" + rows_per_level(r.report) + "\t" +
           fmt(r.report.operator_complexity, 3) + "\t" + fmt(r.report.grid_complexity, 3) + "\t" + fmt(r.setup_ms) +
           "\t" + fmt(1e3 * t.strength) + "\t" + fmt(1e3 * t.aggregation) + "\t" + fmt(1e3 * t.tentative) + "\t" +
           fmt(1e3 * t.spectral_radius) + "\t" + fmt(1e3 * t.smoothing) + "\t" + fmt(1e3 * t.transpose) + "\t" +
           fmt(1e3 * t.galerkin) + "\t" + fmt(1e3 * t.coarse_solver) + "\t" + std::to_string(r.report.mis_rounds) +
           "\t" + fmt(r.resetup_ms) + "\t" + fmt(r.setup_ms / r.resetup_ms) + "\t" + fmt(r.solve_ms) + "\t" +
           std::to_string(r.iterations) + "\t" + fmt(r.pyramid_ms) + "\t" + fmt(r.pyramid_numeric_ms) + "\t" +
           fmt(r.cusparse_pyramid_ms) + "\t" + r.cusparse_alg + "\t" + fmt(r.cusparse_pyramid_ms / r.pyramid_ms) +
           "\t" + r.status + "\t" + fmt(1e3 * r.resetup.spectral_radius) + "\t" + fmt(1e3 * r.resetup.smoothing) +
           "\t" + fmt(1e3 * r.resetup.transpose) + "\t" + fmt(1e3 * r.resetup.galerkin) + "\t" +
           fmt(1e3 * r.resetup.coarse_solver) + "\n";
  }
  if (!o.tsv.empty()) {
    std::ofstream(o.tsv) << tsv;
  }
  std::string md =
      "| problem | rows | levels | OC | setup ms | re-setup ms (x) | solve ms | its | pyramid ms | numeric | "
      "cuSPARSE ms (x) |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const row& r : rows) {
    md += "| " + r.problem + " | " + std::to_string(r.rows) + " | " + std::to_string(r.report.levels.size()) + " | " +
          fmt(r.report.operator_complexity, 3) + " | " + fmt(r.setup_ms, 1) + " | " + fmt(r.resetup_ms, 1) + " (" +
          fmt(r.setup_ms / r.resetup_ms) + ") | " + fmt(r.solve_ms, 1) + " | " + std::to_string(r.iterations) +
          " | " + fmt(r.pyramid_ms) + " | " + fmt(r.pyramid_numeric_ms) + " | " + fmt(r.cusparse_pyramid_ms) +
          " (" + fmt(r.cusparse_pyramid_ms / r.pyramid_ms) + ") |\n";
  }
  if (!o.markdown.empty()) std::ofstream(o.markdown) << md;
  return md;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  CLI::App app{"Smoothed-aggregation AMG with the engine: setup by phase, numeric-only re-setup, PCG solve, and "
               "the Galerkin pyramid against cuSPARSE's"};
  app.add_option("inputs", o.inputs, "generator specs or .mtx files")->required();
  app.add_option("--repeats", o.repeats, "timed runs (median reported) after one untimed")->check(CLI::Range(1, 100));
  app.add_option("--max-coarse", o.max_coarse, "rows of the coarsest level at most");
  app.add_option("--smoother", o.smoother, "chebyshev or jacobi");
  app.add_option("--tolerance", o.tolerance, "of the solve, relative to ||b||");
  app.add_flag("!--no-cusparse", o.cusparse, "skip cuSPARSE's pyramid");
  app.add_option("--tsv", o.tsv, "write the table as TSV");
  app.add_option("--markdown", o.markdown, "write the table as markdown");
  app.add_option("--dump", o.dump, "write each matrix as raw arrays (NAME.indptr int64, .indices int32, .data "
                                   "f64, .modes f64 rows x 6 for elasticity3d) into this folder");
  app.add_flag("--galerkin-phases", o.galerkin_phases,
               "print each level's Galerkin product step by step (transpose, estimates, both products)");
  app.add_option("--dump-galerkin", o.dump_galerkin,
                 "write A_k, P_k, R_k and A_k P_k of every level as PROBLEM_Lk_A.mtx, _P.mtx, _R.mtx and _AP.mtx into this "
                 "folder (':' in PROBLEM as '_')");
  CLI11_PARSE(app, argc, argv);

  const std::shared_ptr<spgemm::backend> on =
      spgemm::cuda_device_count() > 0 ? spgemm::make_cuda_backend(0) : spgemm::make_cpu_backend(0);
  std::vector<row> rows;
  std::string md;
  int status = 0;
  for (const std::string& input : o.inputs) {
    try {
      rows.push_back(run_problem(on, input, o));
      std::fprintf(stderr, "%s: setup %.1f ms, re-setup %.1f ms, %d iterations\n", rows.back().problem.c_str(),
                   rows.back().setup_ms, rows.back().resetup_ms, rows.back().iterations);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "spgemm-amg-bench: %s: %s\n", input.c_str(), e.what());
      row failed;
      failed.problem = spgemm::matrix_name(input);
      failed.device = on->description();
      failed.status = std::string("failed: ") + e.what();
      rows.push_back(failed);
      status = 1;
    }
    md = write_tables(rows, o);
  }
  std::fputs(md.c_str(), stdout);
  return status;
}
