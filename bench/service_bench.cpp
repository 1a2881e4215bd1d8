// spgemm-service-bench: what the service adds to the engine. For each matrix,
// the round trip of a multiply on cached handles against the engine's
// in-process time for the same product; upload and download throughput on
// loopback; jobs per second for many small products from concurrent clients.
// Writes a TSV and a markdown table. See bench/README.md.
#include <CLI/CLI.hpp>

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "report_text.hpp"
#include "spawned_server.hpp"
#include "spgemm/backend.hpp"
#include "spgemm/client/client.hpp"
#include "spgemm/csr.hpp"
#include "spgemm/errors.hpp"
#include "spgemm/generate.hpp"
#include "spgemm/multiply.hpp"
#include "spgemm/reference.hpp"

namespace {

using clock_type = std::chrono::steady_clock;
namespace sc = spgemm::client;

struct options {
  std::vector<std::string> inputs;
  std::string server;
  std::string spawn;
  std::string backend = "auto";
  std::vector<std::string> server_args;
  std::string server_log;
  int repeats = 9;
  int warmups = 2;
  std::string transfer_matrix = "poisson3d7:120";
  int transfer_repeats = 3;
  std::int64_t chunk_bytes = 0;
  std::string small_matrix = "poisson2d5:64";
  int clients = 8;
  double jobs_seconds = 3;
  double overhead_target_ms = 0.5;
  double transfer_target_gbps = 1.5;
  double jobs_target = 500;
  std::string tsv_path;
  std::string markdown_path;
  std::string commit;
  bool check = true;
};

using spgemm::bench::format;
using spgemm::bench::markdown_cell;
using spgemm::bench::median;
using spgemm::bench::one_line;

// Nearest-rank percentile of a sorted vector, p in (0, 100].
double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return NAN;
  auto k = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  k = std::clamp<std::size_t>(k, 1, sorted.size());
  return sorted[k - 1];
}

double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

std::string error_text(const std::exception& e) {
  if (const auto* se = dynamic_cast<const spgemm::error*>(&e))
    return std::string(spgemm::to_string(se->kind())) + ": " + se->what();
  return e.what();
}

std::string value_text(double v, const std::string& unit) {
  if (!std::isfinite(v)) return "NA";
  if (unit == "ms") return std::abs(v) < 10 ? format("%.4f", v) : format("%.3f", v);
  if (unit == "GB/s") return format("%.3f", v);
  if (unit == "jobs/s") return format("%.1f", v);
  return format("%.6g", v);
}

// CSR bytes as they travel: 64-bit row offsets, 32-bit columns, the values.
double csr_bytes(std::int64_t rows, std::int64_t nnz, std::size_t value_size) {
  return static_cast<double>(rows + 1) * 8.0 + static_cast<double>(nnz) * (4.0 + static_cast<double>(value_size));
}

sc::matrix_ref ref_of(const spgemm::csr_matrix<double>& m) {
  return sc::matrix_ref::of(m.rows, m.cols, m.row_offsets.data(), m.col_indices.data(), m.values.data());
}

// ---- the outputs -----------------------------------------------------------

struct result_row {
  std::string matrix;
  std::string measure;
  double value = NAN;
  std::string unit;
  std::string target;  // "<= 1.234", ">= 1.5", or "" for figures without one
  std::string status;  // ok, pass, miss, failed: ...
};

class report {
 public:
  explicit report(const options& o) {
    if (!o.tsv_path.empty()) {
      tsv_.open(o.tsv_path);
      if (!tsv_) throw std::runtime_error("cannot write " + o.tsv_path);
      tsv_ << "gpu\tmatrix\tmeasure\tvalue\tunit\ttarget\tstatus\n";
      tsv_.flush();
    }
    if (!o.markdown_path.empty()) {
      md_.open(o.markdown_path);
      if (!md_) throw std::runtime_error("cannot write " + o.markdown_path);
    }
  }

  void set_gpu(std::string gpu) { gpu_ = std::move(gpu); }

