// spgemm-load: N clients (default 32) against a loopback spgemmd, each a loop
// of uploads, streamed and kept products, downloads and deletes of its own
// matrices, for a bounded time and count. Every result is checked: products
// against the engine's CPU product of the client's own copies (scaled error
// 1e-10, the same structure), downloads against what was stored, bit for bit.
// It reports throughput, p50/p99 per operation, errors, wrong results, and
// the server's resident memory (RSS) and device memory before and after,
// once every matrix is deleted and the server has been quiet. Exit status 0
// only with no error, no wrong result and RSS back within 10% (at least
// 4 MiB) of its baseline plus the bytes still cached. See bench/README.md.
#include <CLI/CLI.hpp>

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "spawned_server.hpp"
#include "spgemm/client/client.hpp"
#include "spgemm/csr.hpp"
#include "spgemm/generate.hpp"
#include "spgemm/reference.hpp"

namespace {

using clock_type = std::chrono::steady_clock;
namespace sc = spgemm::client;
using csr = spgemm::csr_matrix<double>;

struct options {
  std::string server, spawn, backend = "cpu", server_pid_text, metrics, tsv;
  std::vector<std::string> server_args;
  int clients = 32;
  double seconds = 60;
  int64_t max_ops = 0;  // 0: as many as the time allows
  int max_rows = 4000;
  uint64_t seed = 1;
  int kept_per_client = 6;
  double quiet_seconds = 15;  // how long to wait at the end for the RSS to come back
};

// ---- operations and their figures ---------------------------------------------

enum op { upload, multiply, kept, download, remove, op_count };
const char* const op_names[op_count] = {"upload", "multiply", "kept", "download", "delete"};

struct figures {
  std::vector<double> ms[op_count];
  int64_t errors[op_count] = {};
  int64_t wrong[op_count] = {};
  std::vector<std::string> first_problems;  // a few, for the report

  void add(const figures& o) {
    for (int k = 0; k < op_count; ++k) {
      ms[k].insert(ms[k].end(), o.ms[k].begin(), o.ms[k].end());
      errors[k] += o.errors[k];
      wrong[k] += o.wrong[k];
    }
    for (const auto& p : o.first_problems) {
      if (first_problems.size() < 10) first_problems.push_back(p);
    }
  }
  void problem(const std::string& what) {
    if (first_problems.size() < 10) first_problems.push_back(what);
  }
};

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size()))) - 1;
  return v[std::min(i, v.size() - 1)];
}

// ---- the matrices -------------------------------------------------------------

// A random generator spec of at most `max_rows` rows (square): the shapes the
// service sees, small enough that the client's CPU checks every product.
std::string random_spec(std::mt19937_64& rng, int max_rows) {
  auto in = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, std::max(lo, hi))(rng); };
  const int seed = in(1, 1 << 30);
  switch (in(0, 3)) {
    case 0: return "er:" + std::to_string(in(200, max_rows)) + ":" + std::to_string(in(2, 8)) + ":" + std::to_string(seed);
    case 1: {
      const int side = in(8, static_cast<int>(std::sqrt(static_cast<double>(max_rows))));
      return "poisson2d5:" + std::to_string(side);
    }
    case 2: {
      int scale = 8;
      while ((2 << scale) <= max_rows && scale < 12) ++scale;
      return "rmat:" + std::to_string(in(7, scale)) + ":" + std::to_string(in(2, 4)) + ":" + std::to_string(seed);
    }
    default: {
      const int n = in(200, max_rows);
      return "band:" + std::to_string(n) + ":" + std::to_string(in(4, 32)) + ":" + std::to_string(in(2, 8)) + ":" +
             std::to_string(seed);
    }
  }
}

csr from_client(sc::csr_matrix&& m) {
  csr c;
  c.rows = m.rows;
  c.cols = m.cols;
  c.row_offsets = std::move(m.row_offsets);
  c.col_indices = std::move(m.col_indices);
  c.values = std::move(m.values);
  return c;
}

// Why `got` is not the product of a and b, or "".
std::string check_product(const csr& got, const csr& a, const csr& b) {
  const csr ref = spgemm::cpu_multiply(a, b, 1);
  if (got.rows != ref.rows || got.cols != ref.cols) return "the shape differs from the CPU product's";
  if (got.row_offsets != ref.row_offsets || got.col_indices != ref.col_indices) {
    return "the structure differs from the CPU product's (nnz " + std::to_string(got.nnz()) + " vs " +
           std::to_string(ref.nnz()) + ")";
  }
  const double error = spgemm::scaled_max_error(got, ref, a, b);
  if (!(error <= 1e-10)) return "values differ from the CPU product's (scaled error " + std::to_string(error) + ")";
  return "";
}

