// spgemm-bench: times C = A*A (or A*B) with the engine's methods and, on a
// GPU, with cuSPARSE's SpGEMM algorithms; checks the results; prints a
// markdown table and writes a TSV. See bench/README.md.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "graph_inputs.hpp"
#include "report_text.hpp"
#include "warmup.hpp"
#include "spgemm/backend.hpp"
#include "spgemm/csr.hpp"
#include "spgemm/errors.hpp"
#include "spgemm/generate.hpp"
#include "spgemm/multiply.hpp"
#include "spgemm/reference.hpp"
#include "spgemm/semiring.hpp"

#ifdef SPGEMM_BENCH_WITH_CUSPARSE
#include "cusparse_spgemm.hpp"
#endif

namespace {

struct options {
  std::vector<std::string> inputs;
  std::string b_spec;
  std::string algorithms;
  std::string precision = "f64";
  int repeats = 9;
  int warmups = 2;
  // Seconds of calls one method may take on one matrix, warm-ups included
  // (0: no limit; the check's copy of C is not counted): past it the method
  // stops with the calls it has timed, at least one after its warm-ups (or,
  // where its first call alone took longer, that call as its time).
  double method_seconds = 0;
  std::string tsv_path;
  std::string markdown_path;
  std::string commit;
  bool check = true;
  // The engine's tuning: the defaults, the sweep overrides of the environment
  // (read once, at start-up) and --rmerge-subwarp / --rmerge-rows-per-thread.
  spgemm::tuning tuning;
  int threads = 0;
  bool transpose = false;  // --transpose: time A^T (ours and cusparseCsr2cscEx2) instead of products
  bool triangles = false;  // --triangles: time the masked products of triangle counting instead
};

// One entry of --algorithms.
struct method {
  std::string label;                            // as printed: "rmerge-w16r1", "cusparse-alg2"
  int cusparse_alg = 0;                         // 1..3 for cuSPARSE, 0 for the engine
  spgemm::algorithm algo = spgemm::algorithm::automatic;
};

struct row {
  std::string gpu;
  std::string matrix;
  std::int64_t n = 0;
  std::int64_t nnz_a = 0;
  std::int64_t nnz_c = -1;
  std::int64_t flops = 0;
  std::string algorithm;
  double ms = NAN;
  double floor_ms = NAN;  // the memory floor: bytes of A, B (where not A) and C at memory_floor_bandwidth
  std::optional<std::size_t> peak_bytes;
  std::string status = "ok";
  bool cusparse = false;
  bool rmerge = false;
  bool automatic = false;  // the planner's row ("auto")
};

using spgemm::bench::format;
using spgemm::bench::markdown_cell;
using spgemm::bench::median;
using spgemm::bench::one_line;

double gflops_of(const row& r) {
  return std::isfinite(r.ms) && r.ms > 0 ? static_cast<double>(r.flops) / (r.ms * 1e-3) / 1e9 : NAN;
}

std::string human_bytes(std::size_t b) {
  const double x = static_cast<double>(b);
  if (x >= 1024.0 * 1024 * 1024) return format("%.2f GiB", x / (1024.0 * 1024 * 1024));
  if (x >= 1024.0 * 1024) return format("%.1f MiB", x / (1024.0 * 1024));
  if (x >= 1024.0) return format("%.1f KiB", x / 1024.0);
  return format("%zu B", b);
}

std::string human_ms(double ms) {
  if (!std::isfinite(ms)) return "—";
  if (ms < 10) return format("%.3f", ms);
  if (ms < 1000) return format("%.2f", ms);
  return format("%.1f", ms);
}

std::string error_text(const std::exception& e) {
  if (const auto* se = dynamic_cast<const spgemm::error*>(&e))
    return std::string(spgemm::to_string(se->kind())) + ": " + se->what();
  return e.what();
}

// The outputs, written as rows come so that a long run shows its progress.
class report {
 public:
  report(const options& o) {
    if (!o.tsv_path.empty()) {
      tsv_.open(o.tsv_path);
      if (!tsv_) throw std::runtime_error("cannot write " + o.tsv_path);
      tsv_ << "gpu\tmatrix\tn\tnnz_a\tnnz_c\tflops\talgorithm\tms\tfloor_ms\tgflops\tpeak_bytes\tstatus\n";
      tsv_.flush();
    }
    if (!o.markdown_path.empty()) {
      md_.open(o.markdown_path);
      if (!md_) throw std::runtime_error("cannot write " + o.markdown_path);
    }
  }

  // Text for stdout and the markdown file.
  void text(const std::string& s) {
    std::cout << s << std::flush;
    if (md_.is_open()) md_ << s << std::flush;
  }

  void table_header() {
    text("| matrix | n | nnz(A) | nnz(C) | flops | algorithm | ms | floor ms | GFLOP/s | peak | status |\n"
         "| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | --- |\n");
  }