  void text(const std::string& s) {
    std::cout << s << std::flush;
    if (md_.is_open()) md_ << s << std::flush;
  }

  void table_header() {
    text("| matrix | measure | value | unit | target | status |\n"
         "| --- | --- | ---: | --- | --- | --- |\n");
  }

  void add(result_row r) {
    if (r.status.empty()) r.status = "ok";
    if (tsv_.is_open()) {
      tsv_ << one_line(gpu_) << '\t' << one_line(r.matrix) << '\t' << r.measure << '\t' << value_text(r.value, r.unit)
           << '\t' << r.unit << '\t' << (r.target.empty() ? "NA" : r.target) << '\t' << one_line(r.status) << '\n';
      tsv_.flush();
    }
    text("| " + markdown_cell(r.matrix) + " | " + r.measure + " | " +
         (std::isfinite(r.value) ? value_text(r.value, r.unit) : "—") + " | " + r.unit + " | " +
         (r.target.empty() ? "" : markdown_cell(r.target)) + " | " + markdown_cell(one_line(r.status)) + " |\n");
    if (r.status == "pass") ++passed_;
    else if (r.status == "miss") ++missed_;
    else if (r.status != "ok") ++failed_;
  }

  // A row measured against an upper (`at_most`) or lower bound.
  void add_target(const std::string& matrix, const std::string& measure, double value, const std::string& unit,
                  double bound, bool at_most) {
    result_row r{matrix, measure, value, unit, (at_most ? "<= " : ">= ") + format("%g", bound), ""};
    if (!std::isfinite(value)) r.status = "failed: no value";
    else r.status = (at_most ? value <= bound : value >= bound) ? "pass" : "miss";
    add(std::move(r));
  }

  void failure(const std::string& matrix, const std::string& measure, const std::string& why) {
    add({matrix, measure, NAN, "", "", "failed: " + why});
  }

  int passed() const { return passed_; }
  int missed() const { return missed_; }
  int failed() const { return failed_; }

 private:
  std::ofstream tsv_;
  std::ofstream md_;
  std::string gpu_ = "cpu";
  int passed_ = 0, missed_ = 0, failed_ = 0;
};

// ---- (a, b) engine time and round trips per matrix -------------------------

// Why the streamed result differs from the engine's, or "" where it agrees.
std::string compare(const sc::csr_matrix& got, const spgemm::csr_matrix<double>& ref,
                    const spgemm::csr_matrix<double>& a) {
  if (got.rows != ref.rows || got.cols != ref.cols) return "shape differs from the engine's";
  if (got.nnz() != ref.nnz())
    return format("nnz(C) %lld vs %lld in process", static_cast<long long>(got.nnz()),
                  static_cast<long long>(ref.nnz()));
  spgemm::csr_matrix<double> c;
  c.rows = got.rows;
  c.cols = got.cols;
  c.row_offsets = got.row_offsets;
  c.col_indices = got.col_indices;
  c.values = got.values;
  const double err = spgemm::scaled_max_error(c, ref, a, a);
  if (!(err <= 1e-12)) return format("scaled error %.3g vs the engine's result", err);
  return "";
}