std::string check_same(const csr& got, const csr& want) {
  if (got.rows != want.rows || got.cols != want.cols || got.row_offsets != want.row_offsets ||
      got.col_indices != want.col_indices || got.values != want.values) {
    return "the download differs from what was stored";
  }
  return "";
}

// One client's matrices on the server, with its own copies.
struct held {
  sc::RemoteMatrix remote;
  csr local;
  bool product = false;  // a kept result: downloaded and deleted, never an operand (products of products grow dense)
};

// ---- one client -----------------------------------------------------------------

class load_client {
 public:
  load_client(const options& o, int id, std::atomic<int64_t>& ops_left, clock_type::time_point end)
      : o_(o), rng_(o.seed * 1000003 + static_cast<uint64_t>(id)), ops_left_(ops_left), end_(end),
        client_(connection(o)) {}

  figures run() {
    while (clock_type::now() < end_ && ops_left_.fetch_sub(1) > 0) step();
    // Its matrices go before it ends.
    for (held& h : held_) timed(remove, [&] { h.remote.remove(); return std::string(); });
    held_.clear();
    return f_;
  }

 private:
  static sc::connection_options connection(const options& o) {
    sc::connection_options c;
    c.address = o.server;
    c.deadline = std::chrono::minutes(5);
    return c;
  }

  // Runs `body` as an operation of kind `k`: its time, an error (a thrown
  // Error) or a wrong result (a non-empty answer).
  template <typename Body>
  void timed(op k, Body&& body) {
    const auto t0 = clock_type::now();
    try {
      const std::string wrong = body();
      f_.ms[k].push_back(std::chrono::duration<double, std::milli>(clock_type::now() - t0).count());
      if (!wrong.empty()) {
        ++f_.wrong[k];
        f_.problem(std::string(op_names[k]) + ": " + wrong);
      }
    } catch (const std::exception& e) {
      ++f_.errors[k];
      f_.problem(std::string(op_names[k]) + ": " + e.what());
    }
  }

  std::size_t pick() { return std::uniform_int_distribution<std::size_t>(0, held_.size() - 1)(rng_); }

  // An uploaded matrix, for the left of a product; none where there is none.
  std::optional<std::size_t> pick_operand() {
    std::vector<std::size_t> uploaded;
    for (std::size_t i = 0; i < held_.size(); ++i) {
      if (!held_[i].product) uploaded.push_back(i);
    }
    if (uploaded.empty()) return std::nullopt;
    return uploaded[std::uniform_int_distribution<std::size_t>(0, uploaded.size() - 1)(rng_)];
  }

  // The right operand for `a` on the left: an uploaded matrix of its size (`a` itself at least).
  std::size_t partner(std::size_t a) {
    std::vector<std::size_t> fits;
    for (std::size_t i = 0; i < held_.size(); ++i) {
      if (!held_[i].product && held_[i].local.rows == held_[a].local.cols) fits.push_back(i);
    }
    return fits[std::uniform_int_distribution<std::size_t>(0, fits.size() - 1)(rng_)];
  }

  void step() {
    const double r = std::uniform_real_distribution<double>(0, 1)(rng_);
    const bool full = static_cast<int>(held_.size()) >= o_.kept_per_client;
    const std::optional<std::size_t> operand = pick_operand();
    if (!operand && full) {
      const std::size_t a = pick();
      timed(remove, [&] {
        held_[a].remote.remove();
        held_.erase(held_.begin() + static_cast<std::ptrdiff_t>(a));
        return std::string();
      });
    } else if (!operand || (!full && r < 0.2)) {
      timed(upload, [&] {
        held h;
        h.local = spgemm::generate(random_spec(rng_, o_.max_rows));
        h.remote = client_.upload(sc::matrix_ref::of(h.local.rows, h.local.cols, h.local.row_offsets.data(),
                                                     h.local.col_indices.data(), h.local.values.data()));
        held_.push_back(std::move(h));
        return std::string();
      });
    } else if (r < 0.5) {
      const std::size_t a = *operand, b = partner(a);
      timed(multiply, [&] {
        sc::local_result c = client_.multiply(held_[a].remote.handle(), held_[b].remote.handle());
        return check_product(from_client(std::move(c.matrix)), held_[a].local, held_[b].local);
      });
    } else if (r < 0.7 && !full) {
      // Kept on the server, then downloaded and checked: the client's copy is what came back.
      const std::size_t a = *operand, b = partner(a);
      std::optional<held> product;
      timed(kept, [&] {
        sc::kept_result k = client_.multiply_kept(held_[a].remote.handle(), held_[b].remote.handle());
        product.emplace();
        product->remote = std::move(k.matrix);
        product->product = true;
        return std::string();
      });
      if (!product) return;
      timed(download, [&] {
        product->local = from_client(std::move(client_.download(product->remote.handle()).matrix));
        const std::string wrong = check_product(product->local, held_[a].local, held_[b].local);
        if (wrong.empty()) held_.push_back(std::move(*product));
        return wrong;
      });
    } else if (r < 0.85) {
      const std::size_t a = pick();
      timed(download, [&] {
        return check_same(from_client(std::move(client_.download(held_[a].remote.handle()).matrix)), held_[a].local);
      });
    } else {
      const std::size_t a = pick();
      timed(remove, [&] {
        held_[a].remote.remove();
        held_.erase(held_.begin() + static_cast<std::ptrdiff_t>(a));
        return std::string();
      });
    }
  }