  void add(const row& r) {
    rows_.push_back(r);
    const double gf = gflops_of(r);
    const std::string nnz_c = r.nnz_c >= 0 ? std::to_string(r.nnz_c) : "NA";
    if (tsv_.is_open()) {
      tsv_ << one_line(r.gpu) << '\t' << one_line(r.matrix) << '\t' << r.n << '\t' << r.nnz_a << '\t' << nnz_c
           << '\t' << r.flops << '\t' << one_line(r.algorithm) << '\t'
           << (std::isfinite(r.ms) ? format("%.4f", r.ms) : "NA") << '\t'
           << (std::isfinite(r.floor_ms) ? format("%.4g", r.floor_ms) : "NA") << '\t'
           << (std::isfinite(gf) ? format("%.3f", gf) : "NA") << '\t'
           << (r.peak_bytes ? std::to_string(*r.peak_bytes) : "NA") << '\t' << one_line(r.status) << '\n';
      tsv_.flush();
    }
    text("| " + markdown_cell(r.matrix) + " | " + std::to_string(r.n) + " | " + std::to_string(r.nnz_a) + " | " +
         (r.nnz_c >= 0 ? std::to_string(r.nnz_c) : "—") + " | " +
         format("%.3g", static_cast<double>(r.flops)) + " | " + markdown_cell(r.algorithm) + " | " +
         human_ms(r.ms) + " | " + (std::isfinite(r.floor_ms) ? format("%.3g", r.floor_ms) : "—") + " | " +
         (std::isfinite(gf) ? format("%.2f", gf) : "—") + " | " +
         (r.peak_bytes ? human_bytes(*r.peak_bytes) : "—") + " | " + markdown_cell(one_line(r.status)) + " |\n");
  }

  const std::vector<row>& rows() const { return rows_; }