void run_matrix(const options& o, sc::Client& client, spgemm::backend& engine, const std::string& spec, report& out,
                bool& mismatch) {
  const std::string name = spgemm::matrix_name(spec);
  spgemm::csr_matrix<double> a;
  try {
    a = spgemm::load_matrix(spec);
  } catch (const std::exception& e) {
    out.failure(name, "load", error_text(e));
    return;
  }
  if (a.rows != a.cols) {
    out.failure(name, "load", format("not square (%lld x %lld): A*A is undefined", static_cast<long long>(a.rows),
                                     static_cast<long long>(a.cols)));
    return;
  }
  const spgemm::product_stats stats = spgemm::compute_product_stats(a, a);

  // (a) the engine in process: A stored once, the whole multiply() timed.
  double engine_ms = NAN;
  std::int64_t nnz_c = -1;
  spgemm::csr_matrix<double> reference;
  try {
    const spgemm::any_csr any_a = a;
    std::shared_ptr<spgemm::stored_matrix> sa = engine.store(any_a);
    const spgemm::multiply_options mo;
    const std::size_t limit = engine.estimate_multiply(*sa, *sa, mo).total();  // once, as the service's memo
    std::vector<double> times;
    for (int i = 0; i < o.warmups + o.repeats; ++i) {
      const auto t0 = clock_type::now();
      std::shared_ptr<spgemm::stored_matrix> c = engine.multiply(*sa, *sa, mo, limit);
      const double ms = ms_since(t0);
      if (i >= o.warmups) times.push_back(ms);
      if (i == 0) {
        nnz_c = c->info().nnz;
        if (o.check) reference = std::get<spgemm::csr_matrix<double>>(engine.fetch(*c));
      }
    }
    engine_ms = median(times);
  } catch (const std::exception& e) {
    out.failure(name, "engine_ms", error_text(e));
    return;
  }
  out.text(format("\n%s: n %lld, nnz(A) %lld, nnz(C) %lld, flops %.3g, A %.1f MiB, C %.1f MiB\n\n", name.c_str(),
                  static_cast<long long>(a.rows), static_cast<long long>(a.nnz()), static_cast<long long>(nnz_c),
                  stats.flops(), csr_bytes(a.rows, a.nnz(), 8) / 1048576.0,
                  csr_bytes(a.rows, nnz_c, 8) / 1048576.0));
  out.table_header();
  out.add({name, "engine_ms", engine_ms, "ms", "", ""});

  // (b) the service: A uploaded once, then products on its handle.
  try {
    sc::upload_options uo;
    uo.name = name;
    uo.chunk_bytes = static_cast<std::size_t>(o.chunk_bytes);
    sc::RemoteMatrix ra = client.upload(ref_of(a), uo);
    sc::product_options po;
    po.chunk_bytes = o.chunk_bytes;

    std::vector<double> kept, streamed, server_compute, server_queue, beside_compute;
    for (int i = 0; i < o.warmups + o.repeats; ++i) {
      const auto t0 = clock_type::now();
      sc::kept_result k = client.multiply_kept(ra.handle(), ra.handle(), po);
      const double ms = ms_since(t0);
      k.matrix.remove();  // outside the timed call
      if (i >= o.warmups) {
        kept.push_back(ms);
        server_compute.push_back(k.stats.compute_ms());
        server_queue.push_back(k.stats.queue_ms());
        beside_compute.push_back(ms - k.stats.compute_ms());
      }
    }
    std::string check_status = "ok";
    for (int i = 0; i < o.warmups + o.repeats; ++i) {
      const auto t0 = clock_type::now();
      sc::local_result r = client.multiply(ra.handle(), ra.handle(), po);
      const double ms = ms_since(t0);
      if (i >= o.warmups) streamed.push_back(ms);
      if (i == 0 && o.check) {
        const std::string why = compare(r.matrix, reference, a);
        if (!why.empty()) {
          check_status = "mismatch: " + why;
          mismatch = true;
        }
      }
    }
    const double kept_ms = median(kept), streamed_ms = median(streamed);
    out.add({name, "server_compute_ms", median(server_compute), "ms", "", ""});
    out.add({name, "server_queue_ms", median(server_queue), "ms", "", ""});
    out.add({name, "kept_rtt_ms", kept_ms, "ms", "", ""});
    out.add({name, "kept_beyond_server_ms", median(beside_compute), "ms", "", ""});
    out.add_target(name, "kept_overhead_ms", kept_ms - engine_ms, "ms", o.overhead_target_ms, true);
    out.add({name, "streamed_rtt_ms", streamed_ms, "ms", "", check_status});
    out.add({name, "streamed_overhead_ms", streamed_ms - engine_ms, "ms", "", ""});
  } catch (const std::exception& e) {
    out.failure(name, "service", error_text(e));
  }
}

// ---- (c) upload and download throughput ------------------------------------