  const options& o_;
  std::mt19937_64 rng_;
  std::atomic<int64_t>& ops_left_;
  clock_type::time_point end_;
  sc::Client client_;
  std::vector<held> held_;
  figures f_;
};

// ---- the server's memory ----------------------------------------------------------

struct memory {
  int64_t rss = -1;              // bytes; -1 unknown (no pid)
  int64_t cached = 0, host = 0;  // the cache's bytes on the devices, in host memory
  int64_t device_in_use = -1;    // the backends' allocated bytes (metrics), -1 unknown
  int64_t device_pooled = -1;    // freed bytes their pools hold for reuse (metrics), -1 unknown
  int64_t matrices = 0;
};

int64_t rss_of(pid_t pid) {
  if (pid <= 0) return -1;
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  }
  return -1;
}

// GET /metrics from "host:port" (numeric, loopback): the page, or "".
std::string get_metrics(const std::string& address) {
  const auto colon = address.rfind(':');
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(address.substr(0, colon).c_str(), address.substr(colon + 1).c_str(), &hints, &res) != 0) return "";
  const int fd = socket(res->ai_family, SOCK_STREAM, 0);
  std::string text;
  if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) == 0) {
    const std::string req = "GET /metrics HTTP/1.0\r\n\r\n";
    if (send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
      char buf[4096];
      for (ssize_t n; (n = recv(fd, buf, sizeof buf, 0)) > 0;) text.append(buf, static_cast<std::size_t>(n));
    }
  }
  if (fd >= 0) close(fd);
  freeaddrinfo(res);
  return text;
}

// The sum of a gauge's series in the server's metrics, or -1.
int64_t scrape_sum(const std::string& address, const std::string& name) {
  if (address.empty()) return -1;
  int64_t sum = -1;
  std::istringstream in(get_metrics(address));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name, 0) == 0 && line.size() > name.size() && (line[name.size()] == '{' || line[name.size()] == ' ')) {
      sum = std::max<int64_t>(sum, 0) + static_cast<int64_t>(std::stod(line.substr(line.rfind(' ') + 1)));
    }
  }
  return sum;
}

memory memory_of(sc::Client& client, pid_t pid, const std::string& metrics) {
  memory m;
  m.rss = rss_of(pid);
  const spgemm::v1::ServerStatus s = client.status();
  for (const auto& d : s.devices()) m.cached += d.cached_bytes();
  m.host = s.host_cached_bytes();
  m.matrices = s.matrices();
  m.device_in_use = scrape_sum(metrics, "spgemmd_device_memory_in_use_bytes");
  m.device_pooled = scrape_sum(metrics, "spgemmd_device_memory_cached_bytes");
  return m;
}