 private:
  std::ofstream tsv_;
  std::ofstream md_;
  std::vector<row> rows_;
};

std::vector<method> parse_methods(const std::string& list, const options& o) {
  std::vector<method> out;
  std::stringstream ss(list);
  std::string name;
  while (std::getline(ss, name, ',')) {
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    if (name.empty()) continue;
    method m;
    m.label = name;
    if (name == "cusparse-alg1" || name == "cusparse-alg2" || name == "cusparse-alg3") {
      m.cusparse_alg = name.back() - '0';
    } else {
      try {
        m.algo = spgemm::parse_algorithm(name);
      } catch (const spgemm::error&) {
        std::string known;
        for (std::string_view k : spgemm::algorithm_names()) known += std::string(k) + ", ";
        throw spgemm::error(spgemm::error_kind::bad_input, "unknown algorithm '" + name + "' (known: " + known +
                                                               "cusparse-alg1, cusparse-alg2, cusparse-alg3)");
      }
      const spgemm::rmerge_config& rmerge = o.tuning.rmerge;
      if (m.algo == spgemm::algorithm::rmerge && (rmerge.subwarp || rmerge.rows_per_thread)) {
        m.label = "rmerge-";
        if (rmerge.subwarp) m.label += "w" + std::to_string(rmerge.subwarp);
        if (rmerge.rows_per_thread) m.label += "r" + std::to_string(rmerge.rows_per_thread);
      }
    }
    out.push_back(m);
  }
  if (out.empty()) throw spgemm::error(spgemm::error_kind::bad_input, "--algorithms names no algorithm");
  return out;
}

struct environment {
  int gpus = 0;
  std::string gpu_name;  // "" without a GPU
  std::string device_line;
  std::shared_ptr<spgemm::backend> cpu;
  std::shared_ptr<spgemm::backend> gpu;
  std::string gpu_problem;  // why the engine's GPU backend could not be opened
#ifdef SPGEMM_BENCH_WITH_CUSPARSE
  std::unique_ptr<bench::cusparse_bench> vendor;
  std::string vendor_problem;
#endif
};

#ifdef SPGEMM_BENCH_WITH_CUSPARSE
std::string version_text(int v) {  // CUDA style: 13000 -> 13.0
  return format("%d.%d", v / 1000, (v % 1000) / 10);
}
#endif

void open_environment(environment& env, const options& o, const std::vector<method>& methods) {
  env.gpus = spgemm::cuda_device_count();
#ifdef SPGEMM_BENCH_WITH_CUSPARSE
  env.gpus = std::max(env.gpus, bench::cuda_devices());
#endif
  bool need_gpu_engine = false, need_vendor = false;
  for (const method& m : methods) {
    if (m.cusparse_alg) need_vendor = true;
    else if (m.algo != spgemm::algorithm::gustavson) need_gpu_engine = true;
  }
  (void)need_vendor;  // only a CUDA build has the vendor baseline
  if (env.gpus > 0) {
#ifdef SPGEMM_BENCH_WITH_CUSPARSE
    if (auto d = bench::describe_gpu(0)) {
      env.gpu_name = d->name;
      env.device_line = d->name + " (CUDA driver " + version_text(d->driver_version) + ", runtime " +
                        version_text(d->runtime_version);
    }
    if (need_vendor) {
      try {
        env.vendor = std::make_unique<bench::cusparse_bench>(0);
        const int v = env.vendor->describe().cusparse_version;
        if (v) env.device_line += format(", cuSPARSE %d.%d.%d", v / 1000, (v % 1000) / 100, v % 100);
      } catch (const std::exception& e) {
        env.vendor_problem = "failed: cuSPARSE setup: " + std::string(e.what());
      }
    }
    if (!env.device_line.empty()) env.device_line += ")";
#endif
    if (need_gpu_engine) {
      try {
        env.gpu = spgemm::make_cuda_backend(0);
        if (env.gpu_name.empty()) {
          const std::string d = env.gpu->description();
          env.gpu_name = d.substr(0, d.find(','));
          env.device_line = d;
        }
      } catch (const std::exception& e) {
        env.gpu_problem = "failed: GPU backend: " + error_text(e);
      }
    }
    if (env.gpu_name.empty()) env.gpu_name = "cuda:0";
    if (env.device_line.empty()) env.device_line = env.gpu_name;
  }
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const std::string cpu_line =
      "cpu, " + std::to_string(o.threads > 0 ? static_cast<unsigned>(o.threads) : hw) + " threads";
  if (env.device_line.empty()) {
#ifdef SPGEMM_BENCH_WITH_CUSPARSE
    env.device_line = cpu_line + " (no GPU visible)";
#else
    env.device_line = cpu_line + " (built without CUDA)";
#endif
  }
}

std::shared_ptr<spgemm::backend> cpu_backend(environment& env, const options& o) {
  if (!env.cpu) env.cpu = spgemm::make_cpu_backend(o.threads);
  return env.cpu;
}

// Why `c` is not `ref`, or "" where it agrees.
template <typename T>
std::string compare(const spgemm::csr_matrix<T>& c, const spgemm::csr_matrix<T>& ref, const spgemm::csr_matrix<T>& a,
                    const spgemm::csr_matrix<T>& b, double tolerance, const std::string& ref_name) {
  if (c.rows != ref.rows || c.cols != ref.cols)
    return format("shape %lldx%lld vs %lldx%lld of %s", static_cast<long long>(c.rows),
                  static_cast<long long>(c.cols), static_cast<long long>(ref.rows),
                  static_cast<long long>(ref.cols), ref_name.c_str());
  if (c.nnz() != ref.nnz())
    return format("nnz(C) %lld vs %lld of %s", static_cast<long long>(c.nnz()), static_cast<long long>(ref.nnz()),
                  ref_name.c_str());
  if (c.row_offsets != ref.row_offsets) {
    std::size_t r = 0;
    while (r + 1 < c.row_offsets.size() && c.row_offsets[r + 1] == ref.row_offsets[r + 1]) ++r;
    return format("row %zu has %lld entries vs %lld of %s", r,
                  static_cast<long long>(c.row_offsets[r + 1] - c.row_offsets[r]),
                  static_cast<long long>(ref.row_offsets[r + 1] - ref.row_offsets[r]), ref_name.c_str());
  }
  if (c.col_indices != ref.col_indices) {
    const auto k = static_cast<std::int64_t>(
        std::mismatch(c.col_indices.begin(), c.col_indices.end(), ref.col_indices.begin()).first -
        c.col_indices.begin());
    const auto r = std::upper_bound(c.row_offsets.begin(), c.row_offsets.end(), k) - c.row_offsets.begin() - 1;
    return format("columns of row %lld differ from %s", static_cast<long long>(r), ref_name.c_str());
  }
  const double err = spgemm::scaled_max_error(c, ref, a, b);
  if (err <= tolerance) return "";
  // Name the entry that differs most, relative to its size, to start the hunt.
  std::size_t worst = 0;
  double worst_rel = -1;
  for (std::size_t k = 0; k < c.values.size(); ++k) {
    const double x = static_cast<double>(c.values[k]), y = static_cast<double>(ref.values[k]);
    const double d = std::abs(x - y), m = std::max(std::abs(x), std::abs(y));
    const double rel = std::isnan(d) ? INFINITY : (d == 0 ? 0 : (m > 0 ? d / m : INFINITY));
    if (rel > worst_rel) {
      worst_rel = rel;
      worst = k;
    }
  }
  const auto wr = std::upper_bound(c.row_offsets.begin(), c.row_offsets.end(), static_cast<std::int64_t>(worst)) -
                  c.row_offsets.begin() - 1;
  return format("scaled error %.3g > %.0e vs %s; e.g. C(%lld,%d) = %.17g vs %.17g", err, tolerance,
                ref_name.c_str(), static_cast<long long>(wr), c.values.empty() ? -1 : c.col_indices[worst],
                c.values.empty() ? 0.0 : static_cast<double>(c.values[worst]),
                ref.values.empty() ? 0.0 : static_cast<double>(ref.values[worst]));
}

struct matrix_job {
  std::string name;
  spgemm::any_csr a;
  std::optional<spgemm::any_csr> b;  // unset: C = A * A
  spgemm::product_stats stats;
};

// A row's fields every mode fills alike: the input, A's shape, the method,
// the device.
row row_for(const environment& env, const matrix_job& job, std::int64_t rows, std::int64_t nnz_a,
            std::string algorithm) {
  row r;
  r.matrix = job.name;
  r.n = rows;
  r.nnz_a = nnz_a;
  r.algorithm = std::move(algorithm);
  r.gpu = env.gpus > 0 ? env.gpu_name : "cpu";
  return r;
}

// The H100's device-to-device copy rate, bytes read + written (3.0 TB/s,
// ../shared/GPU-HOST.md): no product moves A, B and C once faster.
constexpr double memory_floor_bytes_per_ms = 3.0e9;

// Bytes of the operands: A, and B where it is not A itself.
std::size_t operand_bytes(const matrix_job& job) {
  return spgemm::info_of(job.a).bytes() + (job.b ? spgemm::info_of(*job.b).bytes() : 0);
}

template <typename T>
void run_matrix(environment& env, const options& o, const std::vector<method>& methods, matrix_job& job,
                report& out, bool& mismatch) {
  using csr = spgemm::csr_matrix<T>;
  const spgemm::any_csr& any_a = job.a;
  const spgemm::any_csr& any_b = job.b ? *job.b : job.a;
  const csr& a = std::get<csr>(any_a);
  const csr& b = std::get<csr>(any_b);
  const double tolerance = std::is_same_v<T, float> ? 1e-4 : 1e-12;

  std::vector<row> rows;
  for (const method& m : methods) {
    row r = row_for(env, job, a.rows, a.nnz(), m.label);
    r.flops = 2 * job.stats.products;
    r.cusparse = m.cusparse_alg != 0;
    r.rmerge = m.algo == spgemm::algorithm::rmerge && !r.cusparse;
    r.automatic = m.algo == spgemm::algorithm::automatic && !r.cusparse;
    rows.push_back(std::move(r));
  }

  std::optional<spgemm::any_csr> reference;
  std::string reference_name;

  // cuSPARSE first: its first successful result is the reference for ours.
  bool any_vendor = false;
  for (const method& m : methods) any_vendor |= m.cusparse_alg != 0;
  if (any_vendor) {
#ifdef SPGEMM_BENCH_WITH_CUSPARSE
    std::string problem = env.vendor_problem;
    if (env.gpus == 0) problem = "skipped: no GPU";
    if (problem.empty()) problem = env.vendor->set_operands(any_a, any_b, job.stats.nnz_c_bound);
    for (std::size_t i = 0; i < methods.size(); ++i) {
      if (!methods[i].cusparse_alg) continue;
      row& r = rows[i];
      if (!problem.empty()) {
        r.status = problem;
        continue;
      }
      bench::cusparse_run res = env.vendor->run(methods[i].cusparse_alg, o.warmups, o.repeats, o.check && !reference);
      r.status = res.status;
      if (res.status == "ok") {
        r.ms = median(res.ms);
        r.peak_bytes = res.peak_bytes;
        r.nnz_c = res.nnz_c;
        if (res.result && !reference) {
          reference = std::move(res.result);
          reference_name = methods[i].label;
        }
      }
    }
    if (env.vendor) env.vendor->clear_operands();
#else
    for (std::size_t i = 0; i < methods.size(); ++i)
      if (methods[i].cusparse_alg) rows[i].status = "skipped: built without CUDA";
#endif
  }

  // The engine's methods, on A and B stored once per backend.
  std::map<spgemm::backend*, std::pair<std::shared_ptr<spgemm::stored_matrix>, std::shared_ptr<spgemm::stored_matrix>>>
      stored;
  for (std::size_t i = 0; i < methods.size(); ++i) {
    const method& m = methods[i];
    if (m.cusparse_alg) continue;
    row& r = rows[i];
    std::shared_ptr<spgemm::backend> be;
    try {
      if (m.algo == spgemm::algorithm::gustavson || (m.algo == spgemm::algorithm::automatic && env.gpus == 0)) {
        be = cpu_backend(env, o);
        r.gpu = "cpu";
      } else if (env.gpus == 0) {
        r.status = "skipped: no GPU";
        continue;
      } else if (!env.gpu) {
        r.status = env.gpu_problem;
        continue;
      } else {
        be = env.gpu;
      }
      auto& [sa, sb] = stored[be.get()];
      if (!sa) {
        sa = be->store(any_a);
        sb = job.b ? be->store(any_b) : sa;
      }
      spgemm::multiply_options mo;
      mo.algo = m.algo;
      mo.output_type = spgemm::value_type_of<T>();
      mo.tuning = o.tuning;

      std::vector<double> ms;
      std::optional<spgemm::any_csr> result;
      // Estimated once, as the service's memo does for a repeated product;
      // the peak is the product's own bytes (workspace + C).
      const spgemm::memory_estimate estimate = be->estimate_multiply(*sa, *sb, mo);
      const std::size_t limit = estimate.total();
      // The planner's choice, one line on stderr: which method auto's time is of, and why.
      if (m.algo == spgemm::algorithm::automatic) {
        std::fprintf(stderr, "plan: %s: %s\n", r.matrix.c_str(), estimate.method.c_str());
      }
      bench::warmup warm(o.warmups);
      // The calls' own time against --method-seconds: the check's copy of C
      // (seconds for a C of 10^9 entries) would otherwise leave only the
      // first, cold call timed (the pool grows there; cuSPARSE, run before,
      // trims it).
      double spent_ms = 0;
      for (int k = 0; static_cast<int>(ms.size()) < o.repeats; ++k) {
        const bool warming = warm.is_warmup(k);
        std::size_t peak = 0;
        const auto t0 = std::chrono::steady_clock::now();
        std::shared_ptr<spgemm::stored_matrix> c = be->multiply(*sa, *sb, mo, limit, {}, &peak);
        const auto t1 = std::chrono::steady_clock::now();
        if (k == 0) {
          r.peak_bytes = peak;
          r.nnz_c = c->info().nnz;
          if (o.check) result = be->fetch(*c);
        }
        c.reset();
        const double call_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
        if (!warming) ms.push_back(call_ms);
        spent_ms += call_ms;
        if (o.method_seconds > 0 && spent_ms > 1000 * o.method_seconds && (!ms.empty() || k == 0)) {
          if (ms.empty()) ms.push_back(call_ms);  // its first call alone took longer
          break;
        }
      }
      r.ms = median(ms);

      if (o.check && result) {
        if (!reference) {
          try {
            reference = spgemm::cpu_multiply(a, b, o.threads);
            reference_name = "the CPU reference";
          } catch (const std::exception& e) {
            r.status = "unchecked: CPU reference: " + error_text(e);
          }
        }
        if (reference) {
          const std::string why =
              compare(std::get<csr>(*result), std::get<csr>(*reference), a, b, tolerance, reference_name);
          if (!why.empty()) {
            r.status = "mismatch: " + why;
            mismatch = true;
          }
        }
      }
    } catch (const std::exception& e) {
      r.status = "failed: " + error_text(e);
      r.ms = NAN;
      r.peak_bytes.reset();
    }
  }
  stored.clear();

  // The memory floor, from the first nnz(C) known (the checked results agree on it).
  for (const row& r : rows) {
    if (r.nnz_c < 0) continue;
    const spgemm::matrix_info c{a.rows, b.cols, r.nnz_c, spgemm::value_type_of<T>()};
    const std::size_t bytes = operand_bytes(job) + c.bytes();
    for (row& x : rows) x.floor_ms = static_cast<double>(bytes) / memory_floor_bytes_per_ms;
    break;
  }
  for (const row& r : rows) out.add(r);
}

// The median milliseconds of o.repeats timed calls of `call` (each a stored
// result, freed before the next) after the warm-ups (bench/warmup.hpp);
// `first` sees the first call's result and the peak bytes it held.
template <typename Call, typename First>
double median_ms_of_calls(const options& o, Call&& call, First&& first) {
  std::vector<double> ms;
  bench::warmup warm(o.warmups);
  for (int k = 0; static_cast<int>(ms.size()) < o.repeats; ++k) {
    const bool warming = warm.is_warmup(k);
    std::size_t peak = 0;
    const auto t0 = std::chrono::steady_clock::now();
    std::shared_ptr<spgemm::stored_matrix> result = call(&peak);
    const auto t1 = std::chrono::steady_clock::now();
    if (k == 0) first(*result, peak);
    result.reset();
    if (!warming) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return median(ms);
}

// --transpose: A^T by the engine's GPU transpose (algorithm "transpose") and
// by cusparseCsr2cscEx2 ("cusparse-csr2csc"); both must equal the CPU
// transpose exactly (structure and values). nnz(C) is nnz(A^T), flops 0.
template <typename T>
void run_transpose(environment& env, const options& o, matrix_job& job, report& out, bool& mismatch) {
  using csr = spgemm::csr_matrix<T>;
  const csr& a = std::get<csr>(job.a);
  const csr ref = spgemm::cpu_transpose(a);
  auto make_row = [&](const char* name, bool vendor) {
    row r = row_for(env, job, a.rows, a.nnz(), name);
    r.cusparse = vendor;
    return r;
  };
  auto check = [&](const spgemm::any_csr& got, row& r) {
    const csr& t = std::get<csr>(got);
    if (t.rows != ref.rows || t.cols != ref.cols || t.row_offsets != ref.row_offsets ||
        t.col_indices != ref.col_indices || t.values != ref.values) {
      r.status = "mismatch: differs from the CPU transpose";
      mismatch = true;
    }
  };

  row ours = make_row("transpose", false);
  if (env.gpus == 0) {
    ours.status = "skipped: no GPU";
  } else if (!env.gpu) {
    ours.status = env.gpu_problem;
  } else {
    try {
      auto sa = env.gpu->store(job.a);
      ours.ms = median_ms_of_calls(
          o, [&](std::size_t* peak) { return env.gpu->transpose(*sa, {}, peak); },
          [&](const spgemm::stored_matrix& t, std::size_t peak) {
            ours.peak_bytes = peak;
            ours.nnz_c = t.info().nnz;
            if (o.check) check(env.gpu->fetch(t), ours);
          });
    } catch (const std::exception& e) {
      ours.status = "failed: " + error_text(e);
    }
  }

  row vendor = make_row("cusparse-csr2csc", true);
#ifdef SPGEMM_BENCH_WITH_CUSPARSE
  if (env.gpus == 0) {
    vendor.status = "skipped: no GPU";
  } else if (!env.vendor) {
    vendor.status = env.vendor_problem.empty() ? "skipped: no cuSPARSE" : env.vendor_problem;
  } else {
    const std::string problem = env.vendor->set_operands(job.a, job.a, 0);
    if (!problem.empty()) {
      vendor.status = problem;
    } else {
      bench::cusparse_run res = env.vendor->transpose(o.warmups, o.repeats, o.check);
      vendor.status = res.status;
      if (res.status == "ok") {
        vendor.ms = median(res.ms);
        vendor.peak_bytes = res.peak_bytes;
        vendor.nnz_c = res.nnz_c;
        if (res.result) check(*res.result, vendor);
      }
    }
    env.vendor->clear_operands();
  }
#else
  vendor.status = "skipped: built without CUDA";
#endif
  out.add(ours);
  out.add(vendor);
}

// One row of --triangles: the masked product C<L> = L B over plus_pair (B is
// L or L^T), its triangles (the sum of C) checked against the CPU's masked
// product and against `first_count`, the first form's (set where unset).
template <typename T>
row triangle_row(environment& env, const options& o, const matrix_job& job, const char* name,
                 const spgemm::csr_matrix<T>& l, const spgemm::csr_matrix<T>& b, std::optional<double>& first_count,
                 bool& mismatch) {
  using csr = spgemm::csr_matrix<T>;
  row r = row_for(env, job, l.rows, l.nnz(), name);
  const std::shared_ptr<spgemm::backend> backend = env.gpus > 0 ? env.gpu : cpu_backend(env, o);
  if (!backend) {
    r.status = env.gpu_problem;
    return r;
  }
  spgemm::multiply_options options;
  options.semiring = spgemm::parse_semiring("plus_pair");
  options.tuning = o.tuning;
  try {
    const auto sl = backend->store(spgemm::any_csr(l));
    const auto sb = backend->store(spgemm::any_csr(b));
    const spgemm::memory_estimate e = backend->estimate_masked_multiply(*sl, *sb, *sl, {}, options);
    r.ms = median_ms_of_calls(
        o, [&](std::size_t* peak) { return backend->masked_multiply(*sl, *sb, *sl, {}, options, e.total(), {}, peak); },
        [&](const spgemm::stored_matrix& c, std::size_t peak) {
          r.peak_bytes = peak;
          r.nnz_c = c.info().nnz;
          const csr got = std::get<csr>(backend->fetch(c));
          double count = 0;
          for (const T v : got.values) count += static_cast<double>(v);
          if (o.check) {
            const csr ref = spgemm::cpu_masked_multiply(l, b, l, {}, options.semiring, o.threads);
            if (got.row_offsets != ref.row_offsets || got.col_indices != ref.col_indices || got.values != ref.values) {
              r.status = "mismatch: differs from the CPU masked product";
              mismatch = true;
            }
          }
          if (first_count && *first_count != count) {
            r.status = format("mismatch: %.0f triangles, %.0f by tc-LL", count, *first_count);
            mismatch = true;
          }
          if (!first_count) first_count = count;
        });
    if (r.status == "ok") {
      r.status = format("ok: %.0f triangles, %.3g edges/s, %s", *first_count,
                        static_cast<double>(l.nnz()) / (r.ms * 1e-3), e.method.c_str());
    }
  } catch (const std::exception& ex) {
    r.status = "failed: " + error_text(ex);
  }
  return r;
}

// --triangles: the masked products that count the triangles of the
// undirected graph of A over plus_pair, L its strictly lower triangle:
// "tc-LL" C<L> = L L (each triangle k < j < i once, at (i, j), from k in
// (j, i)) and "tc-LLt" C<L> = L L^T (from k < j), by the planner, in A's
// numbering and (-sorted) by decreasing degree; nnz(A) is nnz(L) (the
// edges), flops 0, the status gives the triangles and edges per second.
template <typename T>
void run_triangles(environment& env, const options& o, matrix_job& job, report& out, bool& mismatch) {
  using csr = spgemm::csr_matrix<T>;
  const csr g = bench::undirected_graph(std::get<csr>(job.a));
  std::optional<double> first_count;
  for (const bool sorted : {false, true}) {
    const csr l = bench::lower_triangle(g, sorted ? bench::by_decreasing_degree(g) : std::vector<spgemm::index_t>{});
    const csr u = spgemm::cpu_transpose(l);
    out.add(triangle_row(env, o, job, sorted ? "tc-LL-sorted" : "tc-LL", l, l, first_count, mismatch));
    out.add(triangle_row(env, o, job, sorted ? "tc-LLt-sorted" : "tc-LLt", l, u, first_count, mismatch));
  }
}

// Per matrix (in the order of the rows), the ratio of theirs(rows) ms to
// ours(rows) ms over its rows that succeeded, and their geometric mean, after
// `label`. `note` names what a matrix's ratio was against.
std::string ratios_line(const std::vector<row>& rows, const std::string& label,
                        const std::function<const row*(const std::vector<const row*>&)>& ours,
                        const std::function<const row*(const std::vector<const row*>&)>& theirs,
                        const std::function<std::string(const row&)>& note) {
  std::vector<std::string> names;
  for (const row& r : rows)
    if (std::find(names.begin(), names.end(), r.matrix) == names.end()) names.push_back(r.matrix);
  std::string parts;
  double log_sum = 0;
  int count = 0;
  for (const std::string& name : names) {
    std::vector<const row*> done;
    for (const row& r : rows) {
      if (r.matrix == name && r.status == "ok" && std::isfinite(r.ms) && r.ms > 0) done.push_back(&r);
    }
    const row* mine = ours(done);
    const row* other = theirs(done);
    if (!mine || !other) continue;
    const double ratio = other->ms / mine->ms;
    parts += (parts.empty() ? "" : ", ") + name + " " + format("%.2f", ratio) + note(*other);
    log_sum += std::log(ratio);
    ++count;
  }
  const std::string line = "\n" + label + ": ";
  if (count == 0) return line + "no matrix where both succeeded\n";
  return line + parts + format("; geometric mean %.2f over %d matrices\n", std::exp(log_sum / count), count);
}

// The first row that `pick` takes.
const row* first_of(const std::vector<const row*>& rows, const std::function<bool(const row&)>& pick) {
  for (const row* r : rows)
    if (pick(*r)) return r;
  return nullptr;
}

// transpose vs cusparse-csr2csc per matrix and their geometric mean.
std::string transpose_ratio_line(const std::vector<row>& rows) {
  return ratios_line(
      rows, "transpose vs cusparse-csr2csc (cuSPARSE ms / ours ms, >1: ours faster)",
      [](const auto& done) { return first_of(done, [](const row& r) { return r.algorithm == "transpose"; }); },
      [](const auto& done) { return first_of(done, [](const row& r) { return r.algorithm == "cusparse-csr2csc"; }); },
      [](const row&) { return std::string(); });
}

// Ours = the planner's rows ("auto") where the run has them, else RMerge's,
// against the fastest cuSPARSE algorithm per matrix.
std::string ratio_line(const std::vector<row>& rows) {
  bool have_auto = false;
  for (const row& r : rows) have_auto |= r.automatic;
  const std::string our_name = have_auto ? "auto" : "rmerge";
  return ratios_line(
      rows,
      our_name + " vs the fastest cuSPARSE ALG (cuSPARSE ms / " + our_name + " ms, >1: " + our_name + " faster)",
      [have_auto](const auto& done) {
        return first_of(done, [have_auto](const row& r) { return have_auto ? r.automatic : r.rmerge; });
      },
      [](const auto& done) {
        const row* best = nullptr;
        for (const row* r : done)
          if (r->cusparse && (!best || r->ms < best->ms)) best = r;
        return best;
      },
      [](const row& best) { return " (" + best.algorithm.substr(std::string("cusparse-").size()) + ")"; });
}

int run(const options& o) {
  environment env;
  std::vector<method> methods;
  {
    std::string list = o.algorithms;
    if (list.empty()) {
      int gpus = spgemm::cuda_device_count();
#ifdef SPGEMM_BENCH_WITH_CUSPARSE
      gpus = std::max(gpus, bench::cuda_devices());
      list = gpus > 0 ? "auto,hash,rmerge,esc,block,dense,bhsparse,segmerge,cusparse-alg1,cusparse-alg2,cusparse-alg3"
                      : "gustavson";
#else
      list = gpus > 0 ? "rmerge" : "gustavson";
#endif
    }
    methods = parse_methods(list, o);
  }
  open_environment(env, o, methods);

  report out(o);
  out.text("- device: " + env.device_line + "\n");
  if (!o.commit.empty()) out.text("- commit: " + o.commit + "\n");
  out.text("- " + o.precision + " values (where an input says no /f32 or /f64), median of " +
           std::to_string(o.repeats) + " timed calls after " +
           std::to_string(o.warmups) + " warm-ups" + (o.check ? ", results checked" : ", results not checked") +
           "\n\n");
  out.table_header();

  bool mismatch = false, bad_input = false;
  const spgemm::value_type default_precision =
      o.precision == "f32" ? spgemm::value_type::f32 : spgemm::value_type::f64;
  for (const std::string& input : o.inputs) {
    matrix_job job;
    spgemm::value_type precision = default_precision;
    spgemm::product_operands ops;
    try {
      const spgemm::product_input in = spgemm::parse_product_input(input, o.b_spec);
      job.name = in.name;
      precision = in.precision.value_or(default_precision);
      ops = spgemm::load_operands(in);
    } catch (const spgemm::error& e) {
      // The message names the file or spec; the `spgemm` CLI reports it in the same words.
      std::cerr << "spgemm-bench: " << e.what() << "\n";
      bad_input = true;
      continue;
    }
    try {
      // A transpose takes any shape; a product (and triangle counting, of square graphs) conformable operands.
      if (!o.transpose) spgemm::require_conformable(spgemm::info_of(ops.a), spgemm::info_of(ops.b ? *ops.b : ops.a));
      if (!o.transpose && !o.triangles) job.stats = spgemm::compute_product_stats(ops.a, ops.b ? *ops.b : ops.a);
      job.a = spgemm::convert_values(spgemm::any_csr(std::move(ops.a)), precision);
      if (ops.b) job.b = spgemm::convert_values(spgemm::any_csr(std::move(*ops.b)), precision);
    } catch (const std::exception& e) {
      std::cerr << "spgemm-bench: " << input << ": " << error_text(e) << "\n";
      bad_input = true;
      continue;
    }
    if (o.triangles) {
      if (precision == spgemm::value_type::f32)
        run_triangles<float>(env, o, job, out, mismatch);
      else
        run_triangles<double>(env, o, job, out, mismatch);
      continue;
    }
    if (o.transpose) {
      if (precision == spgemm::value_type::f32)
        run_transpose<float>(env, o, job, out, mismatch);
      else
        run_transpose<double>(env, o, job, out, mismatch);
      continue;
    }
    if (precision == spgemm::value_type::f32)
      run_matrix<float>(env, o, methods, job, out, mismatch);
    else
      run_matrix<double>(env, o, methods, job, out, mismatch);
  }

  bool vendor = false, ours = false;
  for (const method& m : methods) {
    vendor |= m.cusparse_alg != 0;
    ours |= (m.algo == spgemm::algorithm::rmerge || m.algo == spgemm::algorithm::automatic) && !m.cusparse_alg;
  }
  if (o.transpose) {
    out.text(transpose_ratio_line(out.rows()));
  } else if (vendor && ours) {
    out.text(ratio_line(out.rows()));
  }
  if (mismatch) std::cerr << "spgemm-bench: some results do not match the reference (see status)\n";
  return mismatch ? 1 : bad_input ? 2 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  try {
    o.tuning = spgemm::tuning_from_environment();
  } catch (const std::exception& e) {
    std::cerr << "spgemm-bench: " << error_text(e) << "\n";
    return 2;
  }
  CLI::App app{"spgemm-bench: times C = A*A (or A*B) for Matrix Market files and generator specs"};
  app.add_option("matrices", o.inputs,
                 "Matrix Market files (.mtx, .mtx.gz) or generator specs (poisson3d7:100, rmat:16:16, ...); "
                 "A,B multiplies A by B; suffixes /aat or /ata multiply A by its transpose, /f32 or /f64 set the "
                 "value type")
      ->required();
  app.add_option("--b", o.b_spec, "right factor B for every matrix (default: A itself)");
  app.add_option("--algorithms", o.algorithms,
                 "comma list of auto, hash, rmerge, esc, block, dense, bhsparse, segmerge, gustavson, cusparse-alg1, "
                 "cusparse-alg2, cusparse-alg3 (default: every GPU method, auto and the three cuSPARSE ALGs on a GPU, "
                 "gustavson without one)");
  app.add_option("--precision", o.precision, "value type: f64 or f32")->check(CLI::IsMember({"f64", "f32"}));
  app.add_option("--repeats", o.repeats, "timed calls per algorithm (the median is reported)")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--warmups", o.warmups, "untimed calls before them (and, where > 0, for at least 25 ms)")->check(CLI::Range(0, 1000));
  app.add_option("--method-seconds", o.method_seconds,
                 "seconds of calls one method may take on one matrix, warm-ups included, the check's copy of C not "
                 "(0: no limit); past it the median is of the calls timed so far (at least one after the warm-ups), "
                 "or the first call where it alone took longer")
      ->check(CLI::Range(0.0, 1e9));
  app.add_option("--tsv", o.tsv_path, "write the results as TSV here");
  app.add_option("--markdown", o.markdown_path, "write the markdown table here too");
  app.add_option("--commit", o.commit, "commit string noted at the top of the markdown");
  app.add_flag("--check,!--no-check", o.check, "compare each result with cuSPARSE's or the CPU reference (default on)");
  app.add_option("--rmerge-subwarp", o.tuning.rmerge.subwarp, "RMerge sub-warp size (0: the planner chooses)")
      ->check(CLI::IsMember({0, 2, 4, 8, 16, 32}));
  app.add_option("--rmerge-rows-per-thread", o.tuning.rmerge.rows_per_thread, "RMerge rows of B per thread (0: the planner chooses)")
      ->check(CLI::IsMember({0, 1, 2, 4}));
  app.add_flag("--transpose", o.transpose,
               "time A^T instead of products: rows 'transpose' (the engine's GPU transpose) and "
               "'cusparse-csr2csc' (cusparseCsr2cscEx2), both checked against the CPU transpose");
  app.add_flag("--triangles", o.triangles,
               "time the masked products of triangle counting instead, over plus_pair on the strictly lower "
               "triangle L of each input's undirected graph: rows 'tc-LL' (C<L> = L L) and 'tc-LLt' "
               "(C<L> = L L^T), checked against the CPU's and each other's triangles");
  app.add_option("--threads", o.threads, "threads of the CPU backend and reference (0: all)")
      ->check(CLI::Range(0, 4096));
  CLI11_PARSE(app, argc, argv);

  try {
    return run(o);
  } catch (const std::exception& e) {
    std::cerr << "spgemm-bench: " << error_text(e) << "\n";
    return 2;
  }
}