void run_transfer(const options& o, sc::Client& client, report& out) {
  const std::string name = spgemm::matrix_name(o.transfer_matrix);
  spgemm::csr_matrix<double> a;
  try {
    a = spgemm::load_matrix(o.transfer_matrix);
  } catch (const std::exception& e) {
    out.failure(name, "load", error_text(e));
    return;
  }
  const double bytes = csr_bytes(a.rows, a.nnz(), 8);
  out.text(format("\nTransfer: %s, n %lld, nnz %lld, %.1f MB of CSR; median of %d after one warm-up\n\n",
                  name.c_str(), static_cast<long long>(a.rows), static_cast<long long>(a.nnz()), bytes / 1e6,
                  o.transfer_repeats));
  out.table_header();
  try {
    sc::upload_options uo;
    uo.name = name;
    uo.chunk_bytes = static_cast<std::size_t>(o.chunk_bytes);
    std::vector<double> up;
    sc::RemoteMatrix kept;
    for (int i = 0; i < 1 + o.transfer_repeats; ++i) {
      const auto t0 = clock_type::now();
      sc::RemoteMatrix r = client.upload(ref_of(a), uo);
      const double ms = ms_since(t0);
      if (i > 0) up.push_back(ms);
      if (!kept) kept = std::move(r);
      else r.remove();  // outside the timed call
    }
    const double up_ms = median(up);
    out.add({name, "upload_ms", up_ms, "ms", "", ""});
    out.add_target(name, "upload_gbps", bytes / (up_ms * 1e-3) / 1e9, "GB/s", o.transfer_target_gbps, false);

    std::vector<double> down;
    std::string check_status = "ok";
    for (int i = 0; i < 1 + o.transfer_repeats; ++i) {
      const auto t0 = clock_type::now();
      sc::local_result r = client.download(kept.handle(), {}, o.chunk_bytes);
      const double ms = ms_since(t0);
      if (i > 0) down.push_back(ms);
      if (i == 0 && o.check &&
          (r.matrix.row_offsets != a.row_offsets || r.matrix.col_indices != a.col_indices || r.matrix.values != a.values))
        check_status = "mismatch: the download differs from the upload";
    }
    const double down_ms = median(down);
    out.add({name, "download_ms", down_ms, "ms", "", check_status});
    out.add_target(name, "download_gbps", bytes / (down_ms * 1e-3) / 1e9, "GB/s", o.transfer_target_gbps, false);
  } catch (const std::exception& e) {
    out.failure(name, "transfer", error_text(e));
  }
}

// ---- (d) jobs per second -----------------------------------------------------