std::string mib(int64_t bytes) {
  if (bytes < 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

bool loopback(const std::string& address) {
  const std::string host = address.substr(0, address.rfind(':'));
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "[::1]" || host == "ipv6:[::1]";
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  CLI::App app{"spgemm-load: many clients mixing uploads, kept and streamed products, downloads and deletes "
               "against a loopback spgemmd, every result checked against the CPU product (bench/README.md)"};
  auto* server_opt = app.add_option("--server", o.server, "a running spgemmd on loopback, 127.0.0.1:PORT");
  auto* spawn_opt = app.add_option("--spawn", o.spawn, "start this spgemmd on a free loopback port instead");
  server_opt->excludes(spawn_opt);
  app.add_option("--backend", o.backend, "with --spawn: the server's --backend (cpu or auto)")->capture_default_str();
  app.add_option("--server-arg", o.server_args, "with --spawn: one more flag for spgemmd, repeatable");
  app.add_option("--server-pid", o.server_pid_text, "with --server: its pid, to read its RSS");
  app.add_option("--metrics", o.metrics, "with --server: its metrics address, to read its device memory");
  app.add_option("--clients", o.clients, "clients at once")->capture_default_str()->check(CLI::Range(1, 1024));
  app.add_option("--seconds", o.seconds, "how long the clients run")->capture_default_str()->check(CLI::Range(0.1, 86400.0));
  app.add_option("--ops", o.max_ops, "operations in all at most (0: as the time allows)")->capture_default_str();
  app.add_option("--max-rows", o.max_rows, "rows of a generated matrix at most")->capture_default_str()
      ->check(CLI::Range(16, 1000000));
  app.add_option("--seed", o.seed, "seed of the clients' choices and matrices")->capture_default_str();
  app.add_option("--quiet-seconds", o.quiet_seconds, "at the end, how long to wait for the RSS to come back")
      ->capture_default_str();
  app.add_option("--tsv", o.tsv, "also write the figures here (operation, count, errors, wrong, p50_ms, p99_ms)");
  CLI11_PARSE(app, argc, argv);
  if (o.server.empty() && o.spawn.empty()) {
    std::cerr << "spgemm-load: give --server 127.0.0.1:PORT or --spawn PATH_TO_SPGEMMD\n";
    return 2;
  }
  if (!o.server.empty() && !loopback(o.server)) {
    std::cerr << "spgemm-load: " << o.server << " is not a loopback address; the load runs against a local server only\n";
    return 2;
  }

  try {
    std::unique_ptr<spgemm::bench::spawned_server> spawned;
    pid_t pid = o.server_pid_text.empty() ? -1 : static_cast<pid_t>(std::stol(o.server_pid_text));
    if (!o.spawn.empty()) {
      spawned = std::make_unique<spgemm::bench::spawned_server>(o.spawn, o.backend, o.server_args, "", true);
      o.server = spawned->address();
      o.metrics = spawned->metrics_address();
      pid = spawned->pid();
    }
    sc::connection_options c;
    c.address = o.server;
    c.deadline = std::chrono::seconds(60);
    sc::Client probe(c);
    const memory fresh = memory_of(probe, pid, o.metrics);

    // The clients run together in `threads`, each with its own matrices,
    // until `end` or until `ops_left` runs out; their figures in `into`.
    auto run_clients = [&](clock_type::time_point end, int64_t ops, std::vector<figures>& into) {
      std::atomic<int64_t> ops_left{ops};
      into.assign(static_cast<std::size_t>(o.clients), figures());
      std::vector<std::thread> threads;
      for (int i = 0; i < o.clients; ++i) {
        threads.emplace_back([&, i] {
          try {
            load_client client(o, i, ops_left, end);
            into[static_cast<std::size_t>(i)] = client.run();
          } catch (const std::exception& e) {
            into[static_cast<std::size_t>(i)].errors[upload] += 1;
            into[static_cast<std::size_t>(i)].problem(std::string("client: ") + e.what());
          }
        });
      }
      for (auto& t : threads) t.join();
    };
    // A short round first, so that the baseline is a server that has served
    // (its threads started), then a moment of quiet for its memory to go back.
    std::vector<figures> warm_up;
    run_clients(clock_type::now() + std::chrono::seconds(10), 4 * static_cast<int64_t>(o.clients), warm_up);
    std::this_thread::sleep_for(std::chrono::seconds(3));
    const memory before = memory_of(probe, pid, o.metrics);

    const auto started = clock_type::now();
    const auto end = started + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(o.seconds));
    std::vector<figures> per_client;
    std::atomic<int64_t> peak_rss{before.rss};
    std::atomic<bool> done{false};
    std::thread sampler([&] {
      while (!done) {
        peak_rss = std::max<int64_t>(peak_rss, rss_of(pid));
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
    });
    run_clients(end, o.max_ops > 0 ? o.max_ops : std::numeric_limits<int64_t>::max(), per_client);
    const double elapsed = std::chrono::duration<double>(clock_type::now() - started).count();
    done = true;
    sampler.join();
    figures all, warming;
    for (const auto& f : per_client) all.add(f);
    for (const auto& f : warm_up) warming.add(f);

    // Every matrix deleted: the server's memory once it has been quiet a while.
    memory after = memory_of(probe, pid, o.metrics);
    // 10% of the baseline, at least 4 MiB: on a small baseline (about 20 MiB
    // on the CPU backend) the pages the allocator keeps after a load vary by
    // more than 10% from run to run (23.6 against 23.5 MiB, once in CI).
    const auto slack = std::max<int64_t>(before.rss / 10, int64_t{4} << 20);
    const auto target = [&](const memory& m) { return before.rss + slack + m.cached + m.host; };
    const auto quiet_end = clock_type::now() + std::chrono::duration_cast<clock_type::duration>(
                                                   std::chrono::duration<double>(o.quiet_seconds));
    while (after.rss > target(after) && clock_type::now() < quiet_end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      after = memory_of(probe, pid, o.metrics);
    }

    int64_t ops = 0, errors = 0, wrong = 0;
    for (int k = 0; k < op_count; ++k) {  // the warm-up's operations count against the result, not in the table
      errors += warming.errors[k];
      wrong += warming.wrong[k];
    }
    for (const auto& p : warming.first_problems) all.problem("(warm-up) " + p);
    std::printf("spgemm-load: %d clients for %.1f s against %s%s\n", o.clients, elapsed, o.server.c_str(),
                spawned ? (" (spawned, --backend=" + o.backend + ")").c_str() : "");
    std::printf("%-10s %9s %7s %6s %9s %9s\n", "operation", "count", "errors", "wrong", "p50 ms", "p99 ms");
    std::ofstream tsv;
    if (!o.tsv.empty()) {
      tsv.open(o.tsv);
      tsv << "operation\tcount\terrors\twrong\tp50_ms\tp99_ms\n";
    }
    for (int k = 0; k < op_count; ++k) {
      const auto count = static_cast<int64_t>(all.ms[k].size()) + all.errors[k];
      ops += count;
      errors += all.errors[k];
      wrong += all.wrong[k];
      const double p50 = percentile(all.ms[k], 0.5), p99 = percentile(all.ms[k], 0.99);
      std::printf("%-10s %9lld %7lld %6lld %9.2f %9.2f\n", op_names[k], static_cast<long long>(count),
                  static_cast<long long>(all.errors[k]), static_cast<long long>(all.wrong[k]), p50, p99);
      if (tsv.is_open()) {
        tsv << op_names[k] << '\t' << count << '\t' << all.errors[k] << '\t' << all.wrong[k] << '\t' << p50 << '\t'
            << p99 << '\n';
      }
    }
    std::printf("%lld operations, %.1f per second; %lld errors, %lld wrong results (the warm-up's included)\n",
                static_cast<long long>(ops), static_cast<double>(ops) / elapsed, static_cast<long long>(errors),
                static_cast<long long>(wrong));
    for (const auto& p : all.first_problems) std::printf("  problem: %s\n", p.c_str());
    std::printf("server RSS: at start %s, before (after a warm-up round and 3 s quiet) %s, peak %s, after %s "
                "(target at most %s: before + max(10%%, 4 MiB) + cached)\n",
                mib(fresh.rss).c_str(), mib(before.rss).c_str(), mib(peak_rss).c_str(), mib(after.rss).c_str(),
                mib(after.rss < 0 ? -1 : target(after)).c_str());
    std::printf("server cache: %lld matrices, %s on devices, %s on the host before; %lld, %s, %s after\n",
                static_cast<long long>(before.matrices), mib(before.cached).c_str(), mib(before.host).c_str(),
                static_cast<long long>(after.matrices), mib(after.cached).c_str(), mib(after.host).c_str());
    std::printf("backend memory in use: before %s, after %s; freed and pooled: before %s, after %s\n",
                mib(before.device_in_use).c_str(), mib(after.device_in_use).c_str(),
                mib(before.device_pooled).c_str(), mib(after.device_pooled).c_str());
    if (tsv.is_open()) {
      tsv << "rss_before_bytes\t" << before.rss << "\nrss_peak_bytes\t" << peak_rss << "\nrss_after_bytes\t"
          << after.rss << "\ndevice_in_use_before_bytes\t" << before.device_in_use << "\ndevice_in_use_after_bytes\t"
          << after.device_in_use << "\ndevice_pooled_before_bytes\t" << before.device_pooled
          << "\ndevice_pooled_after_bytes\t" << after.device_pooled << "\n";
    }
    const bool memory_back = after.rss < 0 || after.rss <= target(after);
    if (!memory_back) std::printf("the server's RSS did not come back within %.0f s\n", o.quiet_seconds);
    return errors == 0 && wrong == 0 && ops > 0 && memory_back ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "spgemm-load: " << e.what() << "\n";
    return 1;
  }
}