void run_jobs(const options& o, const std::string& address, report& out) {
  const std::string name = spgemm::matrix_name(o.small_matrix);
  spgemm::csr_matrix<double> a;
  try {
    a = spgemm::load_matrix(o.small_matrix);
  } catch (const std::exception& e) {
    out.failure(name, "load", error_text(e));
    return;
  }
  const spgemm::product_stats stats = spgemm::compute_product_stats(a, a);
  out.text(format("\nSmall jobs: %s·%s (n %lld, nnz %lld, flops %.3g), %d clients with a channel each, "
                  "results streamed back, %.1f s\n\n",
                  name.c_str(), name.c_str(), static_cast<long long>(a.rows), static_cast<long long>(a.nnz()),
                  stats.flops(), o.clients, o.jobs_seconds));
  out.table_header();

  struct worker_result {
    std::vector<double> latencies;
    std::int64_t errors = 0;
    std::string first_error;
    double elapsed_ms = 0;
  };
  std::vector<worker_result> results(static_cast<std::size_t>(o.clients));
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  clock_type::time_point start;
  std::vector<std::thread> threads;
  for (int t = 0; t < o.clients; ++t) {
    threads.emplace_back([&, t] {
      worker_result& w = results[static_cast<std::size_t>(t)];
      std::optional<sc::Client> client;
      sc::RemoteMatrix ra;
      try {
        sc::connection_options co;
        co.address = address;
        client.emplace(co);
        ra = client->upload(ref_of(a));
        for (int i = 0; i < 3; ++i) client->multiply(ra.handle(), ra.handle());
      } catch (const std::exception& e) {
        ++w.errors;
        w.first_error = error_text(e);
      }
      ready.fetch_add(1);
      while (!go.load()) std::this_thread::yield();
      if (!ra) return;
      const auto deadline = start + std::chrono::duration_cast<clock_type::duration>(
                                        std::chrono::duration<double>(o.jobs_seconds));
      w.latencies.reserve(16384);
      while (clock_type::now() < deadline) {
        const auto t0 = clock_type::now();
        try {
          client->multiply(ra.handle(), ra.handle());
          w.latencies.push_back(ms_since(t0));
        } catch (const std::exception& e) {
          if (w.errors++ == 0) w.first_error = error_text(e);
        }
      }
      w.elapsed_ms = ms_since(start);
    });
  }
  while (ready.load() < o.clients) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  start = clock_type::now();
  go.store(true);
  for (std::thread& t : threads) t.join();

  std::vector<double> all;
  std::int64_t errors = 0;
  std::string first_error;
  double elapsed_ms = 0;
  for (const worker_result& w : results) {
    all.insert(all.end(), w.latencies.begin(), w.latencies.end());
    if (w.errors && first_error.empty()) first_error = w.first_error;
    errors += w.errors;
    elapsed_ms = std::max(elapsed_ms, w.elapsed_ms);
  }
  std::sort(all.begin(), all.end());
  const double jobs_per_s = elapsed_ms > 0 ? static_cast<double>(all.size()) / (elapsed_ms * 1e-3) : NAN;
  const std::string label = name + " x" + std::to_string(o.clients);
  out.add_target(label, "jobs_per_s", jobs_per_s, "jobs/s", o.jobs_target, false);
  out.add({label, "jobs", static_cast<double>(all.size()), "count", "",
           errors ? format("failed: %lld errors, e.g. %s", static_cast<long long>(errors), first_error.c_str())
                  : std::string("ok")});
  out.add({label, "job_p50_ms", percentile(all, 50), "ms", "", ""});
  out.add({label, "job_p99_ms", percentile(all, 99), "ms", "", ""});
  out.add({label, "job_flops", stats.flops(), "flops", "< 1e+06", stats.flops() < 1e6 ? "ok" : "failed: not small"});
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  // As spgemmd does: reuse freed buffers rather than fault in fresh pages for
  // every streamed message (see server/main.cpp).
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  options o;
  CLI::App app{"spgemm-service-bench: service round trips against the engine, transfer throughput, jobs per second"};
  app.add_option("matrices", o.inputs, ".mtx / .mtx.gz files or generator specs (poisson3d7:32, rmat:16:16)");
  auto* server_opt = app.add_option("--server", o.server, "address of a running spgemmd (host:port)");
  auto* spawn_opt = app.add_option("--spawn", o.spawn,
                                   "path of spgemmd: start it on a free loopback port, stop it at the end");
  server_opt->excludes(spawn_opt);
  app.add_option("--backend", o.backend, "with --spawn: the server's --backend (auto or cpu)")->capture_default_str();
  app.add_option("--server-arg", o.server_args,
                 "with --spawn: one more flag for spgemmd, repeatable (--server-arg=--workers=2)")
      ->allow_extra_args(false);
  app.add_option("--server-log", o.server_log, "with --spawn: keep the server's log in this file");
  app.add_option("--repeats", o.repeats, "timed products per matrix (median reported)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--warmups", o.warmups, "untimed products before them")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--transfer-matrix", o.transfer_matrix, "matrix for upload/download throughput; none: skip")
      ->capture_default_str();
  app.add_option("--transfer-repeats", o.transfer_repeats, "timed uploads and downloads (median reported)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--chunk-bytes", o.chunk_bytes, "chunk size of uploads, downloads and streamed results; 0: defaults")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--small-matrix", o.small_matrix, "matrix of the small jobs (A*A); none: skip")
      ->capture_default_str();
  app.add_option("--clients", o.clients, "concurrent clients of the small jobs")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--jobs-seconds", o.jobs_seconds, "how long the small jobs run; 0: skip")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--overhead-target-ms", o.overhead_target_ms, "target: kept round trip - engine time")
      ->capture_default_str();
  app.add_option("--transfer-target", o.transfer_target_gbps, "target: upload/download GB/s")->capture_default_str();
  app.add_option("--jobs-target", o.jobs_target, "target: small jobs per second")->capture_default_str();
  app.add_option("--tsv", o.tsv_path, "write the rows as TSV");
  app.add_option("--markdown", o.markdown_path, "write the markdown tables");
  app.add_option("--commit", o.commit, "commit noted above the tables");
  app.add_flag("--check,!--no-check", o.check, "compare streamed results with the engine's");
  CLI11_PARSE(app, argc, argv);
  if (o.server.empty() && o.spawn.empty()) {
    std::cerr << "spgemm-service-bench: give --server ADDRESS or --spawn PATH_TO_SPGEMMD\n";
    return 2;
  }

  try {
    // Spawn first, while this process has one thread.
    std::unique_ptr<spgemm::bench::spawned_server> spawned;
    if (!o.spawn.empty()) {
      spawned = std::make_unique<spgemm::bench::spawned_server>(o.spawn, o.backend, o.server_args, o.server_log);
      o.server = spawned->address();
    }
    report out(o);

    sc::connection_options co;
    co.address = o.server;
    sc::Client client(co);
    if (!client.wait_connected(std::chrono::seconds(30)))
      throw std::runtime_error("cannot connect to spgemmd at " + o.server);
    const spgemm::v1::ServerStatus status = client.status();
    if (status.devices_size() == 0) throw std::runtime_error("spgemmd reports no devices");
    const spgemm::v1::DeviceStatus& dev = status.devices(0);

    // The engine in process runs where the server runs its products.
    std::shared_ptr<spgemm::backend> engine;
    if (dev.is_gpu()) {
      std::vector<std::shared_ptr<spgemm::backend>> backends = spgemm::open_default_backends();
      if (backends.empty() || !backends[0]->is_gpu())
        throw std::runtime_error("the server runs on " + dev.name() + " but this process sees no GPU");
      engine = backends[0];
    } else {
      engine = spgemm::make_cpu_backend();
    }
    out.set_gpu(dev.is_gpu() ? dev.description().substr(0, dev.description().find(',')) : "cpu");

    out.text("# spgemm-service-bench\n\n");
    out.text("- server: " + o.server + (spawned ? " (spawned)" : "") + ", spgemmd " + status.version() + ", " +
             std::to_string(status.devices_size()) + " device(s); first: " + dev.name() + " (" +
             dev.description() + ")\n");
    out.text("- engine in process: " + engine->name() + " (" + engine->description() + ")\n");
    out.text("- date: " + utc_now() + (o.commit.empty() ? "" : ", commit " + o.commit) + "\n");
    out.text(format("- products C = A·A, median of %d after %d warm-ups; kept: the result stays on the server "
                    "(deleted after, untimed); streamed: the result comes back as CSR chunks\n",
                    o.repeats, o.warmups));

    bool mismatch = false;
    for (const std::string& spec : o.inputs) run_matrix(o, client, *engine, spec, out, mismatch);
    engine.reset();  // the GPU memory of the in-process engine goes back
    if (!o.transfer_matrix.empty() && o.transfer_matrix != "none") run_transfer(o, client, out);
    if (!o.small_matrix.empty() && o.small_matrix != "none" && o.jobs_seconds > 0) run_jobs(o, o.server, out);

    out.text(format("\ntargets: %d met, %d missed; %d rows failed%s\n", out.passed(), out.missed(), out.failed(),
                    mismatch ? " (a result did not match the engine's)" : ""));
    return out.failed() > 0 ? 1 : 0;
  } catch (const std::exception& e) {
    std::cerr << "spgemm-service-bench: " << error_text(e) << "\n";
    return 1;
  }
}
